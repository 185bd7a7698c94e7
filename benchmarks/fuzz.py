"""A fuzz campaign over the whole pipeline: random filters through `cain-opt` (search, regalloc, emit), each
program verified again here, independently, from the IR the pipeline printed.

Every filter is a kernel file as a user would write it: 1 to 4 kernels, 1 or 2 input channels, 3x3, 5x5,
2x2 or 3x5 matrices with a power-of-two scale (or two-decimal weights approximated within an error bound),
5 to 8 registers with inputs and outputs in random ones, either instruction set. The outcome of each is
one of `passed`, `no program` (cain-opt said it found no program in the registers: one may exist, and the
message says what to change), `too long` (a program that could not be cut into kernels within the kernel
store), `error` (another one-line error), `crash` (a traceback) or `wrong` (a program that does not compute
its kernels). Every case that is not `passed` is saved as a kernel file under `--cases` (by default
tests/regressions/fuzz/, which tests/passes/test_fuzz.py compiles), so it stays a regression test.

    python -m benchmarks.fuzz --samples 1000 --budget 1000
    python -m benchmarks.fuzz --samples 250 --budget 10s     # the default search budget
    python -m benchmarks.fuzz --regressions                   # every kept case, as the tests check them
    python -m benchmarks.fuzz --compile --samples 200 --budget 10s   # what `cain k.cain` prints

With `--compile` each filter goes through the default compile instead (`cain.compile`, what `cain k.cain`
prints: bus level, both searches, bus-level synthesis), on the SDK's six registers, and its C is compiled
with the host's C++ compiler against the SDK stand-in (tests/c) and run on random images, each output
compared with the direct correlation of its kernel: a check of the printed code, independent of the
compiler's own verification. Its failing cases go under tests/regressions/fuzz-compile/.

A node budget makes the campaign deterministic (the same seed gives the same filters and programs); a time
budget runs the search as a user's `cain-opt` does by default, deadline and all.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from cain.dialects import DIALECTS
from cain.dialects.scamp5 import KernelOp
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser

from benchmarks.common import ROOT, Budget, machine_info, make_parser, markdown_table, write_outputs
from benchmarks.stand_in import CXX, compile_and_run, exact_margin
from cain.api import compile as default_compile
from cain.api import default_workers
from cain.backend.c_names import c_identifier
from cain.backend.sim import correlate, random_images
from cain.backend.verify import VerificationError, verify_kernel
from cain.cli import main
from cain.diagnostics import CainError
from cain.frontend.kernel import parse_filter

OUTCOMES = ("passed", "no program", "too long", "error", "crash", "wrong")
SHAPES = ((3, 3), (5, 5), (2, 2), (3, 5))
REGISTER_NAMES = "ABCDEFGH"
CASES_DIR = ROOT / "tests" / "regressions" / "fuzz"
COMPILE_CASES_DIR = ROOT / "tests" / "regressions" / "fuzz-compile"
DEVICE_REGISTERS = 6
"""`--compile` compiles for the device: its filters have at most the SDK's six analogue registers A..F."""
C_SIZE = 40
"""Side of the images the C runs on in the stand-in under `--compile`."""

Pick = Callable[[int, int], int]
"""`pick(lo, hi)`: an integer from lo to hi inclusive (random.randint, or a hypothesis draw)."""


