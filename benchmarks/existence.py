"""Does a program exist where Cain finds none? For filters of two input channels and one register fewer
than inputs and kernels together (four kernels in five registers: the last kernel must be formed over an
input), Singular checks the two conditions under which docs/search.md ("One kernel over the inputs")
shows that a program exists in theory: the kernels' channel polynomials generate `Z[x^±1, y^±1]`, and
the points where the kernels are parallel (their 2x2 minors) are finitely many (dimension 0, or -1: none).

Singular (`apt install singular`) is used here only, never by Cain.

    python -m benchmarks.existence                   # the kept 'no program' cases of tests/regressions/fuzz/
    python -m benchmarks.existence case.cain ...
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import (
    RESULTS_DIR,
    command_line,
    machine_info,
    machine_line,
    markdown_table,
    write_results,
)
from benchmarks.fuzz import CASES_DIR
from cain.diagnostics import CainError
from cain.frontend.kernel import parse_filter
from cain.model.filter import Filter

SCRIPT = """
ideal J = L, {entries};
"ENTRIES", size(reduce(1, std(J)));
matrix K[{kernels}][2] = {entries};
"MINORS", dim(std(minor(K, 2) + L));
quit;
"""
"""Singular's checks: `ENTRIES 0` when the polynomials generate the ring (1 reduces to 0); `MINORS d`, the
Krull dimension of the locus where the kernels are parallel (0: finitely many closed points)."""


def _monomial(x: int, y: int) -> str:
    """`x^a y^b` in Singular's ring `(x, y, u, v)`, where `u = x^-1` and `v = y^-1`."""
    parts = []
    if x:
        parts.append(f"{'x' if x > 0 else 'u'}^{abs(x)}")
    if y:
        parts.append(f"{'y' if y > 0 else 'v'}^{abs(y)}")
    return "*".join(parts) or "1"


def singular_input(filt: Filter) -> str:
    """The Singular script of `filt`'s checks: each kernel's two channel polynomials, kernel by kernel."""
    entries = []
    for kernel in filt.kernels:
        for channel in range(2):
            terms = [f"({c})*{_monomial(x, y)}" for (x, y, z), c in kernel.goal.items if z == channel]
            entries.append("+".join(terms) or "0")
    head = "ring r = integer, (x, y, u, v), dp;\nideal L = x*u - 1, y*v - 1;\n"
    return head + SCRIPT.format(entries=", ".join(entries), kernels=len(filt.kernels))


def check(path: Path, timeout: float) -> dict:
    """One kernel file's row: its shape, Singular's two answers, and whether a program exists in theory."""
    row: dict = {"case": path.name}
    try:
        filt = parse_filter(path.read_text(), str(path))
    except CainError as e:
        return {**row, "outcome": f"not read: {str(e).splitlines()[0]}"}
    row["shape"] = f"{len(filt.kernels)} x {len(filt.inputs)} in {len(filt.registers)}"
    if len(filt.inputs) != 2 or len(filt.inputs) + len(filt.kernels) != len(filt.registers) + 1:
        return {**row, "outcome": "not this shape"}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            ["Singular", "-q"],
            check=False,
            input=singular_input(filt),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {**row, "outcome": "timeout", "seconds": timeout}
    row["seconds"] = time.perf_counter() - started
    answers = dict(
        line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["ENTRIES"], ["MINORS"])
    )
    if set(answers) != {"ENTRIES", "MINORS"}:
        return {**row, "outcome": f"Singular said: {(done.stdout + done.stderr).strip()[:200]}"}
    row["entries generate"] = answers["ENTRIES"] == "0"
    row["parallel locus dim"] = int(answers["MINORS"])
    exists = row["entries generate"] and row["parallel locus dim"] <= 0  # -1: no such point at all
    return {**row, "outcome": "a program exists" if exists else "not shown"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.existence", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "cases", nargs="*", type=Path, help="kernel files (default: the kept 'no program' cases)"
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds of Singular per case (default 600)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR / "existence",
        help="output directory (default benchmarks/results/existence/)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if shutil.which("Singular") is None:
        print("benchmarks.existence: needs Singular on the PATH (apt install singular)", file=sys.stderr)
        return 1
    cases = args.cases or sorted(
        p for p in CASES_DIR.glob("*.cain") if "no program" in p.read_text().splitlines()[0]
    )
    machine = machine_info()
    rows = []
    for path in cases:
        rows.append(check(path, args.timeout))
        if not args.quiet:
            print(f"{len(rows)}/{len(cases)} {path.name}: {rows[-1]['outcome']}", file=sys.stderr, flush=True)
    table = markdown_table(
        [
            "case",
            "kernels x channels in registers",
            "entries generate R",
            "parallel locus dim",
            "s",
            "outcome",
        ],
        [
            [
                r["case"],
                r.get("shape", "-"),
                r.get("entries generate", "-"),
                r.get("parallel locus dim", "-"),
                f"{r['seconds']:.1f}" if "seconds" in r else "-",
                r["outcome"],
            ]
            for r in rows
        ],
    )
    shown = sum(r["outcome"] == "a program exists" for r in rows)
    command = command_line("existence", argv)
    summary = (
        f"# Where Cain finds no program, does one exist?\n\nCommand: `{command}`\n\nMachine: "
        f"{machine_line(machine)}\n\nA program exists in theory (docs/search-design.md, 'One kernel over the inputs') "
        f"for {shown} of {len(rows)} cases.\n\n{table}\n"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"experiment": "existence", "command": command, "machine": machine, "rows": rows}
    write_results(args.out, record)
    (args.out / "summary.md").write_text(summary)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
