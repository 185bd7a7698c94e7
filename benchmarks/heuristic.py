"""The paper's figure 3 (left): how fast the search finds short plans with the SCAMP-5 heuristic and with
the heuristic replaced by a random order of the children.

Random single 3x3 kernels (paper eq. 10), one worker, a node budget; for every n, the median length of
the best plan found within the first n nodes.

    python -m benchmarks.heuristic                                # quick
    python -m benchmarks.heuristic --samples 100 --budget 20000   # the paper's setting
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
    random_filter,
    run_search,
    write_outputs,
)

HEURISTICS = ("scamp5", "random")
CHECKPOINTS = (0.01, 0.025, 0.05, 0.125, 0.25, 0.5, 1.0)
"""Fractions of the node budget reported in the table (200, 500, ..., 20000 nodes for 20000)."""


def curve(runs: Sequence[Run], xs: Sequence[int]) -> list[tuple[int, float | None, int]]:
    """At each node count n: (n, median best length over the samples with a plan by n, how many)."""
    points = []
    for n in xs:
        lengths = [b for b in (r.best_after(n) for r in runs) if b is not None]
        points.append((n, median(lengths), len(lengths)))
    return points


def node_grid(runs: Sequence[Run], limit: int) -> list[int]:
    """Every node count where some sample improved, plus 0 and the end: the exact step points."""
    xs = {0, limit}
    for r in runs:
        if r.ok:
            xs.update(e["nodes"] for e in r.events if e["nodes"] <= limit)
    return sorted(xs)


def draw_curves(curves: dict[str, list[tuple[int, float | None, int]]], samples: int, budget: str):
    def draw(plt):
        figure, ax = plt.subplots(figsize=(7, 4.2))
        share = ax.twinx()
        for (name, points), colour in zip(curves.items(), ("tab:blue", "tab:orange"), strict=False):
            xs = [n for n, m, _ in points if m is not None]
            ys = [m for _, m, _ in points if m is not None]
            label = "SCAMP-5 heuristic" if name == "scamp5" else "random order"
            if xs:
                ax.step(xs, ys, where="post", color=colour, label=f"{label}: median best plan")
            share.step([n for n, _, _ in points], [100 * c / samples for _, _, c in points], where="post",
                       color=colour, linestyle=":", label=f"{label}: % of samples with a plan")
        ax.set_xlabel("nodes explored")
        ax.set_ylabel("median length of best plan (macros)")
        share.set_ylabel("% of samples with any plan (dotted)")
        share.set_ylim(0, 105)
        ax.set_title(f"{samples} random 3x3 kernels, 1 worker, {budget} per search")
        lines = ax.get_legend_handles_labels()
        more = share.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="center right")
        return figure

    return draw


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("heuristic", __doc__, samples=20, budget="2000", workers=1)
    parser.add_argument("--heuristics", nargs="+", choices=HEURISTICS, default=list(HEURISTICS),
                        help="child orders to compare (default both)")
    args = parser.parse_args(argv)
    machine = machine_info()
    rng = random.Random(args.seed)
    filters = [random_filter(rng, 1, name=f"sample{i}") for i in range(args.samples)]

    runs: dict[str, list[Run]] = {}
    for heuristic in args.heuristics:
        runs[heuristic] = []
        for i, filter in enumerate(filters):
            label = f"{heuristic} sample {i}"
            run = run_search(filter, budget=args.budget, seed=args.seed + i, workers=args.workers,
                             heuristic=heuristic, label=label)
            log(args, run.describe())
            runs[heuristic].append(run)

    limit = args.budget.nodes or max((r.nodes or 0 for rs in runs.values() for r in rs), default=0)
    curves = {h: curve(rs, node_grid(rs, limit)) for h, rs in runs.items()}
    checkpoints = sorted({max(1, round(f * limit)) for f in CHECKPOINTS})
    at = {h: curve(rs, checkpoints) for h, rs in runs.items()}
    headers = ["nodes"] + [f"{h}: {col}" for h in runs for col in ("median best", "with a plan")]
    rows = [[n] + [v for h in runs for v in (at[h][i][1], f"{at[h][i][2]}/{args.samples}")]
            for i, n in enumerate(checkpoints)]
    found = "; ".join(f"{h}: {sum(r.ok for r in rs)}/{len(rs)} samples found a verified plan, "
                      f"{sum(r.status == 'failed' for r in rs)} failed" for h, rs in runs.items())
    body = ("Median length (macros) of the best plan found within the first n nodes, over the samples that "
            "had found a plan by then (samples without a plan are missing, not counted as long).\n\n"
            + markdown_table(headers, rows) + f"\n{found}.\n\n" + failures_markdown([r for rs in runs.values()
                                                                                      for r in rs]))
    data = {
        "filters": [numerators_of(f) for f in filters],
        "runs": {h: [r.as_json() for r in rs] for h, rs in runs.items()},
        "curves": {h: [{"nodes": n, "median": m, "with_plan": c} for n, m, c in pts] for h, pts in curves.items()},
    }
    write_outputs(args, "heuristic", "Figure 3 (left): SCAMP-5 heuristic against a random order", argv=argv,
                  machine=machine, data=data, body=body, draw=draw_curves(curves, args.samples, str(args.budget)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
