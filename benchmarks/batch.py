"""Batch compilation: the same random filters compiled by `cain.compile_many` on one process, on every core,
and on a Dask LocalCluster of as many worker processes; wall time and speed-up, and whether every executor
gave the same programs (with a node budget the search is deterministic, wherever it runs).

    python -m benchmarks.batch                   # 8 filters of 2 kernels, 2000 nodes per search
    python -m benchmarks.batch --samples 24 --budget 5000
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Sequence

import cain
from benchmarks.common import machine_info, make_parser, markdown_table, random_filter, write_outputs


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("batch", __doc__, samples=8, budget="2000", workers=1)
    parser.add_argument("--kernels", type=int, default=2, help="kernels per random filter (default 2)")
    args = parser.parse_args(argv)
    if args.budget.nodes is None:
        parser.error(
            "give a node budget (e.g. --budget 2000): the executors are compared on the same programs"
        )
    rng = random.Random(args.seed)
    filters = [random_filter(rng, args.kernels, name=f"random{i}") for i in range(args.samples)]
    cores = len(os.sched_getaffinity(0))
    options = {
        "budget": args.budget.nodes,
        "seed": args.seed,
        "workers": args.workers,
        "progress": not args.quiet,
    }
    runs: dict[str, tuple[float, cain.Batch]] = {}

    def timed(label: str, **executor) -> None:
        start = time.perf_counter()
        batch = cain.compile_many(filters, **executor, **options)
        runs[label] = (time.perf_counter() - start, batch)

    timed("1 process", jobs=1)
    timed(f"{cores} processes", jobs=cores)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("Dask distributed is not installed (pip install 'cain[cluster]'): skipped", file=sys.stderr)
    else:
        with (
            LocalCluster(n_workers=cores, threads_per_worker=1, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            timed(f"Dask LocalCluster, {cores} workers", executor=client.get_executor())
    base_seconds, base = runs["1 process"]
    programs = [i.compiled.program.instrs if i.compiled else None for i in base]
    rows = []
    for label, (seconds, batch) in runs.items():
        same = [i.compiled.program.instrs if i.compiled else None for i in batch] == programs
        rows.append(
            [
                label,
                len(batch) - len(batch.failed),
                len(batch),
                seconds,
                base_seconds / seconds,
                "yes" if same else "NO",
            ]
        )
    body = markdown_table(["executor", "compiled", "filters", "wall s", "speed-up", "same programs"], rows)
    macros = [i.compiled.macros for i in base if i.compiled]
    body += f"\nMacros per filter: {macros} (every program verified before it is returned).\n"
    data = {"rows": rows, "macros": macros}
    write_outputs(
        args, "batch", "Batch compilation", argv=argv, machine=machine_info(), data=data, body=body, draw=None
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
