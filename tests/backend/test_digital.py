"""The digital plane: the DREG simulator against the SDK's semantics, the bit cells' networks, lowering,
allocation and verification of plans, and the mode end to end from kernel text."""

import itertools
import random
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from cain.dialects import register_dialects

import cain
from cain.backend import digital, digital_bound, digital_order, dreg_alloc
from cain.backend.dreg_sim import from_planes, run_words, to_planes
from cain.backend.sim import reach, shift
from cain.diagnostics import CainError
from cain.frontend.java_json import parse_filter as parse_json
from cain.model.dreg import (
    DATA_DREGS,
    FLAGS,
    NARROW_NETWORKS,
    NETWORKS,
    Encoding,
    Word,
    check_word,
    run_network,
    shortest_network,
    truth_table,
)
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS, SimulationError
from cain.model.program import Instr, Program
from cain.search.constructive import planes
from cain.search.digital import compile_digital, plan_filter


def test_dnews0_reads_the_flagged_neighbour_as_the_analogue_shift_does():
    rng = np.random.default_rng(1)
    plane = rng.random((6, 7)) < 0.5
    for side, flag in FLAGS.items():
        planes = {"R5": plane, **{f: np.full(plane.shape, f == flag) for f in FLAGS.values()}}
        got = run_words([Word("DNEWS0", ("R6",), ("R5",))], planes)["R6"]
        assert (got == shift(plane, DIRECTIONS[side])).all(), side


def test_dnews0_ors_several_flags_and_reads_0_beyond_the_edge():
    plane = np.ones((3, 3), dtype=bool)
    planes = {"R5": plane, "R1": plane, "R2": ~plane, "R3": plane, "R4": ~plane}
    got = run_words([Word("DNEWS0", ("R6",), ("R5",))], planes)["R6"]
    assert got.tolist() == [[True] * 3] * 3  # every PE has a north or a south neighbour
    got = run_words([Word("CLR", ("R3",)), Word("DNEWS0", ("R6",), ("R5",))], planes)["R6"]
    assert got.tolist() == [[True] * 3, [True] * 3, [False] * 3]


def test_logic_words_and_bit_planes():
    a, b = to_planes(np.array([[0, 1, 2, 3]]), ["R5", "R6"]).values()
    state = run_words(
        [
            Word("NOR", ("R7",), ("R5", "R6")),
            Word("OR", ("R8",), ("R5", "R6")),
            Word("NOT", ("R9",), ("R8",)),
            Word("SET", ("R10", "R11")),
        ],
        {"R5": a, "R6": b},
    )
    assert state["R7"].tolist() == [[True, False, False, False]]
    assert (state["R9"] == state["R7"]).all() and state["R10"].all()
    assert from_planes(state, ["R5", "R6"], signed=True).tolist() == [[0, 1, -2, -1]]


def test_where_keeps_a_bit_in_flag_and_all_sets_it_again():
    a, b = to_planes(np.array([[0, 1, 2, 3]]), ["R5", "R6"]).values()
    words = [Word("WHERE", ("FLAG",), ("R5", "R6")), Word("MOV", ("R7",), ("FLAG",)), Word("ALL", ("FLAG",))]
    state = run_words(words, {"R5": a, "R6": b})
    assert state["R7"].tolist() == [[False, True, True, True]] and state["FLAG"].all()
    assert [str(w) for w in words] == ["WHERE(R5, R6);", "MOV(R7, FLAG);", "ALL();"]


@pytest.mark.parametrize(
    "word",
    [
        Word("NOR", ("R5",), ("R5", "R6")),
        Word("OR", ("R5",), ("R6",)),
        Word("MOV", ("FLAG",), ("R5",)),
        Word("DNEWS0", ("R5",), ("R5",)),
        Word("WHERE", ("R5",), ("R6",)),
        Word("ALL", ("R5",)),
    ],
)
def test_illegal_words(word):
    with pytest.raises(SimulationError):
        check_word(word)


