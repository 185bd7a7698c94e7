"""Hand-written SCAMP-5 macro programs (reference/scamp5.md) used by the back-end tests."""

from __future__ import annotations

from fractions import Fraction

from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal
from cain.model.program import Instr, Program

GAUSS3 = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
GAUSS3_GOAL = Goal.from_matrices([GAUSS3])
HALVINGS = [Instr("div", (v + 1,), (v,)) for v in range(4)]
"""%0 (16 atoms) halved four times into %4 (one atom)."""


def gauss3_basic() -> Program:
    """1/16 [1 2 1; 2 4 2; 1 2 1] from A holding 16 atoms: four halvings, then [1 2 1] each way."""
    return Program(
        name="gauss3",
        inputs=[(0, "A")],
        instrs=[
            *HALVINGS,
            Instr("movx", (5,), (4,), ("south",)),
            Instr("add", (6,), (4, 5)),
            Instr("movx", (7,), (6,), ("north",)),
            Instr("add", (8,), (6, 7)),
            Instr("movx", (9,), (8,), ("east",)),
            Instr("add", (10,), (8, 9)),
            Instr("movx", (11,), (10,), ("west",)),
            Instr("add", (12,), (10, 11)),
        ],
        outputs=[(12, "A")],
    )


def gauss3_filter(register: str = "A") -> Filter:
    weights = (tuple(tuple(Fraction(w, 16) for w in row) for row in GAUSS3),)
    return Filter(
        name="gauss3",
        inputs=(("image", "A"),),
        kernels=(Kernel("out", register, weights, GAUSS3_GOAL, Fraction(0)),),
        depth=4,
    )


def gauss3_all() -> Program:
    """The same kernel with the `all` set's three-operand and shifted adds, ending in register B."""
    return Program(
        name="gauss3",
        inputs=[(0, "A")],
        instrs=[
            *HALVINGS,  # one atom
            Instr("movx", (5,), (4,), ("north",)),
            Instr("movx", (6,), (4,), ("south",)),
            Instr("add3", (7,), (4, 5, 6)),  # [1 1 1] down the column
            Instr("add", (8,), (7, 4)),  # [1 2 1] down the column
            Instr("movx", (9,), (8,), ("east",)),  # that column at x = +1
            Instr("addx", (10,), (8, 9), ("west",)),  # columns at x = -1 and 0
            Instr("add3", (11,), (10, 8, 9)),
        ],
        outputs=[(11, "B")],
    )