def kernel_file(pick: Pick, name: str = "fuzz", most_registers: int = 8) -> str:
    """A random filter as a kernel file (5 to `most_registers` registers), every choice made by `pick`."""
    registers = 5 + pick(0, most_registers - 5)
    names = list(REGISTER_NAMES[:registers])
    channels = 1 + pick(0, 1)
    kernels = 1 + pick(0, 3)
    inputs = _sample(pick, names, channels)
    outputs = _sample(pick, names, kernels)
    h, w = SHAPES[pick(0, len(SHAPES) - 1)]
    decimals = pick(0, 3) == 0
    lines = [f"filter {name}", "input " + ", ".join(f"c{z} -> {r}" for z, r in enumerate(inputs))]
    for k, reg in enumerate(outputs):
        scale = pick(0, 4)
        matrices = []
        for _ in range(channels):
            rows = []
            for _ in range(h):
                row = []
                for _ in range(w):
                    if pick(0, 3) == 0:
                        row.append("0")
                    elif decimals:
                        row.append(f"{pick(-100, 100) / 100:g}")
                    else:
                        row.append(str(pick(-(2**scale), 2**scale)))
                rows.append(" ".join(row))
            matrices.append("[" + "; ".join(rows) + "]")
        prefix = "" if decimals or not scale else f"1/{2**scale} "
        if channels == 1:
            lines.append(f"output k{k} -> {reg} = {prefix}{matrices[0]}")
        else:
            body = ", ".join(f"c{z}: {m}" for z, m in enumerate(matrices))
            lines.append(f"output k{k} -> {reg} = {prefix}{{ {body} }}")
    lines.append("option registers = " + " ".join(names))
    lines.append("option instructions = " + ("all" if pick(0, 1) else "basic"))
    if decimals:
        lines.append("option max_error = 1/2")
    return "\n".join(lines) + "\n"


def _sample(pick: Pick, names: list[str], n: int) -> list[str]:
    pool = list(names)
    return [pool.pop(pick(0, len(pool) - 1)) for _ in range(n)]


@dataclass
class Outcome:
    """What one kernel file came to: its outcome, the message, the program's length, the time taken."""

    outcome: str
    message: str = ""
    macros: int | None = None
    seconds: float = 0.0


