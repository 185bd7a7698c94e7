"""Property-based tests (hypothesis) over the whole pipeline and the readers.

Random kernel files (benchmarks.fuzz.kernel_file: kernels, channels, sizes, scales, approximation,
registers, both instruction sets) go through search at tiny node budgets, regalloc and emit: every one gets
a program (the constructive fallback when the search has none), which is verified again here and, on
SCAMP-5d's own registers, compiled as C against the SDK stand-in and run. Mangled kernel files, JSON
configs and goal / scamp5 IR give a one-line error and exit 1, never a traceback. Deterministic
(`derandomize=True`, fixed `max_examples`); the long campaign is `python -m benchmarks.fuzz`.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from cain.dialects.goal import FilterOp, filter_from_op
from cain.dialects.scamp5 import KernelOp
from cain.passes.regalloc import RegallocPass
from cain.passes.search import SearchPass
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.context import Context

import cain
from benchmarks.stand_in import CXX, SIZE, compile_and_run
from cain.diagnostics import CainError

ROOT = Path(__file__).resolve().parents[2]

from benchmarks import common, fuzz
from benchmarks.fuzz import CASES_DIR, cain_opt, kernel_file, regression_failure
from cain.backend.c_names import c_identifier
from cain.backend.convert import program_from_kernel
from cain.backend.emit_c import CTarget
from cain.backend.sim import correlate, random_images, reach
from cain.backend.verify import verify_kernel
from cain.frontend.kernel import lower_source
from cain.search.constructive.program import candidates, registers_needed

FAST = settings(
    max_examples=12, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def kernel_files(draw, most_registers: int = 8) -> str:
    return kernel_file(lambda lo, hi: draw(st.integers(lo, hi)), "fuzz", most_registers)


def lowered(text: str):
    """The kernel file read into the goal dialect (a kernel of zero weights, or of weights that round to
    zero, is an error of the file, which the reader reports: not a filter to test)."""
    try:
        return lower_source(text, "fuzz.cain")
    except CainError as e:
        assume("all its weights are zero" not in e.message and "rounds to zero" not in e.message)
        raise


def compile_module(text: str, budget: int = 20):
    """The kernel file through search (at `budget` nodes) and regalloc, in this process. A filter of the one
    class Cain may find no program for (once the other kernels are made every register is taken while the
    inputs are still read: docs/search-design.md, "One kernel over the inputs") is not a filter to test,
    when the error says so."""
    module = lowered(text)
    try:
        for p in (SearchPass(budget=budget, quiet=True), RegallocPass()):
            p.apply(Context(), module)
    except CainError as e:
        assume("found no program" not in e.message or "formed over an input" not in e.message)
        raise
    return module


@pytest.mark.slow
@FAST
@given(kernel_files())
def test_every_random_filter_gets_a_verified_program(text):
    module = compile_module(text)
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert kernels
    for kernel in kernels:
        report = verify_kernel(kernel, images=1, size=40)  # independently of the passes' own checks
        assert report.ok and report.macros == len(program_from_kernel(kernel).instrs)
    c_text = CTarget().text(module)
    on_device = all(r in "ABCDEF" for r in kernels[0].filter.registers)
    assert ("HYPOTHETICAL" not in c_text) or not on_device


@pytest.mark.slow
@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@settings(max_examples=4, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernel_files(most_registers=6))
def test_random_filters_run_as_c_against_the_sdk_stand_in(text):
    module = compile_module(text)
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    f = kernel.filter
    images = random_images(len(f.inputs), 1, SIZE, seed=11)[:, 0]
    with tempfile.TemporaryDirectory() as tmp:
        outs = compile_and_run(
            CTarget().text(module),
            c_identifier(kernel.sym_name.data),
            [r for _, r in f.inputs],
            [k.register for k in f.kernels],
            images,
            Path(tmp),
        )
    m = reach(program_from_kernel(kernel))
    inner = (slice(m, SIZE - m), slice(m, SIZE - m))
    for out, k in zip(outs, f.kernels, strict=True):
        expected = correlate(images, k.goal, f.depth)
        assert np.allclose(out[inner], expected[inner], atol=1e-9)


SMALL = """filter small
input c0 -> A
output k0 -> B = 1/2 [1 1]
"""


@pytest.mark.slow
@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_the_compile_campaign_runs_the_printed_c_and_catches_a_wrong_one(tmp_path, monkeypatch):
    """`benchmarks.fuzz --compile`: the default compile's C runs against the stand-in and computes the
    kernels; the same C with one output register's last write dropped is `wrong`; a user mistake is an
    `error`, not a crash."""
    budget = common.Budget(nodes=10)
    passed = fuzz.compile_printed(SMALL, budget, tmp_path)
    assert passed.outcome == "passed" and passed.macros
    compiled = cain.compile(SMALL, budget=10)
    lines = compiled.c.splitlines()
    last = max(i for i, line in enumerate(lines) if line.strip().startswith("bus(B,"))
    broken = dataclasses.replace(compiled, c="\n".join(lines[:last] + lines[last + 1 :]))
    monkeypatch.setattr(fuzz, "default_compile", lambda *args, **kwargs: broken)
    wrong = fuzz.compile_printed(SMALL, budget, tmp_path)
    assert wrong.outcome == "wrong" and "kernel k0" in wrong.message
    monkeypatch.undo()
    error = fuzz.compile_printed(
        SMALL.replace("[1 1]", "[1 1") + "option registers = A B\n", budget, tmp_path
    )
    assert error.outcome == "error" and "case.cain:4:1: error: syntax error" in error.message


# -- mangled input: located errors, never a traceback ------------------------------------------------


def _cain_opt_out(*args: str) -> str:
    status, out, err = cain_opt(list(args))
    assert status == 0, err
    return out


SOURCES: dict[str, str] = {}
PIPELINES = {
    "cain": "search{budget=5 quiet=true},regalloc",
    "json": "search{budget=5 quiet=true},regalloc",
    "goal": "search{budget=5 quiet=true},regalloc",
    "scamp5": "emit",
}


def _source(kind: str) -> str:
    """A valid input of each kind: a kernel file, a JSON config, goal IR and allocated scamp5 IR."""
    if kind not in SOURCES:
        sobel = str(ROOT / "examples" / "sobel.cain")
        SOURCES[kind] = {
            "cain": lambda: (ROOT / "examples" / "rgb_luma_edge.cain").read_text(),
            "json": lambda: (ROOT / "examples" / "json" / "analognet2.json").read_text(),
            "goal": lambda: _cain_opt_out(sobel),
            "scamp5": lambda: _cain_opt_out(sobel, "-p", "search{budget=50 quiet=true},regalloc"),
        }[kind]()
    return SOURCES[kind]


@st.composite
def mangled(draw):
    """A kind of input and its text with a few random edits: deletions, insertions, replacements."""
    kind = draw(st.sampled_from(sorted(PIPELINES)))
    text = _source(kind)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(("delete", "insert", "replace", "cut")))
        piece = draw(
            st.text(alphabet=st.sampled_from('{}[]()<>,:;="-0123456789.%@!#abcxyz \n\t\x00é'), max_size=4)
        )
        if edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        elif edit == "insert":
            text = text[:at] + piece + text[at:]
        elif edit == "replace":
            text = text[:at] + piece + text[at + len(piece) :]
        else:
            text = text[:at]
    return kind, text


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mangled())
def test_mangled_input_gives_a_one_line_error_not_a_traceback(case):
    kind, text = case
    extension = {"cain": "cain", "json": "json", "goal": "mlir", "scamp5": "mlir"}[kind]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"mangled.{extension}"
        path.write_text(text)
        status, _, err = cain_opt([str(path), "-p", PIPELINES[kind]])
    assert status in (0, 1), err
    assert "Traceback" not in err
    if status == 1:
        assert "error" in err
        if kind in ("cain", "json") and "search:" not in err:
            assert f"mangled.{extension}:" in err  # the readers locate what they reject


def test_a_string_left_open_before_a_long_line_is_a_quick_error():
    """A quote left open in IR, before a long line, as the mangled-input test once made it: xDSL's lexer
    took time exponential in the line's length (this one would take years); Cain's lexer rule answers at
    once, with the reader's one-line error. In a process of its own, so that a regression fails on the
    timeout instead of hanging the suite."""
    text = 'builtin.module {\n  "goal.filter"() {name = "open' + " abcxyz" * 20 + "\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "open.mlir"
        path.write_text(text)
        run = [sys.executable, "-c", "import sys; from cain.cli import main; sys.exit(main(sys.argv[1:]))"]
        done = subprocess.run([*run, str(path)], check=False, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "open.mlir:" in done.stderr


LONG_CASES = {f"fuzz_{n}" for n in ("9_70", "9_18", "9_21", "9_72", "9_53", "3_101", "9_56", "2_45")}
"""Kept cases of 10 to 70 s each, run on request (`pytest -m long`, or `python -m benchmarks.fuzz
--regressions` for every kept case); their kinds stay in the suite: four two-channel kernels in five
registers (fuzz_9_35), once too long for the kernel store and now a sequence of kernels (fuzz_9_54), no
program (the fuzz_1 to fuzz_3 cases)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=[pytest.mark.long] * (p.stem in LONG_CASES), id=p.stem)
        for p in (sorted(CASES_DIR.glob("*.cain")) if CASES_DIR.exists() else [])
    ],
)
def test_fuzz_regressions(path, tmp_path):
    """Every case a campaign kept: never a crash or a wrong program again (`regression_failure`)."""
    assert regression_failure(path, tmp_path) is None


