"""The numpy simulator: shifts, bus micro-op semantics, edges, noise, macro programs."""

import numpy as np
import pytest
from cain.dialects.scamp5 import KernelOp
from cain.passes.expand_bus import ExpandBusPass
from handwritten import GAUSS3_GOAL, gauss3_basic, gauss3_filter
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cain.backend.convert import kernel_from_program, simulate_kernel
from cain.backend.regalloc import allocate
from cain.backend.sim import (
    GOAL_ALGEBRA,
    Noise,
    SimulationError,
    bus_reach,
    check_bus,
    correlate,
    expansion,
    numeric_algebra,
    random_images,
    reach,
    run_bus,
    shift,
    simulate,
)
from cain.model.goal import Goal
from cain.model.isa import MACROS, MicroOp, expand
from cain.model.program import Instr, Program


def test_shift_reads_the_neighbour_and_zero_beyond_the_edge():
    a = np.arange(9.0).reshape(3, 3)  # row 0 is north
    east = shift(a, (1, 0))
    assert east[1, 1] == a[1, 2] and east[1, 2] == 0
    north = shift(a, (0, 1))
    assert north[1, 1] == a[0, 1] and (north[0] == 0).all()
    assert (shift(a, (5, 0)) == 0).all()


def test_bus_reads_all_sources_before_writing():
    state = {"A": np.full((4, 4), 3.0), "B": np.full((4, 4), 5.0), "NEWS": np.zeros((4, 4))}
    run_bus(
        [MicroOp("bus", ("NEWS",), ("A", "B")), MicroOp("bus2", ("A", "B"), ("NEWS",))],
        state,
        numeric_algebra((4, 4)),
    )
    assert (state["NEWS"] == -8).all() and (state["A"] == 4).all() and (state["B"] == 4).all()
    run_bus([MicroOp("bus", ("A",))], state, numeric_algebra((4, 4)))
    assert (state["A"] == 0).all()


def test_neighbour_news_write_and_read():
    """bus(XW, A) writes the west neighbour's NEWS, so NEWS then holds A taken from the east."""
    a = np.arange(16.0).reshape(4, 4)
    state = {"A": a, "NEWS": np.zeros((4, 4))}
    run_bus([MicroOp("bus", ("XW",), ("A",))], state, numeric_algebra((4, 4)))
    assert np.array_equal(state["NEWS"], -shift(a, (1, 0)))
    run_bus([MicroOp("bus", ("B",), ("XN",))], state, numeric_algebra((4, 4)))
    assert np.array_equal(state["B"], shift(shift(a, (1, 0)), (0, 1)))


@pytest.mark.parametrize(
    "op, message",
    [
        (MicroOp("bus", ("A",), ("B", "B")), "at most once"),
        (MicroOp("bus", ("A",), ("A",)), "never also a source"),
        (MicroOp("bus2", ("A", "B"), ("C", "D", "E")), "at most 2"),
        (MicroOp("bus", ("A", "B"), ()), "exactly 1"),
        (MicroOp("bus4", ("A",), ()), "unknown micro-op"),
    ],
)
def test_illegal_micro_ops_are_refused(op, message):
    with pytest.raises(SimulationError, match=message):
        check_bus(op)


def test_goal_algebra_runs_a_macro_expansion_symbolically():
    x = Goal({(0, 0, 0): 2, (1, 0, 0): -4})
    roles = {"y": "B", "s0": "C", "x0": "A"}
    state = {"A": x, "B": Goal({(9, 9, 9): 1}), "C": Goal(), "NEWS": Goal()}
    run_bus(expand(MACROS["div"], roles), state, GOAL_ALGEBRA)
    assert state["B"] == x.halved() and state["A"] == x


def test_program_matches_the_direct_correlation_away_from_the_edges():
    program = gauss3_basic()
    images = random_images(1, 2, 40, seed=3)
    for level, p in (("values", program), ("registers", allocate(program))):
        (out,) = simulate(p, images, level=level)
        expected = correlate(images, GAUSS3_GOAL, 4)
        m = reach(program)
        assert m == 1  # the path goes north and back south: only its furthest excursion counts
        assert np.allclose(out[..., m:-m, m:-m], expected[..., m:-m, m:-m])
        assert not np.allclose(out, expected)  # the edges read zeros


def test_register_level_needs_an_allocation():
    with pytest.raises(SimulationError, match="no register allocation"):
        simulate(gauss3_basic(), random_images(1, 1, 8), level="registers")


def test_noise_model_perturbs_each_transfer_and_more_on_divisions():
    program = Program("m", [(0, "A")], [Instr("mov", (1,), (0,))], [(1, "B")], {0: "A", 1: "B"})
    images = np.zeros((1, 1, 64, 64))
    (quiet,) = simulate(program, images)
    assert (quiet == 0).all()
    (noisy,) = simulate(program, images, noise=Noise(sigma=0.5, seed=1))
    assert 0.5 < noisy.std() < 1.0  # two transfers: sqrt(2) * 0.5
    div = Program("d", [(0, "A")], [Instr("divq", (1,), (0,))], [(1, "B")], {0: "A", 1: "B"})
    (plain,) = simulate(div, images, noise=Noise(sigma=0.5, seed=1))
    (extra,) = simulate(div, images, noise=Noise(sigma=0.5, extra=2.0, seed=1))
    assert extra.std() > 2 * plain.std()


def test_kernel_ops_simulate_alike_at_macro_and_bus_level():
    program = allocate(gauss3_basic())
    images = random_images(1, 2, 32, seed=4)
    module = ModuleOp([kernel_from_program(program, gauss3_filter())])
    (macro_level,) = simulate_kernel(module.body.block.first_op, images)
    ExpandBusPass().apply(Context(), module)
    kernel = module.body.block.first_op
    assert isinstance(kernel, KernelOp) and kernel.is_bus_level
    (bus_level,) = simulate_kernel(kernel, images)
    assert np.array_equal(macro_level, bus_level)
    expected = correlate(images, GAUSS3_GOAL, 4)
    assert np.allclose(bus_level[..., 4:-4, 4:-4], expected[..., 4:-4, 4:-4])
    (noisy,) = simulate_kernel(kernel, images, noise=Noise(sigma=0.1, extra=0.2, seed=2))
    assert 0 < np.abs(noisy - bus_level)[..., 4:-4, 4:-4].mean() < 2


@pytest.mark.parametrize("n", [1, 2, 50])
def test_bus_reach_is_the_macro_reach_of_the_expansion_and_stays_small(n):
    """A chain of moves east and west: its expansion's reach is the macro program's, the furthest excursion
    (1), not the count of neighbour reads, so a long bus program is verified on small images."""
    instrs = [Instr("movx", (v + 1,), (v,), ("east" if v % 2 == 0 else "west",)) for v in range(n)]
    p = allocate(Program("chain", [(0, "A")], instrs, [(n, "B")]), ("A", "B", "C", "D", "E", "F"))
    assert bus_reach(expansion(p), ["B"]) == reach(p) == 1
    p = allocate(gauss3_basic(), gauss3_filter("A").registers)
    assert bus_reach(expansion(p), ["A"]) == reach(p)
