"""Bus-level synthesis (cain.backend.bus_synth): every program it returns computes the kernels, on random
plans as on the hand-written ones, in the simulator as well as symbolically, and obeys the bus rules."""

import numpy as np
import pytest
from cain.dialects.scamp5 import KernelOp
from cain.passes.bus_synth import BusSynthPass
from handwritten import gauss3_all, gauss3_basic, gauss3_filter
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cain.backend.bus_synth import (
    DEFERRALS,
    NEWS_FAMILY,
    WORK,
    Options,
    expansion,
    linear_plan,
    noisier,
    synthesize,
    synthesize_ops,
)
from cain.backend.convert import kernel_from_program, micro_ops_of
from cain.backend.emit_c import CTarget
from cain.backend.regalloc import allocate
from cain.backend.sim import Noise, correlate, output_noise, random_images, simulate_bus
from cain.backend.verify import verify_bus
from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS, INSTRUCTION_SETS, MACROS, MicroOp, check_bus
from cain.model.program import Instr, Program


def check_rules(ops) -> None:
    """The bus rules, and the conservative one: a write into NEWS or a neighbour's NEWS reads none."""
    for op in ops:
        check_bus(op, ("A", "B", "C", "D", "E", "F"))
        if set(op.dests) & NEWS_FAMILY:
            assert not set(op.srcs) & NEWS_FAMILY, op
            assert len(set(op.dests) & NEWS_FAMILY) == 1, op


def run_against_correlation(ops, filt: Filter) -> None:
    """Simulate `ops` on random images and compare every output with the direct correlation."""
    images = random_images(len(filt.inputs), 2, 40, seed=3)
    inputs = {r: images[z] for z, (_, r) in enumerate(filt.inputs)}
    outs = simulate_bus(ops, inputs, [k.register for k in filt.kernels], seed=4)
    margin = sum(1 for op in ops for r in op.dests + op.srcs if r in NEWS_FAMILY - {"NEWS"})
    margin = min(margin, 16)
    inner = (..., slice(margin, -margin or None), slice(margin, -margin or None))
    for out, k in zip(outs, filt.kernels, strict=True):
        expected = correlate(images, k.goal, filt.depth)
        assert np.allclose(out[inner], expected[inner])


@pytest.mark.parametrize("program, register", [(gauss3_basic, "A"), (gauss3_all, "B")])
def test_gaussian_is_shorter_at_bus_level(program, register):
    f = gauss3_filter(register)
    p = allocate(program(), f.registers)
    result = synthesize(p, f)
    assert result.synthesized and len(result.ops) < result.expansion_icws == p.icws
    # four halvings of the input are four bus2, not the 4 x 5 ICWs of div
    assert sum(op.kind == "bus2" for op in result.ops) == 4
    assert len(result.ops) <= 14
    check_rules(result.ops)
    verify_bus(result.ops, f)
    run_against_correlation(result.ops, f)


def test_copies_and_zeros_fold_away():
    p = Program(
        "copies",
        [(0, "A")],
        [
            Instr("neg", (1,), (0,)),
            Instr("mov", (2,), (1,)),
            Instr("res", (3,), ()),
            Instr("add", (4,), (2, 3)),
            Instr("movx", (5,), (4,), ("east",)),
            Instr("add", (6,), (5, 0)),
        ],
        [(6, "B")],
    )
    plan = linear_plan(p)
    # %1, %2, %3 and %4 are -%0 or zero: only the shift and the sum remain
    assert [s.form for s in plan.steps] == [(((0, 1, 0), -1),), (((0, 0, 0), 1), ((5, 0, 0), 1))]
    f = Filter.of_goals("copies", p.output_goals([Goal.identity(1)]), 0, ["A"], ["B"])
    ops = synthesize(allocate(p, f.registers), f).ops
    # A - (A from the east): NEWS := -A, then a sum of A and XE is -(A - A east): one more transfer to
    # make it positive (no two transfers can, as the only copy of A is positive)
    assert len(ops) == 3
    verify_bus(ops, f)


def test_a_sign_flip_copies_into_another_register():
    """x/2 and 3x/4 in four registers: the value to flip sits in a register free to overwrite, and the flip
    goes elsewhere (`bus(A, A)` is no micro-op)."""
    p = Program(
        "halves",
        [(0, "A")],
        [Instr("divq", (1,), (0,)), Instr("divq", (2,), (1,)), Instr("add", (3,), (2, 1))],
        [(1, "B"), (3, "C")],
    )
    f = Filter.of_goals(
        "halves", p.output_goals([Goal.identity(4)]), 2, ["A"], ["B", "C"], ("A", "B", "C", "D")
    )
    result = synthesize(allocate(p, f.registers), f, Options(beam=16))
    assert result.synthesized and (len(result.ops), result.expansion_icws) == (5, 6)
    assert all(not set(op.dests) & set(op.srcs) for op in result.ops)
    verify_bus(result.ops, f)
    run_against_correlation(result.ops, f)