def cain_opt(args: list[str]) -> tuple[int | None, str, str]:
    """`cain-opt args` in this process: exit status (None: an exception escaped), stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(args)
        except BaseException:  # noqa: BLE001 - a traceback is this campaign's finding
            traceback.print_exc(file=err)
            status = None
    return status, out.getvalue(), err.getvalue()


def compile_case(text: str, budget: Budget, workdir: Path) -> Outcome:
    """Compile one kernel file to allocated IR, verify that independently, then emit the C from it."""
    started = time.perf_counter()
    source = workdir / "case.cain"
    source.write_text(text)
    ir = workdir / "case.mlir"
    status, _, err = cain_opt(
        [str(source), "-p", f"search{{{budget.option} quiet=true}},regalloc", "-o", str(ir)]
    )
    outcome = _classify(status, err)
    if outcome is not None:
        outcome.seconds = time.perf_counter() - started
        return outcome
    ctx = Context()
    for dialect in (Builtin, *DIALECTS):
        ctx.load_dialect(dialect)
    try:
        module = Parser(ctx, ir.read_text()).parse_module()
        kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
        macros = sum(k.counts.get("macros", 0) for k in kernels)
        for kernel in kernels:
            verify_kernel(kernel, images=2, size=48)
    except VerificationError as e:
        return Outcome("wrong", str(e).splitlines()[0], seconds=time.perf_counter() - started)
    except Exception as e:  # noqa: BLE001
        return Outcome(
            "crash", f"reading the IR back: {type(e).__name__}: {e}", seconds=time.perf_counter() - started
        )
    status, c_text, err = cain_opt([str(ir), "-p", "emit"])
    outcome = _classify(status, err)
    if outcome is None and "scamp5_kernel_begin();" not in c_text:
        outcome = Outcome("crash", "emit printed no kernel")
    outcome = outcome or Outcome("passed", macros=macros)
    outcome.seconds = time.perf_counter() - started
    return outcome


def compile_printed(text: str, budget: Budget, workdir: Path, workers: int | None = None) -> Outcome:
    """Compile one kernel file as `cain` does by default, then run its C against the SDK stand-in on random
    images and compare each output with the correlation, from the margin its header states inwards (the
    printed code's reach: at bus level its micro-ops', which may move a value further than the macros did)."""
    started = time.perf_counter()
    source = workdir / "case.cain"
    source.write_text(text)

    def done(outcome: Outcome) -> Outcome:
        outcome.seconds = time.perf_counter() - started
        return outcome

    try:
        compiled = default_compile(str(source), budget=budget.nodes, time=budget.seconds, workers=workers)
    except CainError as e:
        return done(_classify(1, str(e)))
    except Exception as e:  # noqa: BLE001 - a traceback is this campaign's finding
        return done(Outcome("crash", f"{type(e).__name__}: {e}"))
    filt = compiled.filter
    outputs = [k.register for k in filt.kernels]
    images = random_images(len(filt.inputs), 1, C_SIZE, seed=len(text))[:, 0]
    try:
        name = c_identifier(filt.name)
        outs = compile_and_run(
            compiled.c, name, [r for _, r in filt.inputs], outputs, images, workdir, size=C_SIZE
        )
    except Exception as e:  # noqa: BLE001 - C that does not build or run is this campaign's finding
        detail = getattr(e, "stderr", "") or str(e)
        return done(Outcome("crash", f"the C against the SDK stand-in: {detail.strip()[:300]}"))
    try:
        m = exact_margin(compiled.c)
    except ValueError as e:  # a header that does not say which pixels are exact is this campaign's finding
        return done(Outcome("wrong", str(e)))
    inner = (slice(m, C_SIZE - m), slice(m, C_SIZE - m))
    for out, kernel in zip(outs, filt.kernels, strict=True):
        if not np.allclose(out[inner], correlate(images, kernel.goal, filt.depth)[inner], atol=1e-9):
            return done(Outcome("wrong", f"kernel {kernel.name}: the C's output is not the correlation"))
    return done(Outcome("passed", macros=compiled.macros))


STAGES = {
    False: "cain-opt's search, regalloc, independent verification of the IR, emit",
    True: "the default compile, its C run against the SDK stand-in",
}

REGRESSION_BUDGET = Budget(nodes=20)


def regression_failure(path: Path, workdir: Path) -> str | None:
    """What is wrong with a kept case now (None: nothing). Never a crash or a wrong program again. A case
    that had no program gets one, or is still told the registers the constructive program needs; a case
    the reader rejected (a kernel approximated to zero) is still rejected with its location; one that was
    too long for the kernel store compiles, as a sequence of kernels."""
    text = path.read_text()
    found = text.splitlines()[0].rsplit(": ", 1)[-1]
    outcome = compile_case(text, REGRESSION_BUDGET, workdir)
    allowed = {"no program": ("passed", "no program", "error"), "error": ("passed", "error")}.get(
        found, ("passed",)
    )
    if outcome.outcome not in allowed:
        return f"{outcome.outcome}: {outcome.message}"
    if outcome.outcome == "no program":
        if not re.search(r"the constructive program needs \d+", outcome.message):
            return outcome.message
        filt = parse_filter(text, path.name)
        over_input = "the last output would have to be formed over an input"
        if len(filt.inputs) + len(filt.kernels) > len(filt.registers) and over_input not in outcome.message:
            return outcome.message
    if outcome.outcome == "error" and not re.search(r"case\.cain:\d+:\d+: error", outcome.message):
        return outcome.message
    return None


def check_regressions(directory: Path, quiet: bool) -> int:
    """Every kept case under `directory` through `regression_failure`; 1 when any fails."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(directory.glob("*.cain")):
            started = time.perf_counter()
            failure = regression_failure(path, Path(tmp))
            failures += failure is not None
            if not quiet or failure:
                print(
                    f"{path.name}: {failure or 'ok'} ({time.perf_counter() - started:.1f} s)", file=sys.stderr
                )
    print(f"{failures} of {len(list(directory.glob('*.cain')))} kept cases fail", file=sys.stderr)
    return 1 if failures else 0


def _classify(status: int | None, err: str) -> Outcome | None:
    """None when cain-opt succeeded; else the outcome its exit status and stderr say."""
    if status == 0 and "Traceback" not in err:
        return None
    lines = err.strip().splitlines() or [""]
    if status is None or "Traceback" in err:
        return Outcome("crash", lines[-1])
    first = next((line for line in lines if "error" in line), lines[0])
    if "WRONG" in err:
        return Outcome("wrong", first)
    if "no program" in err:
        return Outcome("no program", first)
    if re.search(r"kernel store|no kernel of at most \d+ ICWs", err):
        return Outcome("too long", first)
    return Outcome("error", first)


