"""Exact windows: stretches of a plan replaced by fewer instructions that the exact search finds from the
values alive before them, the plan that results computing the kernels (verified and simulated)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from search_cases import CNN6

from cain.api import read_filters
from cain.backend.sim import correlate, simulate
from cain.model.program import Instr, Program
from cain.search import SearchConfig, engine, search
from cain.search.allocate import allocated, verify
from cain.search.budget import Budget, Stopped
from cain.search.config import register_names
from cain.search.exact.bound import Kinds, bag_bound
from cain.search.exact.deepening import ExactSearch
from cain.search.exact.window import alive_after, shorten, splice

HALF = read_filters("filter half\ninput A\noutput h -> A = 1/2 [1]\n")[0]


def assert_simulates(program: Program, filt, seed: int) -> None:
    """`program` computes `filt`'s kernels in the simulator, on a random image (away from its border)."""
    images = np.random.default_rng(seed).integers(-64, 64, size=(1, 16, 16)).astype(float)
    for got, kernel in zip(simulate(program, images), filt.kernels, strict=True):
        want = correlate(images, kernel.goal, filt.depth)
        assert np.allclose(got[4:-4, 4:-4], want[4:-4, 4:-4])


def wasteful() -> Program:
    """`A / 2` the long way: the input negated twice before the division."""
    instrs = [Instr("neg", (1,), (0,)), Instr("neg", (2,), (1,)), Instr("div", (3,), (2,))]
    return Program("half", [(0, "A")], instrs, [(3, "A")])


def test_the_values_alive_after_a_prefix_are_those_read_later():
    plan = wasteful()
    assert alive_after(plan, 0) == [0]
    assert alive_after(plan, 1) == [1]
    assert alive_after(plan, 2) == [2]
    assert alive_after(plan, 3) == [3]  # the output


def test_a_prefix_that_keeps_the_input_gives_the_rest_the_input_to_read():
    plan = wasteful()
    verify(allocated(plan, HALF.registers), HALF)
    empty = Program("half", [(0, "A")], [], [(0, "A")])  # the value alive is the input itself
    shorter = splice(plan, 0, 2, empty)
    assert shorter.instrs == [Instr("div", (3,), (0,))]
    assert shorter.outputs == [(3, "A")]
    verify(allocated(shorter, HALF.registers), HALF)


def test_a_wasteful_prefix_is_replaced_and_the_program_verified():
    names = HALF.registers
    found = shorten(HALF, wasteful(), 3, "all", names, Budget(nodes=1000))
    assert found is not None
    program, plan = found
    assert program.macros == plan.macros == 1
    verify(program, HALF)


def test_a_window_inside_the_plan_is_replaced():
    """`A / 4` with a wasted pair of negations between its divisions: the negations are a window of two
    instructions, tried before the prefix of three that holds them, and nothing replaces them (the value
    before them is the value after)."""
    filt = read_filters("filter q\ninput A\noutput q -> A = 1/4 [1]\n")[0]
    names = filt.registers
    instrs = [
        Instr("div", (1,), (0,)),
        Instr("neg", (2,), (1,)),
        Instr("neg", (3,), (2,)),
        Instr("div", (4,), (3,)),
    ]
    plan = Program("q", [(0, "A")], instrs, [(4, "A")])
    found = shorten(filt, plan, 4, "all", names, Budget(nodes=1000))
    assert found is not None
    program, shorter = found
    assert shorter.instrs == [Instr("div", (1,), (0,)), Instr("div", (4,), (1,))]
    assert program.macros == 2
    verify(program, filt)


def test_the_exact_search_starts_from_any_values():
    """From `A / 2` one pixel east, `A / 4` at the origin takes a division and a move: the search keeps
    the two symmetries that fix the start (the identity and the mirror across the x axis), and its bound,
    counted from that value, is already 2."""
    filt = read_filters("filter q\ninput A\noutput q -> A = 1/4 [1]\n")[0]
    names = filt.registers
    start = ((1, 0, 0, 2),)  # depth 2: A is 4 at the origin
    exact = ExactSearch(filt, "all", names, lambda p: p, Budget(nodes=1000), inputs=[start])
    assert len(exact.symmetries) == 2
    found = exact.run()
    assert found.optimal and found.bound == 2 and found.plan.macros == 2
    kinds = Kinds.of(exact.space.macros)
    assert bag_bound([start], [start], kinds) == 0
    assert bag_bound([((0, 0, 0, 1),)], [start], kinds) == 2


def test_a_shortest_plan_is_left_alone():
    plan = Program("half", [(0, "A")], [Instr("div", (1,), (0,))], [(1, "A")])
    assert shorten(HALF, plan, 1, "all", HALF.registers, Budget(nodes=1000)) is None


def test_find_searches_one_depth_and_returns_any_program_that_short():
    filt = read_filters("filter q\ninput A\noutput q -> A = 1/4 [1]\n")[0]  # two divisions at least
    names = filt.registers

    def find(length: int):
        return ExactSearch(filt, "all", names, lambda p: allocated(p, names), Budget(nodes=1000)).find(length)

    for length in (2, 4):
        found = find(length)
        assert found.program is not None and found.program.macros <= length and not found.optimal
        verify(found.program, filt)
    refuted = find(1)
    assert refuted.program is None and refuted.bound == 2


PREWITT_SIXTH = """filter prewitt_sixth
input  A
output k0 -> A = 1/6 [-1 0 1; -1 0 1; -1 0 1]
output k1 -> B = 1/6 [-1 -1 -1; 0 0 0; 1 1 1]
option max_depth = 16
option max_error = 0.1
"""


@pytest.mark.slow  # two searches of 1500 nodes and 6 s of windows: about 10 s
def test_the_search_shortens_its_plan_by_exact_windows_on_a_time_budget():
    """A node budget tries no window (its output stays the heuristic's); in the time left of a budget, the
    heuristic's plan for a pair of edge kernels loses macros to exact windows, and the program still
    computes the kernels in the simulator."""
    filt = read_filters(PREWITT_SIXTH)[0]
    heuristic = search(filt, SearchConfig(node_budget=1500, seed=0, progress=False))
    again = search(filt, SearchConfig(node_budget=1500, seed=0, progress=False))
    assert heuristic.program == again.program
    cfg = SearchConfig(time_budget=6.0, progress=False)
    names = register_names(filt, cfg)
    shortened = engine._shorten(filt, cfg, names, time.perf_counter(), heuristic)
    assert shortened.program.macros < again.program.macros
    assert shortened.events[-1].macros == shortened.program.macros
    verify(shortened.program, filt)
    assert_simulates(shortened.program, filt, seed=0)


@pytest.mark.slow
def test_the_constructive_program_is_shortened_in_the_time_the_search_left():
    """Six kernels in six registers: no program of the goal model fits, so the search does not run and the
    constructive program is the result. Under a node budget it is printed as built; on a time budget its
    windows are shortened with the time the search left, and it still computes the kernels."""
    filt = read_filters(CNN6)[0]
    built = search(filt, SearchConfig(node_budget=50, progress=False))
    shortened = search(filt, SearchConfig(time_budget=2.0, workers=1, progress=False))
    assert built.stopped is shortened.stopped is Stopped.IMPOSSIBLE
    assert built.constructive and shortened.constructive
    assert shortened.program.macros < built.program.macros
    assert shortened.events[-1].macros == shortened.program.macros
    assert_simulates(shortened.program, filt, seed=1)
