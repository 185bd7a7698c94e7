"""The emitted C, compiled against a stand-in for the SCAMP-5d SDK (tests/c) and run on random images,
matches the direct correlation with the approximated kernels."""

import numpy as np
import pytest
from cain.passes.bus_synth import BusSynthPass
from cain.passes.expand_bus import ExpandBusPass
from cain.passes.regalloc import RegallocPass
from handwritten import gauss3_all, gauss3_basic, gauss3_filter
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

import cain
from benchmarks.stand_in import CXX, SIZE, compile_and_run, exact_margin
from cain.backend.c_names import c_identifier
from cain.backend.convert import kernel_from_program
from cain.backend.emit_c import CTarget
from cain.backend.sim import correlate, random_images, reach
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.program import Instr, Program

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler")


def every_macro() -> tuple[Program, list[Goal]]:
    """Two input channels, every macro of the table at least once, two outputs."""
    p = Program(
        "every macro",
        [(0, "A"), (1, "B")],
        [
            Instr("movx", (2,), (0,), ("east",)),
            Instr("mov2x", (3,), (1,), ("north", "west")),
            Instr("add", (4,), (2, 3)),
            Instr("add3", (5,), (0, 1, 4)),
            Instr("addx", (6,), (5, 2), ("south",)),
            Instr("add2x", (7,), (6, 0), ("east", "east")),
            Instr("sub", (8,), (7, 1)),
            Instr("subx", (9,), (8, 0), ("west",)),
            Instr("sub2x", (10,), (9, 3), ("north", "north")),
            Instr("neg", (11,), (10,)),
            Instr("mov", (12,), (11,)),
            Instr("divq", (13,), (12,)),
            Instr("div", (14,), (13,)),
            Instr("res", (15,), ()),
            Instr("res2", (16, 17), ()),
            Instr("add3", (18,), (14, 15, 16)),
            Instr("div", (19,), (0,)),
        ],
        [(18, "C"), (17, "D"), (19, "A")],
    )
    inputs = [Goal.identity(4, 0), Goal.identity(4, 1)]
    return p, inputs


def filter_for(program: Program, goals: list[Goal], depth: int) -> Filter:
    """A filter computing `goals` exactly in the registers `program` uses."""
    inputs, outputs = [r for _, r in program.inputs], [r for _, r in program.outputs]
    return Filter.of_goals(program.name, goals, depth, inputs, outputs)


@pytest.mark.parametrize(
    "level, program, filter_register",
    [
        ("macro", gauss3_basic, "A"),
        ("bus", gauss3_all, "B"),
        ("synth", gauss3_basic, "A"),
        ("synth", gauss3_all, "B"),
    ],
)
def test_gaussian_runs_as_c(level, program, filter_register, tmp_path):
    f = gauss3_filter(filter_register)
    p = program()
    module = ModuleOp([kernel_from_program(p, f)])
    RegallocPass().apply(Context(), module)
    if level == "bus":
        ExpandBusPass().apply(Context(), module)
    if level == "synth":
        BusSynthPass().apply(Context(), module)
    text = CTarget().text(module)
    assert ("bus2(" in text) == (level != "macro")
    images = random_images(1, 1, SIZE, seed=5)
    (out,) = compile_and_run(text, "gauss3", ["A"], [filter_register], images[:, 0], tmp_path)
    expected = correlate(images[:, 0], f.kernels[0].goal, f.depth)
    m = reach(p)
    assert np.allclose(out[m:-m, m:-m], expected[m:-m, m:-m], atol=1e-9)
    # not vacuous: the blur differs from its input (a program's edge pixels may or may not be exact: a bus
    # program reading only the input through NEWS sees the same zeros beyond the edge as the correlation)
    assert not np.allclose(out[m:-m, m:-m], images[0, 0][m:-m, m:-m])


@pytest.mark.parametrize("level", ["macro", "synth"])
def test_every_macro_runs_as_c(level, tmp_path):
    p, inputs = every_macro()
    goals = p.output_goals(inputs)
    module = ModuleOp([kernel_from_program(p, filter_for(p, goals, 2))])
    RegallocPass().apply(Context(), module)
    if level == "synth":
        BusSynthPass().apply(Context(), module)
        counts = next(iter(module.ops)).counts
        assert counts["icws"] < counts["expansion_icws"]  # fewer micro-ops than the macros' expansion has
    text = CTarget().text(module)
    if level == "synth":
        assert "bus2(" in text and "optimised at bus level" in text
    else:
        for call in ("mov2x(", "add2x(", "sub2x(", "subx(", "divq(", "div(", "res(", "neg("):
            assert call in text
    images = random_images(2, 1, SIZE, seed=9)[:, 0]
    outs = compile_and_run(text, c_identifier(p.name), ["A", "B"], ["C", "D", "A"], images, tmp_path)
    # the header's margin: exact from it inwards, and not one ring further out (moves off the array)
    m = exact_margin(text)
    if level == "macro":
        assert m == reach(p)
    inner, wider = (slice(m, SIZE - m),) * 2, (slice(m - 1, SIZE - m + 1),) * 2
    wrong = []
    for out, goal in zip(outs, goals, strict=True):
        expected = correlate(images, goal, 2)
        assert np.allclose(out[inner], expected[inner], atol=1e-9)
        wrong.append(not np.allclose(out[wider], expected[wider], atol=1e-9))
    assert any(wrong)


def test_header_prints_no_scale_at_depth_0():
    p = Program("copy", [(0, "A")], [Instr("mov", (1,), (0,))], [(1, "B")])
    one = Goal.identity(1)
    for depth, head in ((0, " * out0 ="), (2, " * out0 = 1/4 x")):
        module = ModuleOp([kernel_from_program(p, filter_for(p, [one.scaled(2**depth)], depth))])
        RegallocPass().apply(Context(), module)
        lines = CTarget().text(module).splitlines()
        assert lines[lines.index(head) + 1].split() == ["*", "[", str(2**depth), "]"]


@pytest.mark.slow
def test_a_filter_named_after_a_reserved_word_gives_a_function_cpp_compiles(tmp_path):
    assert [c_identifier(n) for n in ("long", "2x", "a-b", "class")] == ["long_", "_2x", "a_b", "class_"]
    compiled = cain.compile("filter long\ninput A\noutput k -> B = [1 1]\n", budget=200, level="macro")
    assert "void long_(void)" in compiled.c
    images = random_images(1, 1, SIZE, seed=3)[:, 0]
    (out,) = compile_and_run(compiled.c, "long_", ["A"], ["B"], images, tmp_path)
    expected = correlate(images, compiled.filter.kernels[0].goal, compiled.filter.depth)
    assert np.allclose(out[1:-1, 1:-1], expected[1:-1, 1:-1], atol=1e-9)