def test_a_value_with_two_users_is_inlined_into_both():
    """v = a + east a feeds two outputs: deferred into both, each output is one four-source `bus` reading
    NEWS at two offsets (3 ICWs in all), where computing v once costs 5."""
    p = Program(
        "shared",
        [(0, "A")],
        [
            Instr("movx", (1,), (0,), ("east",)),
            Instr("add", (2,), (0, 1)),
            Instr("movx", (3,), (0,), ("north",)),
            Instr("add", (4,), (2, 3)),
            Instr("movx", (5,), (0,), ("south",)),
            Instr("add", (6,), (2, 5)),
        ],
        [(4, "B"), (6, "C")],
    )
    f = Filter.of_goals("shared", p.output_goals([Goal.identity(1)]), 0, ["A"], ["B", "C"])
    allocated = allocate(p, f.registers)
    shared = synthesize_ops(allocated, f.registers, Options(defer=("shared",)))
    assert [str(op) for op in shared] == ["bus(NEWS, A)", "bus(B, NEWS, XN, XE)", "bus(C, NEWS, XE, XS)"]
    assert len(synthesize_ops(allocated, f.registers, Options(defer=("single",)))) == 5
    verify_bus(shared, f)
    run_against_correlation(shared, f)
    assert len(synthesize(allocated, f).ops) == 3


def test_twins_stay_apart_when_asked():
    """Equal steps merge by default; `merge=False` keeps a recomputed value as the plan computed it."""
    p = Program(
        "twins",
        [(0, "A")],
        [
            Instr("movx", (1,), (0,), ("east",)),
            Instr("movx", (2,), (0,), ("east",)),
            Instr("add", (3,), (1, 2)),
        ],
        [(3, "B")],
    )
    assert len(linear_plan(p).steps) == 2
    assert len(linear_plan(p, merge=False).steps) == 3


def test_max_bus2_caps_the_noisy_micro_ops():
    f = gauss3_filter("A")
    p = allocate(gauss3_basic(), f.registers)
    capped = synthesize(p, f, Options(max_bus2=4))
    assert sum(op.kind != "bus" for op in capped.ops) <= 4
    with pytest.raises(ValueError, match="at most 3 bus2"):
        synthesize(p, f, Options(max_bus2=3))  # four halvings need four


def test_the_pass_runs_the_deferral_modes_asked_for():
    """`bus-synth{defer=single,none}` is the synthesis `Options(defer=...)` gives; an unknown mode is named."""
    f = gauss3_filter("A")
    p = allocate(gauss3_all(), f.registers)
    module = ModuleOp([kernel_from_program(p, f)])
    BusSynthPass(defer=("single", "none")).apply(Context(), module)
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert micro_ops_of(kernel) == synthesize(p, f, Options(defer=("single", "none"))).ops
    with pytest.raises(CainError, match=r"unknown defer= mode 'all' \(choose from shared, single, none\)"):
        BusSynthPass(defer=("all",)).apply(Context(), ModuleOp([kernel_from_program(p, f)]))


def test_out_of_its_work_budget_the_synthesis_keeps_the_verified_expansion():
    """A synthesis that may build one state stops before any run ends: the macros' own expansion, marked
    stopped; one within `WORK` ends as without a budget (work counts states: no clock involved), and is
    remembered whatever the deadline."""
    f = gauss3_filter("B")
    p = allocate(gauss3_all(), f.registers)
    cut = synthesize(p, f, Options(work=1))
    assert (cut.ops, cut.synthesized, cut.stopped) == (expansion(p), False, True)
    verify_bus(cut.ops, f)
    free = synthesize(p, f, Options(defer=("single", "none")))
    bounded = synthesize(p, f, Options(defer=("single", "none"), work=WORK))
    assert (bounded.ops, bounded.stopped) == (free.ops, False) and free.synthesized
    # a synthesis that ended is remembered; one cut short is not (a larger budget may do better)
    again = Options(defer=("single", "none"), work=WORK, deadline=0.0)
    assert synthesize(p, f, again) is bounded and synthesize(p, f, Options(work=1)) is not cut


def test_the_pass_out_of_its_work_budget_prints_the_expansion_and_says_so():
    """`bus-synth{work=1}`: the kernel is the expansion, verified, and its C header says the synthesis
    stopped at its budget."""
    f = gauss3_filter("B")
    p = allocate(gauss3_all(), f.registers)
    module = ModuleOp([kernel_from_program(p, f)])
    BusSynthPass(work=1).apply(Context(), module)
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert micro_ops_of(kernel) == expansion(p) and kernel.counts["synthesis_stopped"] == 1
    verify_bus(micro_ops_of(kernel), f)
    assert "bus-level synthesis stopped at its budget (time or work): the macros' own expansion" in (
        CTarget().text(module)
    )


