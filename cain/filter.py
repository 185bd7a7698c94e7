"""A filter as Cain compiles it: input channels, output kernels, and their approximation as goals."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from cain.goal import Goal


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


@dataclass(frozen=True)
class Filter:
    """What the front end hands to the search: the paper's final goals and initial goals."""

    name: str
    inputs: tuple[tuple[str, str], ...]
    """(channel name, register it arrives in), in channel order: channel z is atom coordinate z."""
    kernels: tuple[Kernel, ...]
    depth: int
    registers: tuple[str, ...] = ("A", "B", "C", "D", "E", "F")
    instruction_set: str = "all"

    def initial_goals(self) -> list[Goal]:
        """One identity goal per input channel: 2^depth atoms at the origin."""
        return [Goal.identity(2**self.depth, z) for z in range(len(self.inputs))]

    def final_goals(self) -> list[Goal]:
        return [k.goal for k in self.kernels]
