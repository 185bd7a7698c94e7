"""A program of SCAMP-5 macros on SSA values, in plain Python.

This is the hand-over format between the search (which produces it), the simulator and verifier
(which execute it), regalloc (which assigns registers) and the scamp5 dialect (which it converts to and
from). Values are integers; input values are defined by the program's inputs, every other value by
exactly one instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cain.model.goal import Goal
from cain.model.isa import MACROS


@dataclass(frozen=True)
class Instr:
    """One macro: `results = macro(operands, directions)`."""

    macro: str
    results: tuple[int, ...]
    operands: tuple[int, ...] = ()
    directions: tuple[str, ...] = ()
    scratch: tuple[str, ...] = ()
    """Scratch registers, once allocated (div, div4, diva)."""


@dataclass
class Program:
    """A straight-line SCAMP-5 kernel: inputs arrive in registers, outputs must end in registers."""

    name: str
    inputs: list[tuple[int, str]]
    """(value, register) per input channel, in channel order."""
    instrs: list[Instr]
    outputs: list[tuple[int, str]]
    """(value, register) per output kernel, in declaration order."""
    registers: dict[int, str] = field(default_factory=dict)
    """The register of every value, once allocated (empty before regalloc)."""

    @property
    def macros(self) -> int:
        """Length in macros: the paper's cost."""
        return len(self.instrs)

    @property
    def icws(self) -> int:
        """Length in bus micro-operations: the cost on the device."""
        return sum(MACROS[i.macro].icws for i in self.instrs)

    def last_uses(self) -> dict[int, int]:
        """The index of the last instruction that reads each value, `len(instrs)` for an output: the one
        liveness table of a program (values never read are absent)."""
        last: dict[int, int] = {}
        for i, instr in enumerate(self.instrs):
            for o in instr.operands:
                last[o] = i
        for v, _ in self.outputs:
            last[v] = len(self.instrs)
        return last

    def evaluate(self, input_goals: list[Goal]) -> dict[int, Goal]:
        """The goal every value holds, given the goal of each input channel (symbolic execution)."""
        values = {v: g for (v, _), g in zip(self.inputs, input_goals, strict=True)}
        for instr in self.instrs:
            goal = MACROS[instr.macro].apply(tuple(values[o] for o in instr.operands), instr.directions)
            for r in instr.results:
                values[r] = goal
        return values

    def output_goals(self, input_goals: list[Goal]) -> list[Goal]:
        values = self.evaluate(input_goals)
        return [values[v] for v, _ in self.outputs]