def test_networks_compute_their_truth_tables():
    for (k, targets), gates in [*NETWORKS.items(), *NARROW_NETWORKS.items()]:
        assert set(targets) <= set(run_network(k, gates))
    # the narrow full adder keeps at most 2 signals live beside its 3 inputs (5 at once), the short one 3
    for table, most in ((NETWORKS, 6), (NARROW_NETWORKS, 5)):
        gates = table[(3, (150, 232))]
        words = [
            Word(kind, (f"%{3 + j}",), tuple(f"%{s}" for s in srcs)) for j, (kind, srcs) in enumerate(gates)
        ]
        tables = run_network(3, gates)
        outputs = [f"%{tables.index(t)}" for t in (150, 232)]
        assert dreg_alloc.live_peak(words, ["%0", "%1", "%2"], outputs) == most
    half_adder = (truth_table(2, lambda a, b: a ^ b), truth_table(2, lambda a, b: a & b))
    gates = shortest_network(2, tuple(sorted(half_adder)))
    assert len(gates) == 5 and set(half_adder) <= set(run_network(2, gates))


def _plan(instrs):
    return Program("t", [(0, "A")], instrs, [(instrs[-1].results[0], "A")])


PLANS = {
    "add": [Instr("movx", (1,), (0,), ("east",)), Instr("add", (2,), (1, 0))],
    "addx": [Instr("movx", (1,), (0,), ("north",)), Instr("addx", (2,), (1, 0), ("west",))],
    "sub": [Instr("movx", (1,), (0,), ("south",)), Instr("sub", (2,), (1, 0))],
    "neg": [Instr("neg", (1,), (0,))],
    "double and halve": [
        Instr("add", (1,), (0, 0)),
        Instr("movx", (2,), (1,), ("east",)),
        Instr("add", (3,), (2, 1)),
        Instr("div4", (4,), (3,)),
    ],
}


@pytest.mark.parametrize("bits", [None, 2])
@pytest.mark.parametrize("name", PLANS)
def test_lowered_plans_are_exact(name, bits):
    plan = _plan(PLANS[name])
    filt = Filter.of_goals("t", plan.output_goals([Goal.identity(1)]), 0)
    if bits is not None and name == "double and halve":
        with pytest.raises(CainError, match="halves"):
            digital.digital_program(plan, filt, Encoding((3,), bits))
        return
    program = digital.digital_program(plan, filt, Encoding((3,), bits))
    digital.verify_digital(program)
    images = digital.test_images(program.encoding, 1, size=9)
    for got, want in zip(program.run(images), program.expected(images), strict=True):
        m = program.margin
        assert (got[..., m : 9 - m, m : 9 - m] == want[..., m : 9 - m, m : 9 - m]).all()
    signed = [s for _, _, s in program.outputs]
    assert signed == [bits is None and name in ("sub", "neg")]
    assert program.margin == reach(plan)  # the words' reach is the plan's
    read_back = digital.program_of(digital.kernel_op(program))
    assert (read_back.words, read_back.outputs, read_back.margin) == (
        program.words,
        program.outputs,
        program.margin,
    )
    assert read_back.encoding.bits == bits and read_back.goals == program.goals


def test_verification_catches_a_wrong_word():
    plan = _plan(PLANS["sub"])
    program = digital.digital_program(
        plan, Filter.of_goals("t", plan.output_goals([Goal.identity(1)]), 0), Encoding((2,))
    )
    i = next(i for i, w in enumerate(program.words) if w.kind == "NOR")
    program.words[i] = Word("OR", program.words[i].dests, program.words[i].srcs)
    with pytest.raises(CainError, match="wrongly"):
        digital.verify_digital(program)


NEIGHBOURS = """
filter neighbours
option mode = digital
output N -> B = [1 1 1; 1 0 1; 1 1 1]
"""


def test_binary_neighbour_count_end_to_end():
    result = cain.compile(NEIGHBOURS, budget=300)
    assert result.digital is not None and result.icws == len(result.digital.words)
    assert "scamp5_kernel_begin();" in result.c and " * input A: R" in result.c
    assert "(bit 0 first, unsigned)" in result.c
    ((_, regs, signed),) = result.digital.outputs
    assert len(regs) == 4 and not signed
    image = (np.random.default_rng(3).random((10, 10)) < 0.5).astype(np.int64)
    got = result.simulate(image)[0]
    want = sum(shift(image, (x, y)) for x in (-1, 0, 1) for y in (-1, 0, 1) if (x, y) != (0, 0))
    assert (got[1:-1, 1:-1] == want[1:-1, 1:-1]).all()
    assert set(result.digital.dregs) <= {"R0", *FLAGS.values(), *(f"R{i}" for i in range(5, 12))}


