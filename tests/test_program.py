"""Symbolic execution of macro programs, driven by the instruction table."""

import pytest

from cain.goal import Goal
from cain.program import Instr, Program


def gauss_program() -> Program:
    """A 3x3 Gaussian (times 16) from the identity, as in the paper's figure 2, in two dimensions."""
    return Program(
        name="gauss",
        inputs=[(0, "A")],
        instrs=[
            Instr("movx", (1,), (0,), ("south",)),
            Instr("add", (2,), (0, 1)),
            Instr("movx", (3,), (2,), ("north",)),
            Instr("add", (4,), (2, 3)),  # [1 2 1] vertically
            Instr("movx", (5,), (4,), ("east",)),
            Instr("add", (6,), (4, 5)),
            Instr("movx", (7,), (6,), ("west",)),
            Instr("add", (8,), (6, 7)),
        ],
        outputs=[(8, "A")],
    )


def test_gaussian_program_computes_the_kernel():
    p = gauss_program()
    (out,) = p.output_goals([Goal.identity(1)])
    assert out == Goal.from_matrices([[[1, 2, 1], [2, 4, 2], [1, 2, 1]]])
    assert p.macros == 8 and p.icws == 16


def test_division_of_an_odd_goal_is_an_error():
    p = Program("d", [(0, "A")], [Instr("div", (1,), (0,))], [(1, "B")])
    with pytest.raises(ValueError, match="odd"):
        p.evaluate([Goal.identity(1)])
    (half,) = p.output_goals([Goal.identity(4)])
    assert half == Goal.identity(2)
    assert p.icws == 5


def test_three_operand_add_and_shifted_subtract():
    x = Goal.identity(1)
    p = Program(
        "s",
        [(0, "A")],
        [Instr("add3", (1,), (0, 0, 0)), Instr("subx", (2,), (1, 0), ("east",))],
        [(2, "B")],
    )
    (out,) = p.output_goals([x])
    assert out == Goal({(1, 0, 0): 3, (0, 0, 0): -1})
