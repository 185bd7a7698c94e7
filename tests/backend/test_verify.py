"""The verifier accepts correct programs and rejects wrong kernels and illegal register use."""

import pytest
from handwritten import GAUSS3_GOAL, gauss3_all, gauss3_basic, gauss3_filter

from cain.backend.regalloc import allocate
from cain.backend.verify import VerificationError, verify_bus, verify_for_filter, verify_program
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import MicroOp
from cain.model.program import Instr, Program

ONE = Goal.identity(1)
NORTH = ONE.shifted((0, 1))


def test_correct_programs_pass_at_both_levels():
    report = verify_for_filter(gauss3_basic(), gauss3_filter())
    assert report.ok and len(report.checks) == 2 and report.max_error == 0
    report = verify_for_filter(allocate(gauss3_all()), gauss3_filter("B"))
    assert len(report.checks) == 3 and "register-level" in report.checks[1]
    assert "verified" in str(report)


def test_a_wrong_kernel_is_rejected():
    program = gauss3_basic()
    program.instrs[-2] = Instr("movx", (11,), (10,), ("east",))  # shifts the wrong way
    with pytest.raises(VerificationError) as e:
        verify_for_filter(program, gauss3_filter())
    assert "output 0 (%12) holds" in str(e.value) and "but its goal is [[1, 2, 1]" in str(e.value)


def test_an_odd_division_is_rejected():
    program = Program("odd", [(0, "A")], [Instr("div", (1,), (0,))], [(1, "B")])
    with pytest.raises(VerificationError, match="dividing a goal by 2 leaves a fraction"):
        verify_program(program, [ONE], [ONE], 0)


def test_illegal_register_use_is_rejected():
    """sub(B, A, B) writes B while the bus still reads it."""
    program = Program(
        "bad",
        [(0, "A")],
        [Instr("movx", (1,), (0,), ("north",)), Instr("sub", (2,), (0, 1))],
        [(2, "B")],
        {0: "A", 1: "B", 2: "B"},
    )
    with pytest.raises(VerificationError) as e:
        verify_program(program, [ONE], [ONE - NORTH], 0)
    assert "instruction 1 sub(B, A, B)" in str(e.value) and "never also a source" in str(e.value)


def test_a_clobbered_value_is_found_where_it_is_lost():
    program = Program(
        "clobber",
        [(0, "A")],
        [Instr("movx", (1,), (0,), ("north",)), Instr("add", (2,), (0, 1)), Instr("neg", (3,), (0,))],
        [(3, "C"), (2, "A")],
        {0: "A", 1: "B", 2: "A", 3: "C"},  # %2 overwrites A, but %0 is still read afterwards
    )
    with pytest.raises(
        VerificationError,
        match=r"after instruction 1 `%2 = add %0, %1` \(add\(A, A, B\)\), register A should hold %0",
    ):
        verify_program(program, [ONE], [-ONE, ONE + NORTH], 0)


def test_reading_an_unset_register_is_rejected():
    program = Program("unset", [(0, "A")], [Instr("add", (1,), (0, 0))], [(1, "B")], {0: "A", 1: "B"})
    program.instrs[0] = Instr("mov", (1,), (0,))
    program.registers = {0: "A", 1: "B"}
    verify_program(program, [ONE], [ONE], 0)
    program.instrs[0] = Instr("div", (1,), (0,), (), ("C",))
    program.registers = {0: "C", 1: "B"}  # the input is taken from C, but it arrives in A
    program.inputs = [(0, "A")]
    with pytest.raises(VerificationError, match="input %0 is pinned to register A but allocated to C"):
        verify_program(program, [Goal.identity(2)], [ONE], 1)


def test_wrong_number_of_outputs():
    with pytest.raises(VerificationError, match="1 output"):
        verify_program(gauss3_basic(), [Goal.identity(16)], [GAUSS3_GOAL, GAUSS3_GOAL], 4)


def test_bus_programs():
    # movx(B, A, north) as micro-ops, then a wrong one
    good = [MicroOp("bus", ("XS",), ("A",)), MicroOp("bus", ("B",), ("NEWS",))]

    def moved(goal: Goal) -> Filter:
        return Filter.of_goals("m", [goal], 0, inputs=["A"], outputs=["B"])

    assert verify_bus(good, moved(NORTH)).ok
    with pytest.raises(VerificationError, match="holds"):
        verify_bus(good, moved(ONE.shifted((0, -1))))
    with pytest.raises(VerificationError, match="at most once"):
        verify_bus([MicroOp("bus", ("B",), ("A", "A"))], moved(ONE.scaled(-2)))


def test_numeric_comparison_ignores_the_edges_only():
    import numpy as np

    from cain.backend.verify import VerificationReport, _compare_numeric

    expected = np.zeros((1, 8, 8))
    edge = expected.copy()
    edge[0, 0, :] = 5.0
    report = VerificationReport("k", 0, 0)
    _compare_numeric(report, "numeric", [edge], [expected], ["A"], margin=1)
    assert report.ok and report.max_error == 0
    inside = expected.copy()
    inside[0, 3, 4] = 0.5
    _compare_numeric(report, "numeric", [inside], [expected], ["A"], margin=1)
    assert report.problems == ["numeric: output 0 (A) differs from the direct correlation by up to 0.5"]
    assert report.max_error == 0.5