def test_a_program_past_the_kernel_store_runs_as_several_kernels():
    """Past the limit the words are cut into the fewest kernels of at most `limit` ICWs, in order (the DREGs
    keep their values between kernels, so the cut program runs the verified words); the header says so."""
    result = cain.compile(NEIGHBOURS, budget=300)
    program = result.digital
    limit = len(program.words) // 3 + 1
    kernels = digital.word_kernels(program.words, limit)
    assert len(kernels) == 3 and all(len(k) <= limit for k in kernels)
    assert [w for k in kernels for w in k] == program.words
    c = digital.emit_digital(program, ["A"], limit)
    assert c.count("scamp5_kernel_begin();") == 3 and c.count("move_to_heap(true);") == 3
    assert "run as 3 SDK kernels of" in c
    assert digital.emit_digital(program, ["A"]).count("scamp5_kernel_begin();") == 1


def test_too_wide_for_the_dreg_file_is_a_clear_error():
    """Two 2x2 kernels of a 3-bit image end in 11 bits, within the 13 DREGs of a PE: none of Cain's plans
    fits, but no bound rules a program out, and the error says so."""
    text = (
        "option mode = digital\noption input_bits = 3\n"
        "output K0 -> A = [1 1; 1 0]\noutput K1 -> B = [1 0; -2 -1]"
    )
    with pytest.raises(
        dreg_alloc.DigitalAllocationError, match=r"Cain's programs need \d+ DREGs at once"
    ) as e:
        cain.compile(text, budget=100)
    assert "none found that fits (a schedule may exist: every program needs at least 11" in str(e.value)
    assert not e.value.proven and e.value.needed > len(DATA_DREGS)


def test_an_output_of_more_values_than_a_move_leaves_bits_provably_cannot_fit():
    """An 8-bit 3x3 box ends in 12 bits, within the PE's 13 DREGs, but takes 2296 values at a pixel: more
    than the 2^11 that the 11 bits a PE can hold across its last move tell apart. Said without a search."""
    text = "option mode = digital\noption input_bits = 8\noutput B = [1 1 1; 1 1 1; 1 1 1]"
    filt = cain.read_filters(text)[0]
    assert digital_bound.move_bits(filt.encoding)[0] == 11
    assert digital_bound.values(filt.final_goals(), filt.encoding, 10**4) == 9 * 255 + 1
    with pytest.raises(dreg_alloc.DigitalAllocationError, match="B takes at least 2296") as e:
        cain.compile(text, budget=10**6)  # the proof needs no search: a million nodes would take minutes
    assert e.value.proven and e.value.needed == 12
    # a 4-bit box takes 136 values: no proof, and a program fits (the bit-plane plan's)
    four = cain.read_filters(text.replace("= 8", "= 4"))[0]
    assert digital_bound.value_proof(four, four.encoding) is None


def test_outputs_of_more_values_together_than_a_move_leaves_bits_provably_cannot_fit():
    """Two 3x3 kernels of a 3-bit image end in 12 bits, within the PE's 13 DREGs, and each takes 64
    values, but the pair takes 2710: more than the 2^11 the bits held across the last move tell apart."""
    text = (
        "option mode = digital\noption input_bits = 3\n"
        "output B -> A = [1 1 1; 1 1 1; 1 1 1]\noutput G -> B = [1 -1 0; 2 0 -2; 1 1 -1]"
    )
    filt = cain.read_filters(text)[0]
    assert digital_bound.filter_bound(filt, filt.encoding).needed == 12
    assert [digital_bound.values([g], filt.encoding, 10**4) for g in filt.final_goals()] == [64, 64]
    with pytest.raises(dreg_alloc.DigitalAllocationError, match="outputs B, G take together at least 2") as e:
        cain.compile(text, budget=10**6)
    assert e.value.proven