def save_case(directory: Path, name: str, text: str, outcome: Outcome, budget: Budget) -> Path:
    """The failing kernel file, headed by what happened, as a regression test."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.cain"
    head = [
        f"// Found by python -m benchmarks.fuzz (search budget {budget}): {outcome.outcome}",
        *(f"// {line}" for line in outcome.message.splitlines()[:3]),
    ]
    path.write_text("\n".join(head) + "\n" + text)
    return path


def main_fuzz(argv: list[str] | None = None) -> int:
    parser = make_parser("fuzz", __doc__, samples=1000, budget="1000", workers=1)
    parser.add_argument(
        "--cases",
        type=Path,
        help="where failing cases are saved (default tests/regressions/fuzz/, with --compile "
        "tests/regressions/fuzz-compile/)",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="each filter through the default compile (cain.compile, bus level), its C run against the SDK "
        "stand-in (needs a C++ compiler)",
    )
    parser.add_argument(
        "--regressions",
        action="store_true",
        help=f"instead of a campaign, check every kept case under --cases at {REGRESSION_BUDGET} "
        "(the suite runs the quicker ones)",
    )
    for action in parser._actions:
        if action.dest == "workers":
            action.default = None
            action.help = "search processes per filter (default 1; with --compile, cain's own default)"
    args = parser.parse_args(argv)
    if args.workers is None:
        args.workers = default_workers(args.budget.nodes) if args.compile else 1
    if args.cases is None:
        args.cases = COMPILE_CASES_DIR if args.compile else CASES_DIR
    if args.compile and args.regressions:
        parser.error("--regressions checks the kept cases of cain-opt's campaign; it does not take --compile")
    if args.compile and CXX is None:
        parser.error("--compile runs the C: no C++ compiler (g++ or c++) found")
    if args.regressions:
        return check_regressions(args.cases, args.quiet)
    machine = machine_info()
    rng = random.Random(args.seed)
    counts: Counter[str] = Counter()
    records = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.samples):
            name = f"fuzz_{args.seed}_{n}"
            if args.compile:
                text = kernel_file(rng.randint, name, DEVICE_REGISTERS)
                result = compile_printed(text, args.budget, Path(tmp), args.workers)
            else:
                text = kernel_file(rng.randint, name)
                result = compile_case(text, args.budget, Path(tmp))
            counts[result.outcome] += 1
            records.append(
                {
                    "name": name,
                    "outcome": result.outcome,
                    "message": result.message,
                    "macros": result.macros,
                    "seconds": result.seconds,
                    "source": text,
                }
            )
            if result.outcome != "passed":
                save_case(args.cases, name, text, result, args.budget)
            if not args.quiet:
                print(
                    f"\r{n + 1}/{args.samples} " + ", ".join(f"{o} {counts[o]}" for o in OUTCOMES),
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    if not args.quiet:
        print(file=sys.stderr)
    table = markdown_table(["outcome", "filters"], [[o, counts[o]] for o in OUTCOMES])
    body = (
        f"{elapsed:.0f} s in all ({elapsed / args.samples:.2f} s per filter: {STAGES[args.compile]}, at "
        f"{args.budget}).\n\n{table}\n"
    )
    failing = [r for r in records if r["outcome"] != "passed"]
    if failing:
        body += f"\nFailing cases (saved under {args.cases}):\n\n"
        body += "".join(f"- {r['name']}: {r['outcome']}: {r['message']}\n" for r in failing)
    write_outputs(
        args,
        "fuzz",
        f"Fuzz campaign: {args.samples} random filters",
        argv=argv,
        machine=machine,
        data={"counts": dict(counts), "seconds": elapsed, "runs": records},
        body=body,
        draw=None,
    )
    return 0 if counts["crash"] == counts["wrong"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main_fuzz())
