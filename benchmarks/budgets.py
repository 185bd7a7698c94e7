"""Do budgets hold? Random kernels from 3x3 to 31x31 (weights `k / 2^d`, `d` from 1 to 4 for
the first sample of each size and from 5 to 10 for the second), and random layers of four two-channel
5x5 kernels (depth at most 6, six registers), searched under a time budget: the search's own time
against the one asked for, the time after it (building, allocating and verifying the constructive
program) apart, when the progress line first appeared, and for filters too large to search, the
refusal. A last row searches under a memory limit just above what the process holds.

    python -m benchmarks.budgets --samples 2 --budget 5s
"""

from __future__ import annotations

import contextlib
import io
import random
import sys
import time
from dataclasses import replace

from benchmarks.common import fmt, machine_info, make_parser, markdown_table, write_outputs
from cain.diagnostics import CainError
from cain.frontend.kernel import parse_filter
from cain.search import SearchConfig, search
from cain.search.budget import resident_memory

SIZES = (3, 5, 9, 15, 21, 31)
MAX_DEPTH = 10
LAYER_DEPTH = 6
"""The deepest layer: deeper, four two-channel 5x5 kernels have more atoms than the search takes."""


def matrix_text(rng: random.Random, size: int, scale: int) -> str:
    """A random `size` x `size` matrix of integers `|k| <= scale`, about a third of them 0."""
    rows = (
        " ".join("0" if rng.random() < 0.3 else str(rng.randint(-scale, scale)) for _ in range(size))
        for _ in range(size)
    )
    return "[" + "; ".join(rows) + "]"


def kernel_text(rng: random.Random, size: int, depth: int) -> str:
    """A random `size` x `size` kernel of weights `k / 2^depth` (`matrix_text`)."""
    scale = 2**depth
    return f"filter k{size}\ninput A\noutput o -> B = 1/{scale} {matrix_text(rng, size, scale)}\n"


def layer_text(rng: random.Random, depth: int, kernels: int = 4) -> str:
    """A random layer: `kernels` two-channel 5x5 kernels of weights `k / 2^depth` (`matrix_text`)."""
    scale = 2**depth
    outputs = "".join(
        f"output o{k} -> {'BCEF'[k]} = 1/{scale} "
        f"{{ c0: {matrix_text(rng, 5, scale)}, c1: {matrix_text(rng, 5, scale)} }}\n"
        for k in range(kernels)
    )
    return f"filter layer\ninput c0 -> A, c1 -> D\n{outputs}"


class _Clock(io.StringIO):
    """stderr that remembers when it was first written to (the progress line's first appearance)."""

    def __init__(self, start: float):
        super().__init__()
        self.start = start
        self.first: float | None = None

    def write(self, text: str) -> int:
        if self.first is None and text.strip():
            self.first = time.perf_counter() - self.start
        return super().write(text)


def measure(text: str, kernel: str, cfg: SearchConfig) -> dict:
    """Search one kernel file (`kernel` names it in the table) under `cfg`; what happened and how long each
    part took."""
    filt = parse_filter(text, "random.cain", {"max_depth": MAX_DEPTH})
    atoms = sum(k.goal.total for k in filt.kernels)
    row = {"kernel": kernel, "depth": filt.depth, "atoms": atoms}
    started = time.perf_counter()
    clock = _Clock(started)
    try:
        with contextlib.redirect_stderr(clock):
            result = search(filt, replace(cfg, progress=True))
    except CainError as e:
        return {**row, "outcome": "refused", "message": e.message, "seconds": time.perf_counter() - started}
    return {
        **row,
        "outcome": "program" if result.program is not None else "no program",
        "seconds": result.seconds,
        "finish_seconds": result.finish_seconds,
        "stopped": result.stopped,
        "nodes": result.nodes,
        "macros": result.program.macros if result.program is not None else None,
        "constructive": result.constructive,
        "first_progress": clock.first,
    }


def main(argv: list[str] | None = None) -> int:
    parser = make_parser("budgets", __doc__, samples=2, budget="5s", workers=1)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        help=f"kernel sizes (default {' '.join(map(str, SIZES))})",
    )
    args = parser.parse_args(argv)
    if args.budget.seconds is None:
        parser.error("this benchmark measures a time budget, e.g. --budget 5s")
    machine = machine_info()
    rng = random.Random(args.seed)
    cfg = SearchConfig(time_budget=args.budget.seconds, workers=args.workers, seed=args.seed)
    rows = []
    # first, while the process is small: a memory limit 2 MB above what it holds: the search stops on it, cleanly
    limit = resident_memory() + (2 << 20)
    row = measure(kernel_text(rng, 9, 3), "9x9 (memory limit)", replace(cfg, max_memory=limit))
    row.update(budget=args.budget.seconds, max_memory=limit)
    memory_row = row
    cases = [(f"{size}x{size}", lambda d, size=size: kernel_text(rng, size, d)) for size in args.sizes]
    cases.append(("4 x 5x5, 2 channels", lambda d: layer_text(rng, min(d, LAYER_DEPTH))))
    for name, text in cases:
        for n in range(args.samples):
            depth = rng.randint(1, 4) if n % 2 == 0 else rng.randint(5, MAX_DEPTH)
            row = measure(text(depth), name, cfg)
            row["budget"] = args.budget.seconds
            rows.append(row)
            print(f"{name} depth {depth}: {row['outcome']} in {fmt(row['seconds'], 2)} s", file=sys.stderr)
    rows.append(memory_row)
    table = markdown_table(
        [
            "kernel",
            "depth",
            "atoms",
            "asked s",
            "search s",
            "search / asked",
            "after s",
            "stopped",
            "first line s",
            "outcome",
        ],
        [
            [
                r["kernel"],
                r["depth"],
                f"{r['atoms']:,}",
                fmt(r["budget"], 1),
                fmt(r["seconds"], 2),
                fmt(r["seconds"] / r["budget"], 3) if r["outcome"] != "refused" else "-",
                fmt(r.get("finish_seconds"), 2),
                r.get("stopped", "-"),
                fmt(r.get("first_progress"), 2),
                r["outcome"]
                + (
                    f", {r['macros']} macros" + (" (constructive)" if r["constructive"] else "")
                    if r.get("macros") is not None
                    else ""
                ),
            ]
            for r in rows
        ],
    )
    searched = [r for r in rows if r["outcome"] != "refused"]
    worst = max(r["seconds"] / r["budget"] for r in searched) if searched else None
    refused = [r for r in rows if r["outcome"] == "refused"]
    body = (
        f"Worst search time over budget: {fmt(worst, 3)} (target at most 1.1). 'after s' is the time after the "
        "search: verifying the search's program, and building, allocating and verifying the constructive one. "
        "'first line s' is when the progress line first appeared.\n\n" + table + "\n"
    )
    if refused:
        body += "\nRefused before searching, for example:\n\n> " + refused[0]["message"] + "\n"
    write_outputs(
        args,
        "budgets",
        "Budgets on random kernels up to 31x31",
        argv=argv,
        machine=machine,
        data={"rows": rows},
        body=body,
        draw=None,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
