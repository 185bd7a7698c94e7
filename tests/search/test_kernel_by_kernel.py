"""Kernel by kernel: the first plan of a filter of several kernels, compiled one kernel at a time, again
while that plan is the best, in an order that keeps the inputs, with the constructive program for the rest."""

from __future__ import annotations

import pytest
from search_cases import check

from cain.frontend.kernel import parse_filter
from cain.search import SearchConfig, search
from cain.search.allocate import allocated_and_verified
from cain.search.constructive.program import constructive_plan
from cain.search.heuristic import worker
from cain.search.heuristic.kernel_by_kernel import kernel_by_kernel, kernel_order

THREE_KERNELS = """filter three
input A
output k0 -> A = 1/8 [3 4 2; 3 2 0; 4 7 1]
output k1 -> B = 1/8 [1 2 2; 0 1 8; 6 8 4]
output k2 -> C = 1/8 [8 3 3; 6 4 7; 7 5 1]
"""


AGAIN_KERNELS = """filter again
input A
output k0 -> A = 1/8 [0 6 5; 0 6 1; 3 3 7]
output k1 -> B = 1/8 [4 5 1; 4 4 1; 8 0 0]
output k2 -> C = 1/8 [6 8 6; 7 5 3; 1 6 3]
"""


@pytest.mark.slow
def test_the_first_plan_of_several_kernels_is_compiled_kernel_by_kernel():
    f = parse_filter(THREE_KERNELS, "three.cain")
    alone = search(f, SearchConfig(node_budget=1000, kernel_by_kernel=0.0, fallback=False))
    assert alone.program is None  # the simultaneous search alone finds nothing in 1000 nodes
    r = search(f, SearchConfig(node_budget=1000, fallback=False))
    check(r.program, f)  # allocated on the six registers and verified as one program
    assert r.plan is not None and r.plan.output_goals(f.initial_goals()) == f.final_goals()
    assert r.kernel_by_kernel and not alone.kernel_by_kernel
    assert r.nodes <= 1000 + 100 and r.events[0].nodes <= 100  # a tenth of the budget (and the probe's)


@pytest.mark.slow
def test_the_kernels_are_compiled_one_at_a_time_again_while_that_plan_is_the_best(monkeypatch):
    """At a fifth of the budget the simultaneous search has nothing shorter than the kernel-by-kernel plan,
    so the kernels are compiled one at a time again with half of the budget: a shorter plan, found after
    the mark, within the budget."""
    f = parse_filter(AGAIN_KERNELS, "again.cain")
    r = search(f, SearchConfig(node_budget=1000, fallback=False))
    check(r.program, f)
    monkeypatch.setattr(worker, "AGAIN_SHARE", 0.0)
    once = search(f, SearchConfig(node_budget=1000, fallback=False))
    assert r.kernel_by_kernel and once.kernel_by_kernel
    assert r.program.macros < once.program.macros
    assert r.events[-1].nodes >= 200 and r.nodes <= 1000 + 100


FOUR_KERNELS = """filter layer
input A
output k0 -> A = 1/4 [1 -2 0; 3 1 -1; 0 2 -4]
output k1 -> B = 1/4 [-1 0 4; 2 -3 1; 1 1 0]
output k2 -> C = 1/4 [0 3 -2; -1 2 2; 4 0 -1]
output k3 -> D = 1/4 [2 -1 -1; 0 4 3; -3 1 2]
"""


@pytest.mark.slow
def test_kernels_left_too_few_registers_for_the_search_are_constructed():
    """Four kernels in six registers: the last ones have too few registers for the search alone, so the
    constructive program computes them (halving the input in place, as nothing after needs it), after
    the searched ones; without the fallback, the whole is no longer than the constructive program of every
    kernel."""
    f = parse_filter(FOUR_KERNELS, "layer.cain")
    r = search(f, SearchConfig(node_budget=2000, fallback=False))
    check(r.program, f)
    assert r.kernel_by_kernel
    constructive = search(f, SearchConfig(node_budget=1, kernel_by_kernel=0.0))
    assert constructive.constructive
    assert r.program.macros <= constructive.program.macros


def test_kernels_that_overwrite_an_input_are_compiled_last():
    f = parse_filter(THREE_KERNELS, "three.cain")
    assert kernel_order(f) == [1, 2, 0]
    two = parse_filter("filter two\ninput red -> A\ninput green -> B\n"
                       "output r -> A = { red: [1 0 1] }\noutput g -> B = { green: [1 1 0] }\n", "two.cain")
    assert kernel_order(two) is None  # each destroys an input the other needs


def test_kernel_by_kernel_keeps_the_shortest_split():
    """With no plan from the search, each kernel is built alone by the constructive program, or the rest
    together from some kernel on: the shortest split wins, never longer than all of them together, and it
    allocates on the six registers and computes the filter."""
    f = parse_filter(FOUR_KERNELS, "layer.cain")

    plan = kernel_by_kernel(f, f.registers, lambda sub: None, lambda sub, bases: constructive_plan(sub, "all", bases))
    assert plan.output_goals(f.initial_goals()) == f.final_goals()
    assert plan.macros <= constructive_plan(f, "all").macros
    check(allocated_and_verified(plan, f, f.registers), f)