@pytest.mark.slow
@settings(FAST, max_examples=6)
@given(kernel_files(), st.sampled_from(["all", "basic"]))
def test_every_constructive_program_computes_its_kernels(text, set_name):
    """Every candidate of the constructive program (each kernel order, halving point, and walks that return
    to the origin or start where the last ended) computes the kernels, before any allocation."""
    module = lowered(text)
    filters = [filter_from_op(op) for op in module.walk() if isinstance(op, FilterOp)]
    assert filters
    for filt in filters:
        programs = list(candidates(filt, set_name))
        assert programs  # both sets have a division
        for program in programs:
            assert program.output_goals(filt.initial_goals()) == filt.final_goals()


@settings(max_examples=3, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernel_files(), st.sampled_from(["all", "basic"]), st.integers(0, 2))
def test_candidates_for_a_register_count_are_those_that_fit_it(text, set_name, spare):
    """Asked for the candidates that fit a register count, the constructive program counts what each needs
    without building it: the same programs, in the same order, as building all and keeping those whose
    `registers_needed` is at most that count."""
    for filt in [filter_from_op(op) for op in lowered(text).walk() if isinstance(op, FilterOp)]:
        every = list(candidates(filt, set_name))
        registers = min(registers_needed(p) for p in every) + spare
        fitting = [p.instrs for p in candidates(filt, set_name, registers=registers)]
        assert fitting == [p.instrs for p in every if registers_needed(p) <= registers]