@pytest.mark.parametrize(
    ("matrices", "bits", "width"),
    [
        ([[[1, -2, 3]]], 2, None),
        ([[[2, 2], [0, 1]]], 3, None),
        ([[[1, 3, 1]]], 2, 3),
        ([[[1, 1, 0]], [[0, 1, -2]]], 2, None),
        ([[[1, 2, 1]], [[-1, 0, 1]]], 2, 3),
    ],
)
def test_outputs_values_are_counted_as_brute_force_finds_them(matrices, bits, width):
    goals = [Goal.from_matrices([m]) for m in matrices]
    encoding = Encoding((bits,), width)
    positions = sorted({atom for goal in goals for atom, _ in goal})
    tuples = set()
    for values in np.ndindex(*([1 << bits] * len(positions))):
        image = dict(zip(positions, values, strict=True))
        sums = tuple(sum(c * image[atom] for atom, c in goal) for goal in goals)
        tuples.add(sums if width is None else tuple(s % (1 << width) for s in sums))
    assert digital_bound.values(goals, encoding, 10**6) == len(tuples)


BOX4 = [
    Instr("movx", (1,), (0,), ("north",)),
    Instr("movx", (2,), (0,), ("south",)),
    Instr("add", (3,), (2, 1)),
    Instr("add", (4,), (0, 3)),
    Instr("movx", (5,), (4,), ("east",)),
    Instr("movx", (6,), (4,), ("west",)),
    Instr("add", (7,), (5, 4)),
    Instr("add", (8,), (6, 7)),
]


@pytest.mark.parametrize("variant", digital_order.VARIANTS)
@pytest.mark.parametrize("name", [*PLANS, "3x3 box"])
def test_words_reordered_bit_plane_by_bit_plane_compute_the_same(name, variant):
    """The reordered words (narrow cells, set-ups where the side changes) verify bit for bit; on the 3x3 box
    of a 4-bit image they hold 12 bits at once where the plan's order holds 21."""
    plan = _plan(BOX4 if name == "3x3 box" else PLANS[name])
    filt = Filter.of_goals("t", plan.output_goals([Goal.identity(1)]), 0)
    wide = Encoding((4,), dregs=DATA_DREGS + tuple(f"R{i}" for i in range(13, 40)))
    words = partial(digital_order.reorder, variant=variant)
    program = digital.digital_program(plan, filt, wide, words)
    digital.verify_digital(program)
    if name == "3x3 box":
        peaks = []
        for narrow, reorder in ((False, None), (True, words)):
            low, inputs, outputs = digital.lower(plan, filt, wide, narrow)
            out = [[str(b) for b in v.bits] for v in outputs]
            kept = reorder(low.words, out) if reorder else low.words
            peaks.append(
                dreg_alloc.live_peak(kept, [str(b) for b in inputs[0].bits], [b for o in out for b in o])
            )
        assert peaks == [21, 12]


@pytest.mark.slow
def test_reordered_words_of_random_filters_are_exact():
    """The bit-plane reordering of the plans of 25 random signed filters of the digital fuzz campaign (both
    variants, on a DREG file large enough for any order) verifies bit for bit, and again on fresh images."""
    from benchmarks import digital as bench

    rng = random.Random(5)
    wide = DATA_DREGS + tuple(f"R{i}" for i in range(13, 70))
    for i in range(25):
        filt = cain.read_filters(bench.kernel_file(rng, i))[0]
        encoding = replace(filt.encoding, dregs=wide)
        plan = compile_digital(filt, encoding, 30).plan
        for variant in digital_order.VARIANTS:
            words = partial(digital_order.reorder, variant=variant)
            program = digital.digital_program(plan, plan_filter(filt, encoding), encoding, words)
            digital.verify_digital(program)
            assert bench.recheck(program, i)


def test_a_filter_fits_only_with_its_words_reordered():
    """A 2x2 box of a 3-bit image on six data DREGs: its plan in either order needs 11 bits at once; bit
    plane by bit plane it fits (the direction flags holding temporaries between moves)."""
    text = "option mode = digital\noption input_bits = 3\noption dregs = R5 R6 R7 R8 R9 R10\noutput B = [1 1; 1 1]"
    result = cain.compile(text, budget=100)
    program = result.digital
    assert set(program.dregs) <= {*FLAGS.values(), "R5", "R6", "R7", "R8", "R9", "R10"}
    filt = cain.read_filters(text)[0]
    for plan in (program.plan, digital.schedule(program.plan, filt.encoding)):
        with pytest.raises(dreg_alloc.DigitalAllocationError):
            digital.digital_program(plan, plan_filter(filt, filt.encoding), filt.encoding)
    image = np.random.default_rng(1).integers(0, 8, size=(12, 12))
    want = sum(shift(image, (x, y)) for x in (-1, 0) for y in (0, 1))
    assert (result.simulate(image)[0][2:-2, 2:-2] == want[2:-2, 2:-2]).all()


