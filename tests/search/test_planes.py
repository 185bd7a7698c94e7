"""The bit-plane plan of a digital filter: it computes the kernels on the split inputs, its program is
verified bit for bit, and it fits the device where the searched plans do not (a 4-bit 3x3 box)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cain
from cain.backend import digital, dreg_alloc
from cain.model.dreg import DATA_DREGS, FLAGS, Encoding, Word
from cain.model.goal import Goal
from cain.search.constructive import planes
from cain.search.digital import integer_filter, plan_filter, plane_program

BOX4 = "option mode = digital\noption input_bits = 4\noutput B -> A = [1 1 1; 1 1 1; 1 1 1]"


def kernel_text(weights: list[list[list[int]]], bits: int, width: int | None) -> str:
    lines = ["option mode = digital", f"option input_bits = {bits}"]
    if width is not None:
        lines.append(f"option bits = {width}")
    for k, matrix in enumerate(weights):
        rows = "; ".join(" ".join(map(str, row)) for row in matrix)
        lines.append(f"output K{k} -> {'AB'[k]} = [{rows}]")
    return "\n".join(lines)


matrices = st.lists(
    st.lists(st.lists(st.integers(-3, 3), min_size=3, max_size=3), min_size=3, max_size=3),
    min_size=1,
    max_size=2,
).filter(lambda ks: all(any(any(row) for row in k) for k in ks))


@settings(max_examples=25, deadline=None)
@given(matrices, st.integers(1, 3), st.sampled_from([None, 3]))
def test_the_plane_plan_computes_the_kernels_on_the_planes(weights, bits, width):
    filt = cain.read_filters(kernel_text(weights, bits, width))[0]
    split = plan_filter(filt, filt.encoding, planes=True)
    assert split.encoding.input_bits == (1,) * bits
    for goal, kernel in zip(split.final_goals(), filt.final_goals(), strict=True):
        assert len(goal) == len(kernel) * bits  # bit k weighs 2^k times the kernel's weight
        assert all(goal.count((x, y, k)) == c << k for (x, y, _), c in kernel for k in range(bits))
    for origin_last, top_first in itertools.product((False, True), repeat=2):
        plan = planes.plane_plan(split, origin_last, top_first)
        inputs = [Goal.identity(1, p) for p in range(bits)]
        assert plan.output_goals(inputs) == split.final_goals()


def wide_file(weights: list[list[list[int]]], bits: int, width: int | None):
    """The filter of `kernel_text`, and its encoding on a hypothetical file of 55 data DREGs (every plan fits)."""
    filt = cain.read_filters(kernel_text(weights, bits, width))[0]
    return filt, Encoding(filt.encoding.input_bits, width, DATA_DREGS + tuple(f"R{i}" for i in range(13, 60)))


@settings(max_examples=5, deadline=None)
@given(matrices, st.integers(1, 3), st.sampled_from([None, 3]))
def test_plane_programs_are_exact_on_a_wide_dreg_file(weights, bits, width):
    filt, wide = wide_file(weights, bits, width)
    program = plane_program(filt, wide)
    assert program is not None and program.planes
    digital.verify_digital(program, seed=3)
    assert [c for c, _ in program.inputs] == [c for c, _ in filt.inputs]
    assert [len(regs) for _, regs in program.inputs] == [bits]


@pytest.mark.parametrize("n", [*range(-40, 41), 1000, -1023])
def test_signed_digits_sum_to_the_number_and_never_touch(n):
    digits = planes.signed_digits(n)
    assert sum(sign << power for sign, power in digits) == n
    powers = [power for _, power in digits]
    assert all(b - a >= 2 for a, b in itertools.pairwise(powers))


def test_the_walk_visits_every_offset_once_and_may_end_at_the_origin():
    offsets = {(x, y) for x in (-1, 0, 1) for y in (-1, 0, 1)}
    order = planes.walk(offsets)
    assert sorted(order) == sorted(offsets) and order[0] == (0, 0)
    last = planes.walk(offsets, origin_last=True)
    assert sorted(last) == sorted(offsets) and last[-1] == (0, 0)
    moves = sum(len(planes.steps(a, b)) for a, b in zip([(0, 0), *last], last, strict=False))
    assert moves == 10  # eight steps round the ring and two back to the centre
    assert planes.steps((1, -1), (-1, 1)) == ["west", "west", "north", "north"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("weights", "gauss"), [("[1 1 1; 1 1 1; 1 1 1]", False), ("[1 2 1; 2 4 2; 1 2 1]", True)]
)
def test_the_4_bit_box_and_gaussian_fit_the_device_with_bits_parked(weights, gauss):
    """The searched plans need 11 and 12 DREGs at once; the bit-plane plan needs 10 bits across moves: the
    8 data DREGs, R12 (an input plane until it is walked, then an output bit) and FLAG (an output bit)."""
    result = cain.compile(BOX4.replace("[1 1 1; 1 1 1; 1 1 1]", weights), budget=50)
    program = result.digital
    assert program.planes
    assert set(program.dregs) <= {*DATA_DREGS, *FLAGS.values(), "R12"} and "R12" in program.dregs
    (_, regs, signed) = program.outputs[0]
    assert len(regs) == 8 and not signed and "R12" in regs and "FLAG" not in regs
    assert "R12" in result.c and "bit 0 first" in result.c
    image = np.random.default_rng(5).integers(0, 16, size=(12, 12))
    want = sum(
        np.roll(np.roll(image, -y, 0), x, 1) << (2 - abs(x) - abs(y) if gauss else 0)
        for x in (-1, 0, 1)
        for y in (-1, 0, 1)
    )
    m = program.margin
    assert (result.simulate(image)[0][m:-m, m:-m] == want[m:-m, m:-m]).all()
    # every write to R12 comes right after R0 is set; FLAG is written by WHERE, and set again at the end
    words = program.words
    for i, w in enumerate(words):
        if "R12" in w.dests:
            assert words[i - 1] == Word("SET", ("R0",)) and w.kind == "MOV"
        if "FLAG" in w.dests:
            assert w.kind in ("WHERE", "ALL")
    if program.keeps_flag:
        assert words[-1] == Word("ALL", ("FLAG",)) and words[-2].srcs == ("FLAG",)
    assert gauss <= program.keeps_flag  # the Gaussian needs both


def test_the_scan_keeps_r0_free_across_a_word_that_writes_it():
    """With R0 the only DREG left, a value living across `SET(R0)` must not get it: the error, not a
    clobbered bit."""
    words = [
        Word("NOT", ("%1",), ("%0",)),
        Word("SET", ("R0",)),
        Word("NOT", ("%2",), ("%1",)),
    ]
    with pytest.raises(dreg_alloc.DigitalAllocationError):
        dreg_alloc.allocate(words, {"%0": "R5"}, ["%2"], ["R5", "R0"], lambda peak: f"{peak}")
    _, where = dreg_alloc.allocate(words, {"%0": "R5"}, ["%2"], ["R5", "R6", "R0"], lambda peak: f"{peak}")
    assert where["%1"] == "R6"


def test_park_moves_the_latest_read_input_and_the_first_output_bits_out_of_the_scan():
    words = [
        Word("CLR", tuple(FLAGS.values())),
        Word("SET", (FLAGS["east"],)),
        Word("DNEWS0", ("%2",), ("%0",)),
        Word("NOR", ("%3",), ("%2", "%0")),
        Word("OR", ("%4",), ("%3", "%1")),
    ]
    out, parked, outputs = dreg_alloc.park(words, ["%0", "%1"], ["%3", "%4"])
    assert out[:2] == [Word("SET", ("R0",)), Word("MOV", ("%1.R12",), ("%1",))]
    assert out[-1] == Word("MOV", ("%3.R12",), ("%3",)) and out[-2] == Word("SET", ("R0",))
    assert outputs == ["%3.R12", "%4"] and set(parked.values()) == {"R12"}
    assert Word("OR", ("%4",), ("%3", "%1.R12")) in out
    # an input bit no word reads is never the one parked
    again, parked, _ = dreg_alloc.park(words, ["%0", "%1", "%9"], ["%3", "%4"])
    assert again == out and "%9.R12" not in parked
    # with FLAG: the output bit finished first goes there, and a DREG takes it back at the end
    out, parked, outputs = dreg_alloc.park(words, ["%0", "%1"], ["%3", "%4"], flag=True)
    assert parked == {"%3.FLAG": "FLAG", "%1.R12": "R12", "%4.R12": "R12"}
    assert Word("WHERE", ("%3.FLAG",), ("%3",)) in out
    assert out[-2:] == [Word("MOV", ("%3.out",), ("%3.FLAG",)), Word("ALL", ("FLAG",))]
    assert outputs == ["%3.out", "%4.R12"]
    # the bit taken back from FLAG at the end is not parked again
    _, parked, outputs = dreg_alloc.park(words, ["%0", "%1"], ["%3"], flag=True)
    assert outputs == ["%3.out"] and "%3.out.R12" not in parked


def test_the_plane_plan_round_trips_through_the_plan_ir():
    """`digital-plan` keeps a bit-plane plan on the split filter, so that `lower-dreg` lowers it again."""
    filt = cain.read_filters(BOX4)[0]
    program = plane_program(filt, filt.encoding)
    split = plan_filter(filt, filt.encoding, planes=True)
    again = digital.digital_program(program.plan, split, split.encoding)
    assert again.words == program.words
    assert integer_filter(filt).final_goals() == filt.final_goals()
