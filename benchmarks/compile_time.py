"""Compile time per kernel file: `cain-opt FILE -p search{budget=N},regalloc,emit` in a fresh process, today's
code and, side by side, another git revision's, with whether both print the same output and the ICWs of
the program each printed.

    python -m benchmarks.compile_time --budget 20 --baseline 89e9344 tests/regressions/fuzz/*.cain
    python -m benchmarks.compile_time --driver cain --budget 10s --baseline 89e9344 examples/*.cain
    python -m benchmarks.compile_time --budget 100000 --search exact=true --baseline 713b40c FILE...

`--driver cain` runs the command for people instead (`cain FILE --budget N` or `--time S`), with its own
default pipeline.

The two versions alternate file by file (today's first on even files), so machine noise hits both alike.
Times are wall-clock seconds of the whole command: start-up, search, the constructive program, register
allocation, verification and emission. The output compared is stdout and stderr together (an error is an
output too); with a node budget both are deterministic, so "same" means the change kept every program.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import log, machine_info, make_parser, markdown_table, write_outputs
from benchmarks.suite import Tree, versions_of

_RUNNERS = {
    "cain-opt": "import sys; from cain.cli import main; sys.argv[0] = 'cain-opt'; sys.exit(main())",
    "cain": "import sys; from cain.driver import main; sys.argv[0] = 'cain'; sys.exit(main())",
}
"""Each driver, run by the tree's own code."""


def compile_file(
    tree: Tree, path: Path, driver: str, options: list[str]
) -> tuple[float, int, str, int | None]:
    """`tree`'s `driver` on `path` with `options`: (wall seconds, exit status, output digest, ICWs of the
    printed program, from its C header)."""
    env = None if tree.pythonpath is None else {**os.environ, "PYTHONPATH": tree.pythonpath}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _RUNNERS[driver], str(path.resolve()), *options],
        capture_output=True,
        text=True,
        cwd=tree.directory,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    digest = hashlib.sha256((done.stdout + done.stderr).encode()).hexdigest()[:10]
    icws = re.search(r"(\d+) ICWs \(bus micro-operations\)", done.stdout)
    return seconds, done.returncode, digest, int(icws[1]) if icws else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("compile_time", __doc__, samples=1, budget="20", workers=1)
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="kernel files to compile")
    parser.add_argument("--baseline", metavar="REV", help="also compile with this git revision, alternating")
    parser.add_argument(
        "--driver", choices=tuple(_RUNNERS), default="cain-opt", help="the command to time (default cain-opt)"
    )
    parser.add_argument(
        "--search",
        default="",
        metavar="OPTIONS",
        help="more options of `search`, e.g. exact=true (cain-opt only)",
    )
    args = parser.parse_args(argv)
    if args.search and args.driver != "cain-opt":
        parser.error("--search takes the options of cain-opt's search pass: use it with --driver cain-opt")
    missing = [str(f) for f in args.files if not f.is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    search = f"{args.budget.option} quiet=true {args.search}".strip()
    pipeline = f"search{{{search}}},regalloc,emit"
    options = ["-p", pipeline]
    if args.driver == "cain":
        budget = args.budget
        nodes = budget.nodes is not None
        options = ["--budget", str(budget.nodes)] if nodes else ["--time", f"{budget.seconds:g}"]
    command = f"{args.driver} FILE {' '.join(options)}"
    machine = machine_info()
    with versions_of(args.baseline, machine) as trees:
        rows, records = [], []
        for i, path in enumerate(args.files):
            runs = {}
            for tree in trees if i % 2 == 0 else trees[::-1]:
                runs[tree.label] = compile_file(tree, path, args.driver, options)
                log(
                    args, f"[{i + 1}/{len(args.files)}] {path.name} {tree.label}: {runs[tree.label][0]:.1f} s"
                )
            same = len({run[2] for run in runs.values()}) == 1
            rows.append(
                [
                    path.name,
                    *(runs[t.label][0] for t in trees),
                    *(runs[t.label][1] for t in trees),
                    *("-" if runs[t.label][3] is None else runs[t.label][3] for t in trees),
                ]
            )
            if len(trees) > 1:
                rows[-1].append("yes" if same else "no")
            records.append(
                {
                    "file": str(path),
                    "runs": {
                        k: dict(zip(("seconds", "status", "output", "icws"), v, strict=True))
                        for k, v in runs.items()
                    },
                }
            )
    labels = [t.label for t in trees]
    headers = ["file", *(f"{v} (s)" for v in labels), *(f"{v} exit" for v in labels)]
    headers += [f"{v} ICWs" for v in labels]
    headers += ["same output"] if len(trees) > 1 else []
    n = len(trees)
    totals = ["**total**", *(sum(r[1 + k] for r in rows) for k in range(n)), *[""] * n]
    totals += [sum(r[1 + 2 * n + k] for r in rows if r[1 + 2 * n + k] != "-") for k in range(n)]
    totals += [""] * (len(headers) - len(totals))
    body = f"`{command}`, wall-clock seconds, and the ICWs of the program printed.\n\n"
    body += markdown_table(headers, [*rows, totals]) + "\n"
    write_outputs(
        args,
        "compile_time",
        "Compile time per kernel file",
        argv=argv,
        machine=machine,
        data={"versions": labels, "command": command, "files": records},
        body=body,
        draw=None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
