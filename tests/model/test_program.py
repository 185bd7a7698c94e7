"""Symbolic execution of macro programs, driven by the instruction table."""

import pytest
from handwritten import GAUSS3_GOAL, gauss3_basic

from cain.model.goal import Goal
from cain.model.program import Instr, Program


def test_gaussian_program_computes_the_kernel():
    p = gauss3_basic()
    (out,) = p.output_goals([Goal.identity(16)])
    assert out == GAUSS3_GOAL
    assert p.macros == 12 and p.icws == 4 * 5 + 8 * 2


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