SOBEL = """option mode = digital
option input_bits = 8
output X -> A = [1 0 -1; 2 0 -2; 1 0 -1]
output Y -> B = [1 2 1; 0 0 0; -1 -2 -1]
"""


def test_a_filter_that_provably_cannot_fit_says_so_without_searching():
    """The Sobel pair on 8 bits ends in 11 + 11 output bits, of which the witnesses tell 21 apart (bit 0 of
    both is the parity of the four corners): more than the PE's 13 DREGs, whatever the program."""
    filt = cain.read_filters(SOBEL)[0]
    bound = digital_bound.filter_bound(filt, filt.encoding)
    assert (bound.needed, bound.widths) == (21, (("X", 11), ("Y", 10)))
    assert bound.capacity == (*DATA_DREGS, *FLAGS.values(), "R12") and bound.proves_no_fit
    with pytest.raises(
        dreg_alloc.DigitalAllocationError, match="no program fits .*21 different non-constant bits"
    ):
        cain.compile(SOBEL, budget=10**6)  # the proof needs no search: a million nodes would take minutes
    # the witnesses prove it: every counted bit is non-constant, and no two counted bits are equal
    atoms, windows = digital_bound.witness_windows(filt.final_goals(), filt.encoding)
    bits = [
        b for out in digital_bound.output_bits(filt.final_goals(), filt.encoding, windows, atoms) for b in out
    ]
    distinct = {b.tobytes() for b in bits if b.any() and not b.all()}
    assert len(distinct) == 21 and len(bits) == 22


def test_the_bound_counts_r12_only_when_r0_is_free_and_never_more_than_a_program_holds():
    """Without R0 the PE cannot write R12; a binary image's 2x2 box and pair sum (3 + 2 bits) fit, and the
    program ends holding at least the bound's bits."""
    assert digital_bound.capacity(Encoding((1,), dregs=("R5", "R6"))) == ("R5", "R6", *FLAGS.values())
    text = "option mode = digital\noutput B = [1 1; 1 1]\noutput C = [1 0 1]"
    result = cain.compile(text, budget=100)
    filt = cain.read_filters(text)[0]
    bound = digital_bound.filter_bound(filt, filt.encoding)
    assert not bound.proves_no_fit and bound.needed == 5
    assert len({r for _, regs, _ in result.digital.outputs for r in regs}) >= bound.needed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("option bits = 2\noutput B = [1 1]", "add `option mode = digital`"),
        ("option mode = digital\noption bits = 0\noutput B = [1 1]", "bits must be an integer from 1 to 32"),
        ("option mode = digital\noption dregs = R1 R5\noutput B = [1 1]", "direction flags"),
        ("option mode = quantum\noutput B = [1 1]", "unknown mode"),
    ],
)
def test_option_errors(text, message):
    with pytest.raises(CainError, match=message):
        cain.compile(text, budget=10)


def test_the_dreg_dialect_prints_and_parses_back():
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser

    plan = _plan(PLANS["sub"])
    program = digital.digital_program(
        plan, Filter.of_goals("t", plan.output_goals([Goal.identity(1)]), 0), Encoding((2,))
    )
    text = str(ModuleOp([digital.kernel_op(program)]))
    module = Parser(register_dialects(Context()), text).parse_module()
    module.verify()
    (kernel,) = module.body.block.ops
    assert str(module) == text and kernel.words() == program.words
    bad = text.replace("dreg.NOR [", 'dreg.NOR ["R5", ', 1)
    with pytest.raises(Exception, match="takes 1 to 1 destinations|a destination is never also a source"):
        Parser(register_dialects(Context()), bad).parse_module().verify()