# -- random plans ------------------------------------------------------------------------------------

SIDES = sorted(DIRECTIONS)
MACRO_NAMES = sorted(INSTRUCTION_SETS["all"] | INSTRUCTION_SETS["basic"])


@st.composite
def programs(draw):
    """A random straight-line macro program on one or two inputs (16 atoms each), one to three outputs."""
    channels = draw(st.integers(1, 2))
    inputs = [(z, "AB"[z]) for z in range(channels)]
    values = list(range(channels))
    instrs = []
    for _ in range(draw(st.integers(1, 9))):
        name = draw(st.sampled_from(MACRO_NAMES))
        macro = MACROS[name]
        operands = tuple(draw(st.sampled_from(values)) for _ in macro.operands)
        directions = tuple(draw(st.sampled_from(SIDES)) for _ in range(macro.directions))
        results = tuple(len(values) + k for k in range(len(macro.results)))
        values += results
        instrs.append(Instr(name, results, operands, directions))
    count = draw(st.integers(1, min(3, len(values) - channels)))
    chosen = draw(st.lists(st.sampled_from(values[channels:]), min_size=count, max_size=count, unique=True))
    outputs = [(v, "CDE"[k]) for k, v in enumerate(chosen)]
    return Program("random", inputs, instrs, outputs)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_plans_synthesise_to_correct_bus_code(program):
    channels = len(program.inputs)
    input_goals = [Goal.identity(16, z) for z in range(channels)]
    try:
        goals = program.output_goals(input_goals)
    except ValueError:
        assume(False)  # a division met an odd count
    assume(all(goals))
    f = Filter.of_goals("random", goals, 4, [r for _, r in program.inputs], [r for _, r in program.outputs])
    try:
        p = allocate(program, f.registers)
    except CainError:
        assume(False)
    for defer in DEFERRALS:
        ops = synthesize_ops(p, f.registers, Options(beam=12, defer=(defer,)))
        if ops is not None:  # the raw search result, before synthesize's own verification
            check_rules(ops)
            verify_bus(ops, f)
            run_against_correlation(ops, f)
    result = synthesize(p, f, Options(beam=12))
    assert len(result.ops) <= len(expansion(p))
    verify_bus(result.ops, f)
    assert not noisier(result.ops, result.plain, f, Options().noise)  # fewer ICWs never buy more noise


def test_a_flip_that_overwrites_one_of_two_holders_reads_the_other():
    """Found by the property test above: `bus2(B, E, XE)` leaves v2 in B and E; a sign flip of the input
    may then take B (E still holds v2), and the flip of v2 that follows must read E, not B."""
    program = Program(
        "random",
        [(0, "A")],
        [
            Instr("addx", (1,), (0, 0), ("east",)),
            Instr("div", (2,), (1,), ()),
            Instr("add3", (3,), (0, 1, 2), ()),
            Instr("div", (4,), (0,), ()),
            Instr("add", (5,), (0, 0), ()),
        ],
        [(3, "C")],
    )
    f = Filter.of_goals("random", program.output_goals([Goal.identity(16, 0)]), 4, ["A"], ["C"])
    p = allocate(program, f.registers)
    for defer in DEFERRALS:
        ops = synthesize_ops(p, f.registers, Options(beam=12, defer=(defer,)))
        assert ops is not None
        verify_bus(ops, f)


def test_output_noise_is_the_variance_the_simulator_samples():
    """`output_noise` carries each write's noise through the program exactly: by hand for three micro-ops,
    and within sampling error of the noisy simulator."""
    ops = [
        MicroOp("bus", ("NEWS",), ("A",)),
        MicroOp("bus", ("B",), ("XE", "A")),  # NEWS's noise, then its own: 2 sigma^2
        MicroOp("bus2", ("C", "D"), ("B",)),  # B's halved (1/4), then a bus2 write's sigma^2 + extra^2
    ]
    noise = Noise(0.5, 1.0, seed=1)
    assert output_noise(ops, ["A"], ["B", "C"], noise) == pytest.approx([0.5, 0.125 + 1.25])
    image = np.zeros((1, 200, 200))
    outs = simulate_bus(ops, {"A": image}, ["B", "C"], noise=noise)
    sampled = [float(np.var(out[0, 2:-2, 2:-2])) for out in outs]
    assert sampled == pytest.approx([0.5, 1.375], rel=0.05)
