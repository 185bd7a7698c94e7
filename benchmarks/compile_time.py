"""Compile time per kernel file: `cain-opt FILE -p search{budget=N},regalloc,emit` in a fresh process, today's
code and, side by side, another git revision's, with whether both print the same output.

    python -m benchmarks.compile_time --budget 20 --baseline 89e9344 tests/regressions/fuzz/*.cain

The two versions alternate file by file (today's first on even files), so machine noise hits both alike.
Times are wall-clock seconds of the whole command: start-up, search, the constructive program, register
allocation, verification and emission. The output compared is stdout and stderr together (an error is an
output too); with a node budget both are deterministic, so "same" means the change kept every program.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import log, machine_info, make_parser, markdown_table, write_outputs
from benchmarks.suite import Tree, versions_of

_RUNNER = "import sys; from cain.cli import main; sys.argv[0] = 'cain-opt'; sys.exit(main())"


def compile_file(tree: Tree, path: Path, pipeline: str) -> tuple[float, int, str]:
    """`tree`'s cain-opt on `path` through `pipeline`: (wall seconds, exit status, output digest)."""
    env = None if tree.pythonpath is None else {**os.environ, "PYTHONPATH": tree.pythonpath}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(path.resolve()), "-p", pipeline],
        capture_output=True,
        text=True,
        cwd=tree.directory,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    digest = hashlib.sha256((done.stdout + done.stderr).encode()).hexdigest()[:10]
    return seconds, done.returncode, digest


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("compile_time", __doc__, samples=1, budget="20", workers=1)
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="kernel files to compile")
    parser.add_argument("--baseline", metavar="REV", help="also compile with this git revision, alternating")
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.files if not f.is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    pipeline = f"search{{{args.budget.option} quiet=true}},regalloc,emit"
    machine = machine_info()
    with versions_of(args.baseline, machine) as trees:
        rows, records = [], []
        for i, path in enumerate(args.files):
            runs = {}
            for tree in trees if i % 2 == 0 else trees[::-1]:
                runs[tree.label] = compile_file(tree, path, pipeline)
                log(
                    args, f"[{i + 1}/{len(args.files)}] {path.name} {tree.label}: {runs[tree.label][0]:.1f} s"
                )
            same = len({digest for _, _, digest in runs.values()}) == 1
            rows.append([path.name, *(runs[t.label][0] for t in trees), *(runs[t.label][1] for t in trees)])
            if len(trees) > 1:
                rows[-1].append("yes" if same else "no")
            records.append(
                {
                    "file": str(path),
                    "runs": {
                        k: dict(zip(("seconds", "status", "output"), v, strict=True)) for k, v in runs.items()
                    },
                }
            )
    labels = [t.label for t in trees]
    headers = ["file", *(f"{v} (s)" for v in labels), *(f"{v} exit" for v in labels)]
    headers += ["same output"] if len(trees) > 1 else []
    totals = ["**total**", *(sum(r[1 + k] for r in rows) for k in range(len(trees)))]
    totals += [""] * (len(headers) - len(totals))
    body = f"`cain-opt FILE -p '{pipeline}'`, wall-clock seconds.\n\n"
    body += markdown_table(headers, [*rows, totals]) + "\n"
    write_outputs(
        args,
        "compile_time",
        "Compile time per kernel file",
        argv=argv,
        machine=machine,
        data={"versions": labels, "pipeline": pipeline, "files": records},
        body=body,
        draw=None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
