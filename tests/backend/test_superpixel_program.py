"""Superpixel programs (cain.backend.superpixel): lowered, allocated, verified bit for bit in the DREG
simulator against the integer correlation on the tile grid, printed as C with the host's pattern loads."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import cain
from cain.backend.dreg_sim import run_words
from cain.backend.superpixel import (
    STRATEGIES,
    emit_superpixel,
    segments,
    superpixel_program,
    verify_superpixel,
)
from cain.diagnostics import CainError
from cain.model.dreg import DREGS, Load, Word
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import SimulationError
from cain.model.program import Instr, Program
from cain.model.superpixel import Superpixel, hilbert, snake

PLUS = Goal.from_matrices([[[0, 1, 0], [1, 1, 0], [0, 0, 0]]])
"""In + its west and north neighbours: a move, an add, another move and add."""


def _plan() -> Program:
    return Program(
        "t",
        [(0, "A")],
        [
            Instr("movx", (1,), (0,), ("west",)),
            Instr("add", (2,), (0, 1)),
            Instr("movx", (3,), (0,), ("north",)),
            Instr("add", (4,), (2, 3)),
        ],
        [(4, "A")],
    )


def _filter(layout, inputs=(0,), outputs=(0,), goal=PLUS) -> tuple[Filter, Superpixel]:
    sp = Superpixel(layout, inputs, outputs)
    return replace(Filter.of_goals("t", [goal], 0), superpixel=sp), sp


@pytest.mark.parametrize(
    "layout", [snake(4, 4), snake(2, 2), hilbert(4), snake(4, 4, 2), snake(1, 1), snake(2, 4, 4)]
)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_plan_lowers_to_a_program_that_computes_it_bit_for_bit(layout, strategy):
    filt, sp = _filter(layout)
    program = superpixel_program(_plan(), filt, sp, strategy)
    verify_superpixel(program)
    images = (
        np.random.default_rng(3).integers(0, 1 << min(layout.bits, 62), size=(1, 2, 6, 6)).astype(np.uint64)
    )
    got = program.run(images, seed=5)[0]
    want = program.expected(images)[0]
    assert (got[..., 1:, :-1] == want[..., 1:, :-1]).all()


def test_moves_between_banks_and_subtraction_are_exact():
    goal = Goal.from_matrices([[[0, 0, 0], [-1, 1, 0], [0, 0, 0]]])
    filt, sp = _filter(snake(4, 4, 4), inputs=(2,), outputs=(1,), goal=goal)
    plan = Program(
        "t", [(0, "A")], [Instr("movx", (1,), (0,), ("west",)), Instr("sub", (2,), (0, 1))], [(2, "A")]
    )
    for strategy in STRATEGIES:
        verify_superpixel(superpixel_program(plan, filt, sp, strategy))


def test_a_wrong_program_is_caught():
    filt, sp = _filter(snake(4, 4))
    program = superpixel_program(_plan(), filt, sp)
    last_nor = max(i for i, w in enumerate(program.items) if isinstance(w, Word) and w.kind == "NOR")
    broken = replace(program, items=program.items[:last_nor] + program.items[last_nor + 1 :])
    with pytest.raises(CainError, match="computes|cannot run"):
        verify_superpixel(broken)


def test_no_result_depends_on_what_an_unflagged_pe_reads():
    """The simulator gives a PE with no direction flag random bits: verification on several seeds."""
    filt, sp = _filter(snake(4, 4))
    program = superpixel_program(_plan(), filt, sp)
    for seed in range(4):
        verify_superpixel(program, seed)


def test_the_simulator_masks_r12_and_refuses_a_dnews0_into_it():
    rng = np.random.default_rng(0)
    planes = {r: rng.random((4, 4)) < 0.5 for r in DREGS}
    state = run_words([Word("SET", ("R12",))], planes)
    assert (state["R12"] == (planes["R0"] | planes["R12"])).all()
    with pytest.raises(SimulationError, match="R12"):
        run_words([Word("DNEWS0", ("R12",), ("R5",))], planes, DREGS, rng)


def test_pattern_loads_split_the_c_into_kernels():
    filt, sp = _filter(snake(4, 4))
    program = superpixel_program(_plan(), filt, sp)
    assert program.loads and program.cost == program.icws + 4 * program.loads
    c = emit_superpixel(program, ["A"])
    assert c.count("scamp5_load_pattern(") == program.loads
    assert (
        c.count("scamp5_kernel_begin();")
        == c.count("scamp5_kernel_end();")
        == len([s for s in segments(program.items) if s[1]])
    )
    assert "no DNEWS0 writes R12" in c
    assert all(isinstance(i, Load) or "R12" not in str(i) for i in program.items)


def test_compile_and_simulate_through_the_api():
    result = cain.compile("option mode = superpixel\noption tile = 2 2\noutput D = [1 -1]\n", budget=100)
    assert result.superpixel is not None and result.icws == result.superpixel.icws
    image = np.arange(36.0).reshape(6, 6) % 5
    out = result.simulate(image)[0]  # one value per tile, signed
    assert np.allclose(out[:, 1:-1], result.exact(image)[0][:, 1:-1])


REGRESSIONS = sorted((Path(__file__).parents[1] / "regressions" / "superpixel").glob("*.cain"))


@pytest.mark.slow
@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_superpixel_fuzz_regressions_compile_to_verified_programs(path):
    result = cain.compile(str(path), budget=300)
    assert result.superpixel is not None
