"""A filter as Cain compiles it: input channels, output kernels, and their approximation as goals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from cain.model.dreg import Encoding
from cain.model.goal import Goal
from cain.model.isa import DEFAULT_REGISTERS
from cain.model.superpixel import Superpixel


@dataclass(frozen=True)
class Kernel:
    """One output kernel: its weights, the register it must end in, and its approximation."""

    name: str
    register: str
    weights: tuple[tuple[tuple[Fraction, ...], ...], ...]
    """The weights as written: one matrix per input channel, row 0 to the north."""
    goal: Goal
    """The weights times 2^depth, rounded to integers: what the program computes (times 2^-depth)."""
    error: Fraction
    """Sum of absolute differences between the weights and goal / 2^depth."""

    @staticmethod
    def exact(name: str, register: str, goal: Goal, depth: int, channels: int = 1) -> Kernel:
        """The kernel whose weights are exactly `goal / 2^depth` (error 0)."""
        weights = tuple(
            tuple(tuple(Fraction(c, 2**depth) for c in row) for row in matrix)
            for matrix in goal.matrices(channels)
        )
        return Kernel(name, register, weights, goal, Fraction(0))


@dataclass(frozen=True)
class Filter:
    """What the front end hands to the search: the paper's final goals and initial goals."""

    name: str
    inputs: tuple[tuple[str, str], ...]
    """(channel name, register it arrives in), in channel order: channel z is atom coordinate z."""
    kernels: tuple[Kernel, ...]
    depth: int
    registers: tuple[str, ...] = DEFAULT_REGISTERS
    instruction_set: str = "all"
    encoding: Encoding | None = None
    """For the digital plane: how values are held in DREGs (None: the analogue plane)."""
    superpixel: Superpixel | None = None
    """For superpixel mode: the tile layout and the banks of inputs and outputs (None: another plane)."""

    @staticmethod
    def of_goals(
        name: str,
        goals: Sequence[Goal],
        depth: int,
        inputs: Sequence[str] = ("A",),
        outputs: Sequence[str] | None = None,
        registers: Sequence[str] = DEFAULT_REGISTERS,
    ) -> Filter:
        """A filter computing `goals` exactly: input channel z arrives in `inputs[z]`, kernel k ends in
        `outputs[k]` (default: the register file in order)."""
        outputs = registers[: len(goals)] if outputs is None else outputs
        channels = len(inputs)
        return Filter(
            name,
            tuple((f"in{z}", r) for z, r in enumerate(inputs)),
            tuple(
                Kernel.exact(f"out{k}", r, g, depth, channels)
                for k, (g, r) in enumerate(zip(goals, outputs, strict=True))
            ),
            depth,
            tuple(registers),
        )

    def initial_goals(self) -> list[Goal]:
        """One identity goal per input channel: 2^depth atoms at the origin."""
        return [Goal.identity(2**self.depth, z) for z in range(len(self.inputs))]

    def final_goals(self) -> list[Goal]:
        return [k.goal for k in self.kernels]
