"""The paper's figure 3 (right): the shortest program found for filters of 1, 2, 3 and 4 random 3x3
kernels on SCAMP-5's six registers, against a linear reference (k times the median of one kernel).

    python -m benchmarks.scaling                                          # quick
    python -m benchmarks.scaling --samples 25 --budget 60s --workers 2    # the paper's setting (4 threads)
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from benchmarks.common import (
    Run,
    failures_markdown,
    log,
    machine_info,
    make_parser,
    markdown_table,
    median,
    numerators_of,
    positive_int,
    random_filter,
    run_search,
    write_outputs,
)
from cain.model.isa import DEFAULT_REGISTERS


def draw_scatter(lengths: dict[int, list[int]], samples: int, budget: str):
    """Each filter's length (jittered), the median per kernel count, and the linear reference."""

    def draw(plt):
        jitter = random.Random(0)
        figure, ax = plt.subplots(figsize=(6, 4.2))
        counts = sorted(lengths)
        for k in counts:
            ax.scatter([k + jitter.uniform(-0.12, 0.12) for _ in lengths[k]], lengths[k], s=14, alpha=0.6,
                       color="tab:blue", label="one filter" if k == counts[0] else None)
        medians = [(k, median(lengths[k])) for k in counts if lengths[k]]
        ax.plot([k for k, _ in medians], [m for _, m in medians], "o-", color="tab:red", label="median")
        one = median(lengths.get(1, []))
        if one is not None:
            ax.plot([0, counts[-1]], [0, counts[-1] * one], "--", color="grey",
                    label=f"linear: k x {one:g} (median of one kernel)")
        ax.set_xticks(counts)
        ax.set_xlabel("kernels in the filter")
        ax.set_ylabel("shortest program found (macros)")
        ax.set_title(f"{samples} random filters per count, 6 registers, {budget} per search")
        ax.legend(fontsize=8)
        return figure

    return draw


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("scaling", __doc__, samples=4, budget="15s", workers=1)
    parser.add_argument("--max-kernels", type=positive_int, default=4, help="largest kernel count (default 4)")
    args = parser.parse_args(argv)
    if args.max_kernels > len(DEFAULT_REGISTERS):
        parser.error(f"--max-kernels: at most {len(DEFAULT_REGISTERS)} kernels fit in SCAMP-5's registers")
    machine = machine_info()
    rng = random.Random(args.seed)

    runs: dict[int, list[Run]] = {}
    filters: dict[int, list] = {}
    for k in range(1, args.max_kernels + 1):
        filters[k] = [random_filter(rng, k, name=f"k{k}-sample{i}") for i in range(args.samples)]
        runs[k] = []
        for i, filter in enumerate(filters[k]):
            run = run_search(filter, budget=args.budget, seed=args.seed + i, workers=args.workers, label=filter.name)
            log(args, run.describe())
            runs[k].append(run)

    lengths = {k: [r.macros for r in rs if r.ok] for k, rs in runs.items()}
    one = median(lengths.get(1, []))
    rows = []
    for k, rs in runs.items():
        ls = lengths[k]
        rows.append([k, f"{len(ls)}/{len(rs)}", median(ls), min(ls, default=None), max(ls, default=None),
                     k * one if one is not None else None, sum(r.status == "no plan" for r in rs),
                     sum(r.status == "failed" for r in rs)])
    headers = ["kernels", "verified", "median", "min", "max", "linear ref", "no plan", "failed"]
    body = ("Shortest verified program (macros) per random filter; `linear ref` is k times the median for one "
            "kernel: a median below it means the kernels shared work.\n\n" + markdown_table(headers, rows) + "\n"
            + failures_markdown([r for rs in runs.values() for r in rs]))
    data = {"filters": {k: [numerators_of(f) for f in fs] for k, fs in filters.items()},
            "runs": {k: [r.as_json() for r in rs] for k, rs in runs.items()}}
    write_outputs(args, "scaling", "Figure 3 (right): program length against kernel count", argv=argv,
                  machine=machine, data=data, body=body, draw=draw_scatter(lengths, args.samples, str(args.budget)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