JAVA_BOX = Path(__file__).parent.parent.parent / "examples" / "json" / "digitalBox.json"


def test_the_digital_encoding_survives_the_goal_and_plan_ir():
    from cain.dialects.goal import filter_from_op, filter_to_op
    from xdsl.context import Context
    from xdsl.parser import Parser

    from cain.backend.convert import kernel_from_program

    filt = parse_json(JAVA_BOX.read_text(), "digitalBox.json")
    assert filt.encoding is not None and filt.encoding.bits == 2
    text = str(filter_to_op(filt))
    assert filter_from_op(Parser(register_dialects(Context()), text).parse_op()).encoding == filt.encoding
    plan = _plan(PLANS["add"])
    integer = replace(Filter.of_goals("t", plan.output_goals([Goal.identity(1)]), 0), encoding=filt.encoding)
    kernel = Parser(register_dialects(Context()), str(kernel_from_program(plan, integer))).parse_op()
    assert kernel.filter == integer


def test_dreg_ir_from_a_file_is_verified_again():
    plan = _plan(PLANS["add"])
    filt = Filter.of_goals("t", plan.output_goals([Goal.identity(1)]), 0)
    program = digital.digital_program(plan, filt, Encoding((2,)))
    words = [Word("OR", w.dests, w.srcs) if w.kind == "NOR" else w for w in program.words]
    wrong = digital.program_of(digital.kernel_op(replace(program, words=words)))
    with pytest.raises(CainError, match="computes out0 wrongly"):
        digital.ensure_digital_verified(wrong)


def test_java_digital_config_is_read_as_the_old_tool_means_it():
    filt = parse_json(JAVA_BOX.read_text(), "digitalBox.json")
    assert filt.encoding == Encoding((2,), bits=2)  # placeholders DA1.. leave the DREGs to Cain
    text = (
        JAVA_BOX.read_text().replace('"DA1","DA2"', '"R9","R10"').replace('["DA1", "DA2"]', '["R9", "R10"]')
    )
    text = text.replace('["DB1", "DB2"]', '["R5", "R6"]').replace('["DC1", "DC2"]', '["R7", "R8"]')
    text = text.replace('["DD1", "DD2"]', '["R11", "R0"]').replace('["S1", "S2", "S3", "S4"]', "[]")
    pinned = parse_json(text, "pinned.json").encoding
    assert pinned.input_dregs == (("R9", "R10"),) and set(pinned.dregs) == {"R0", *DATA_DREGS}


@pytest.mark.slow
def test_java_digital_box_within_90_icws_on_the_device():
    """Cain-Java's FileRunTest.testDigitalBox (its test accepts 140): at the default budget, within R5-R11
    and the direction flags."""
    filt = parse_json(JAVA_BOX.read_text(), "digitalBox.json")
    program = compile_digital(filt, replace(filt.encoding, dregs=DATA_DREGS[:7]), budget=6000)
    assert program.icws <= 90
    assert set(program.dregs) <= {*FLAGS.values(), *DATA_DREGS[:7]}


def test_simulate_takes_integer_images_of_the_input_width():
    result = cain.compile(NEIGHBOURS, budget=100)
    with pytest.raises(CainError, match="unsigned integer images of 1 bit"):
        result.simulate(np.full((6, 6), 2))
    assert set(np.unique(result.quantized(np.arange(36.0).reshape(6, 6)))) == {0, 1}


def test_digital_benchmark_fuzz_runs_and_counts(tmp_path):
    from benchmarks import digital as bench

    goal = Goal.from_matrices([[[0, 1, 0], [2, 0, -1], [0, 0, 3]]])
    images = np.random.default_rng(5).integers(0, 4, size=(1, 2, 7, 7))
    want = sum(c * shift(images[z], (x, y)) for (x, y, z), c in goal)
    assert (bench.correlation(images, goal) == want).all()
    assert bench.main(["fuzz", "--samples", "2", "--budget", "20", "--out", str(tmp_path)]) == 0
    summary = (tmp_path / "fuzz" / "summary.md").read_text()
    assert "| crash   | 0       |" in summary and "| wrong   | 0       |" in summary


