"""The accumulator plan of a digital filter: it computes the kernels in every order, its programs are exact,
and it fits the device where neither the searched plans nor the bit-plane plan do."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search.test_planes import kernel_text, matrices, wide_file

import cain
from cain.backend import digital
from cain.backend.dreg_alloc import DigitalAllocationError
from cain.model.dreg import FLAGS
from cain.model.goal import Goal
from cain.search.constructive import planes
from cain.search.constructive.accumulators import accumulator_plan, kernel_orders
from cain.search.digital import accumulator_program, integer_filter, lower_plan, plan_filter, plane_program

WALKS = [None, *planes.WALKS]

TWO_KERNELS = """option mode = digital
option input_bits = 2
output K0 -> A = [-2 1 0; 2 0 1; -2 1 0]
output K1 -> B = [1 2; 0 0]
"""
"""fuzz71 of the digital fuzz campaign's seed 2: no searched plan and no bit-plane plan fits it."""


@settings(max_examples=25, deadline=None)
@given(matrices, st.integers(1, 3), st.sampled_from([None, 3]))
def test_the_accumulator_plan_computes_the_kernels_in_every_order(weights, bits, width):
    filt = cain.read_filters(kernel_text(weights, bits, width))[0]
    split = plan_filter(filt, filt.encoding, planes=True)
    inputs = [Goal.identity(1, p) for p in range(bits)]
    for order, walked in itertools.product(kernel_orders(len(filt.kernels)), WALKS):
        plan = accumulator_plan(split, order, walked)
        assert plan.output_goals(inputs) == split.final_goals()
    integer = integer_filter(filt)
    for order in kernel_orders(len(filt.kernels)):
        assert accumulator_plan(integer, order).output_goals([Goal.identity(1, 0)]) == integer.final_goals()


@settings(max_examples=3, deadline=None)
@given(matrices, st.integers(1, 3), st.sampled_from([None, 3]))
def test_accumulator_programs_are_exact_on_a_wide_dreg_file(weights, bits, width):
    program = accumulator_program(*wide_file(weights, bits, width))
    assert program is not None
    digital.verify_digital(program, seed=3)
    assert [len(regs) for _, regs in program.inputs] == [bits]


def test_kernel_orders_are_every_permutation_of_a_few_kernels():
    assert kernel_orders(1) == [(0,)]
    assert sorted(kernel_orders(3)) == sorted(itertools.permutations(range(3)))
    assert kernel_orders(4) == [(0, 1, 2, 3), (3, 2, 1, 0)]


def test_the_accumulator_plan_fits_a_filter_nothing_else_fits():
    filt = cain.read_filters(TWO_KERNELS)[0]
    assert plane_program(filt, filt.encoding) is None
    result = cain.compile(TWO_KERNELS, budget=100)
    assert result.digital is not None and result.digital.plan.name.endswith("_accumulators")
    digital.verify_digital(result.digital, seed=5)
    assert set(result.digital.dregs) <= {*FLAGS.values(), *filt.encoding.dregs, "R12"}


def test_an_accumulator_program_round_trips_through_the_plan_ir():
    """`digital-plan` keeps the plan on the filter it was made for (`DigitalProgram.planes`), so that
    `lower-dreg` lowers it again, within the device's DREGs."""
    filt = cain.read_filters(TWO_KERNELS)[0]
    program = accumulator_program(filt, filt.encoding)
    assert program is not None
    again = lower_plan(program.plan, plan_filter(filt, filt.encoding, program.planes))
    digital.verify_digital(again, seed=7)
    assert set(again.dregs) <= {*FLAGS.values(), *filt.encoding.dregs, "R12"}


def test_a_time_budget_bounds_the_accumulator_plans():
    filt = cain.read_filters(TWO_KERNELS)[0]
    assert accumulator_program(filt, filt.encoding, deadline=time.perf_counter()) is None


@pytest.mark.slow
def test_the_no_fit_error_counts_the_fewest_dregs_of_every_plan_tried():
    """fuzz4 of seed 2 fits no plan Cain builds: its error names the fewest DREGs any of them needed, the
    bit-plane and accumulator plans' among them (its searched plans need more than the bit-plane plan), and
    advises one kernel per filter (each of its kernels alone fits)."""
    text = """option mode = digital
option input_bits = 2
output K0 -> A = [1 -1 0; 2 1 2; -1 1 0]
output K1 -> B = [0 0 2; 1 2 1; 1 1 1]
"""
    with pytest.raises(
        DigitalAllocationError, match="Cain's programs need .* or one kernel per filter$"
    ) as e:
        cain.compile(text, budget=100)
    filt = cain.read_filters(text)[0]
    tried: list = []
    assert plane_program(filt, filt.encoding, failures=tried) is None
    assert accumulator_program(filt, filt.encoding, failures=tried) is None
    assert e.value.needed == min(f.needed for f in tried if isinstance(f, DigitalAllocationError))
    lines = text.strip().split("\n")
    for kernel in lines[2:]:  # each kernel alone, with the options
        alone = cain.compile("\n".join([*lines[:2], kernel]), budget=100)
        digital.verify_digital(alone.digital, seed=6)
