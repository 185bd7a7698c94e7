"""Programs past the kernel store, compiled as sequences of SDK kernels: each filter through `cain-opt`
(search at the budget, regalloc, emit), its C's kernels and their ICWs, and the compile's wall time.

The filters are kernel files, and those a fuzz campaign's results (`--campaign DIR`, its results.json.gz)
record as longer than the kernel store. `emit` verifies the program run kernel by kernel, as the device runs
it, before it prints the C; the ICWs of each kernel are read back from the C.

    python -m benchmarks.split --budget 10s --campaign benchmarks/results/fuzz-default/seed10
    python -m benchmarks.split --budget 10s examples/gauss5x5.cain
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Budget, machine_info, make_parser, markdown_table, write_outputs
from benchmarks.fuzz import cain_opt

KERNEL_LINE = re.compile(r"^    // kernel \d+ of \d+: (\d+) ICWs", re.MULTILINE)
TOTAL_LINE = re.compile(r" (\d+) ICWs \(bus micro-operations\)")


def overflowing(campaign: Path) -> list[tuple[str, str]]:
    """(name, kernel file) of every filter a fuzz campaign found too long for the kernel store."""
    with gzip.open(campaign / "results.json.gz", "rt") as f:
        runs = json.load(f)["runs"]
    return [(r["name"], r["source"]) for r in runs if "kernel store" in (r["message"] or "")]


def compile_split(name: str, text: str, budget: Budget, workdir: Path) -> dict:
    """One filter compiled to C: its outcome, total ICWs, each kernel's ICWs and the wall time."""
    source, c_file = workdir / f"{name}.cain", workdir / f"{name}.c"
    source.write_text(text)
    started = time.perf_counter()
    status, _, err = cain_opt(
        [str(source), "-p", f"search{{{budget.option} quiet=true}},regalloc,emit", "-o", str(c_file)]
    )
    seconds = time.perf_counter() - started
    if status != 0:
        return {
            "name": name,
            "outcome": "failed",
            "message": err.strip().splitlines()[-1],
            "seconds": seconds,
        }
    c_text = c_file.read_text()
    total = TOTAL_LINE.search(c_text)
    kernels = [int(n) for n in KERNEL_LINE.findall(c_text)]
    return {
        "name": name,
        "outcome": "passed",
        "icws": int(total.group(1)) if total else None,
        "kernels": kernels or ([int(total.group(1))] if total else []),
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = make_parser("split", __doc__, samples=1, budget="10s", workers=1)
    parser.add_argument("files", nargs="*", type=Path, help="kernel files to compile")
    parser.add_argument(
        "--campaign", type=Path, action="append", default=[], help="a fuzz campaign's output directory"
    )
    args = parser.parse_args(argv)
    cases = [(p.stem, p.read_text()) for p in args.files]
    for campaign in args.campaign:
        cases += overflowing(campaign)
    machine = machine_info()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in cases:
            row = compile_split(name, text, args.budget, Path(tmp))
            rows.append(row)
            if not args.quiet:
                print(f"{name}: {row['outcome']} {row.get('kernels', row.get('message'))}", file=sys.stderr)
    table = markdown_table(
        ["filter", "outcome", "ICWs", "kernels", "kernels' ICWs", "wall (s)"],
        [
            [
                r["name"],
                r["outcome"],
                r.get("icws", ""),
                len(r.get("kernels", [])),
                " ".join(map(str, r.get("kernels", []))) or r.get("message", ""),
                f"{r['seconds']:.1f}",
            ]
            for r in rows
        ],
    )
    passed = sum(r["outcome"] == "passed" for r in rows)
    write_outputs(
        args,
        "split",
        f"Programs past the kernel store: {passed} of {len(rows)} compiled as kernel sequences",
        argv=argv,
        machine=machine,
        data={"runs": rows},
        body=table + "\n",
        draw=None,
    )
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