DIGITAL_REGRESSIONS = sorted((Path(__file__).parents[1] / "regressions" / "digital").glob("*.cain"))
"""Filters the digital fuzz campaign (`python -m benchmarks.digital fuzz`) failed on, kept as it found them."""


@pytest.mark.slow
@pytest.mark.parametrize("path", DIGITAL_REGRESSIONS, ids=lambda p: p.stem)
def test_digital_fuzz_regressions_compile_to_verified_programs_or_say_they_do_not_fit(path):
    try:
        result = cain.compile(path.read_text(), budget=300)
    except dreg_alloc.DigitalAllocationError:
        return
    assert result.digital is not None


@pytest.mark.parametrize("bits", [None, 3, 5])
def test_widths_are_the_ranges_and_at_most_the_fixed_width(bits):
    """A value is as wide as its range needs in two's complement (unsigned when never negative); with a fixed
    width, never wider than it, and then unsigned modulo 2^bits. In offset binary it is as wide as its
    largest plus the offset."""
    encoding = Encoding((2,), bits)
    for counts in itertools.product(range(-3, 4), repeat=3):
        goal = Goal(((x, 0, 0), c) for x, c in enumerate(counts) if c)
        low, high = encoding.range(goal)
        values = {
            sum(c * v for c, v in zip(counts, vs, strict=True))
            for vs in itertools.product(range(4), repeat=3)
        }
        assert (low, high) == (min(values), max(values))
        width, signed = encoding.width(goal)
        if bits is not None and width == bits and not signed:
            continue  # wraps (or fits exactly unsigned): every value modulo 2^bits
        fits = range(-(1 << (width - 1)), 1 << (width - 1)) if signed else range(1 << width)
        assert all(v in fits for v in values) and (signed or low >= 0)
        narrower = (
            range(-(1 << (width - 2)), 1 << (width - 2))
            if signed and width > 1
            else range(1 << max(width - 1, 0))
        )
        assert width == 0 or not all(v in narrower for v in values)  # one bit fewer would not do
        held, offset = encoding.held(goal, -low)
        if bits is None or (high - low).bit_length() <= bits:
            assert (held, offset) == ((high - low).bit_length(), -low)


@pytest.mark.parametrize("name", ["gauss", "sobel", "lopsided"])
@pytest.mark.parametrize("bits", [None, 4])
def test_plans_lowered_in_offset_binary_are_exact_and_keep_no_more_bits_live(name, bits):
    """In offset binary a difference is a sum of the complement: every value is never negative, the outputs
    lose their offsets at the end, and the program is exact. Values whose ranges are lopsided about 0 are
    narrower than in two's complement (unless they wrap), so fewer bits are live at the moves."""
    kernels = {
        "gauss": ["[1 2 1; 2 4 2; 1 2 1]"],
        "sobel": ["[1 0 -1; 2 0 -2; 1 0 -1]", "[1 2 1; 0 0 0; -1 -2 -1]"],
        "lopsided": ["[1 2 -1; 2 -1 1; 1 2 0]", "[0 0 1; 1 1 2; 0 -2 0]"],
    }[name]
    lines = ["option mode = digital", "option input_bits = 2"] + [f"option bits = {bits}"] * (
        bits is not None
    )
    lines += [f"output K{k} -> {'AB'[k]} = {m}" for k, m in enumerate(kernels)]
    filt = cain.read_filters("\n".join(lines))[0]
    wide = replace(filt.encoding, dregs=DATA_DREGS + tuple(f"R{i}" for i in range(13, 60)))
    split = plan_filter(filt, wide, planes=True)
    plan = planes.plane_plan(split)
    peaks = []
    for offsets in (False, True):
        low, inputs, outputs = digital.lower(plan, split, split.encoding, offsets=offsets)
        bits_in = [str(b) for v in inputs for b in v.bits]
        peaks.append(dreg_alloc.move_peak(low.words, bits_in, [str(b) for v in outputs for b in v.bits]))
        program = digital.digital_program(plan, split, split.encoding, offsets=offsets)
        digital.verify_digital(program, seed=2)
    assert peaks[1] <= peaks[0]
    if name == "lopsided" and bits is None:  # at 4 bits its sums wrap: as wide either way
        assert peaks[1] < peaks[0]


@pytest.mark.slow
def test_an_input_bit_that_is_also_an_output_bit_and_is_parked_still_arrives_in_its_dreg():
    """fuzz0_264's bit 0 of K0 is the input's bit 0; parked in R12, it was named as the input's register
    too, so the program read its input from R12 (random) and failed verification. Inputs arrive where they
    are pinned, whatever register holds their bit at the end."""
    path = Path(__file__).parents[1] / "regressions" / "digital" / "fuzz0_264.cain"
    result = cain.compile(path.read_text(), budget=1000)
    program = result.digital
    assert program.inputs == [("A", ("R5", "R6"))]
    assert "R12" in program.outputs[0][1]  # the parked input bit, as an output
    digital.verify_digital(program, seed=5)


TWO_KERNELS = {
    "lopsided": "output K0 -> A = [1 2 -1; 2 -1 1; 1 2 0]\noutput K1 -> B = [0 0 1; 1 1 2; 0 -2 0]",
    "crowded": "output K0 -> A = [-2 1 2; -1 2 -1; -2 0 2]\noutput K1 -> B = [0 1 -1; 1 1 1; -1 1 -2]",
}


def _two_kernels(name: str, budget: int = 300):
    """The two-kernel binary filter `name` compiled, verified and checked against the convolution."""
    text = f"option mode = digital\noption input_bits = 1\n{TWO_KERNELS[name]}"
    result = cain.compile(text, budget=budget)
    digital.verify_digital(result.digital, seed=4)
    filt = cain.read_filters(text)[0]
    image = np.random.default_rng(2).integers(0, 2, size=(12, 12))
    for got, goal in zip(result.simulate(image), filt.final_goals(), strict=True):
        want = sum(c * shift(image, (x, y)) for (x, y, _), c in goal)
        assert (got[2:-2, 2:-2] == want[2:-2, 2:-2]).all()
    return text, result


@pytest.mark.slow
def test_a_two_kernel_binary_filter_fits_only_with_parks(monkeypatch):
    """Two 3x3 kernels of a binary image (fuzz campaign 0's filter 60): the searched and bit-plane plans fit
    the device only with the bits at the crowded moves parked in R12 and FLAG. Without those parks only an
    accumulator plan fits (one running sum at a time), and without it too nothing does. Each program is
    exact."""
    text, parked = _two_kernels("crowded")
    assert not parked.digital.plan.name.endswith("_accumulators")
    for what in ("sequential_parks", "spanning_parks"):
        monkeypatch.setattr(digital, what, lambda *_: iter(()))
    _, alone = _two_kernels("crowded")
    assert alone.digital.plan.name.endswith("_accumulators")
    monkeypatch.setattr("cain.search.digital.accumulator_program", lambda *_: None)
    with pytest.raises(dreg_alloc.DigitalAllocationError):
        cain.compile(text, budget=300)


@pytest.mark.slow
def test_a_plan_that_does_not_fit_does_not_cut_off_one_that_does(monkeypatch):
    """Fuzz campaign 0's filter 7 fitted only in offset binary, in 285 ICWs at 300 nodes: a short plan that
    did not fit bounded the search, and the plans it reached needed 13 DREGs in two's complement. A plan
    that does not fit now bounds nothing (`Worker._offer`): the search goes on to one that fits in two's
    complement, shorter, and exact."""
    monkeypatch.setattr("cain.search.digital.OFFSET", [])
    _, result = _two_kernels("lopsided")
    assert result.icws < 285


def test_the_value_proof_does_not_count_when_the_outputs_bits_fit_after_the_last_move(monkeypatch):
    """On a DREG file larger than the device's (the benchmarks' hypothetical file), the outputs' own bits are
    fewer than a PE holds after its last move, so no proof can come of counting their values: none is tried
    (the Sobel pair of 8-bit images took a minute to count)."""
    filt = cain.read_filters(SOBEL)[0]
    wide = replace(filt.encoding, dregs=DATA_DREGS + tuple(f"R{i}" for i in range(13, 70)))

    def never(*_):
        raise AssertionError("counted")

    monkeypatch.setattr(digital_bound, "values", never)
    assert digital_bound.value_proof(filt, wide) is None
    assert digital_bound.proven_no_fit(filt, filt.encoding) is not None  # on the device: the outputs' 21 bits
