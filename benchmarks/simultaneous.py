"""The paper's figure 4: with 18 registers, filters of 1..10 random 3x3 kernels compiled kernel by kernel
and all at once; the summed individual lengths against the simultaneous length.

Compiled individually, each kernel gets the registers the other kernels' outputs leave free (18 - (n - 1)),
as in the paper. Like the paper, it does not also reserve a register to keep the input alive for the
kernels compiled later, which slightly favours individual compilation.

    python -m benchmarks.simultaneous                                                   # quick
    python -m benchmarks.simultaneous --samples 10 --max-kernels 10 --budget 60s --workers 2   # the paper's
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from benchmarks.common import (
    Run,
    failures_markdown,
    filter_from_numerators,
    fmt,
    log,
    machine_info,
    make_parser,
    markdown_table,
    median,
    positive_int,
    random_weights,
    register_names,
    run_search,
    write_outputs,
)


def compile_both_ways(numerators: list, registers: int, args, name: str) -> dict:
    """One filter compiled all at once and kernel by kernel; the individual sum only if every kernel verified."""
    n = len(numerators)
    together = run_search(filter_from_numerators(name, numerators, register_names(registers)), budget=args.budget,
                          seed=args.seed, workers=args.workers, label=f"{name} simultaneous")
    alone: list[Run] = []
    for i, matrix in enumerate(numerators):
        single = filter_from_numerators(f"{name}-kernel{i}", [matrix], register_names(registers - (n - 1)))
        alone.append(run_search(single, budget=args.budget, seed=args.seed, workers=args.workers,
                                label=f"{name} kernel {i} alone"))
    total = sum(r.macros for r in alone) if all(r.ok for r in alone) else None
    log(args, f"{name}: simultaneous {together.status} {fmt(together.macros)}; individually "
              f"{[r.macros if r.ok else r.status for r in alone]} = {fmt(total)}")
    return {"kernels": n, "numerators": numerators, "simultaneous": together, "individual": alone,
            "individual_sum": total}


def draw_comparison(points: list[dict], samples: int, registers: int, budget: str):
    """Left: both lengths against kernel count with medians. Right: simultaneous against summed individual."""

    def draw(plt):
        jitter = random.Random(0)
        figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        counts = sorted({p["kernels"] for p in points})
        for key, colour, label, shift in (("individual_sum", "tab:orange", "kernel by kernel (sum)", -0.12),
                                          ("simultaneous_macros", "tab:blue", "all at once", 0.12)):
            xs = [p["kernels"] + shift + jitter.uniform(-0.06, 0.06) for p in points if p[key] is not None]
            ys = [p[key] for p in points if p[key] is not None]
            left.scatter(xs, ys, s=14, alpha=0.6, color=colour, label=label)
            meds = [(k, median([p[key] for p in points if p["kernels"] == k and p[key] is not None])) for k in counts]
            meds = [(k, m) for k, m in meds if m is not None]
            left.plot([k for k, _ in meds], [m for _, m in meds], "-", color=colour, label=f"median, {label}")
        left.set_xticks(counts)
        left.set_xlabel("kernels in the filter")
        left.set_ylabel("program length (macros)")
        left.legend(fontsize=8)
        both = [p for p in points if p["individual_sum"] is not None and p["simultaneous_macros"] is not None]
        scatter = right.scatter([p["individual_sum"] for p in both], [p["simultaneous_macros"] for p in both],
                                c=[p["kernels"] for p in both], cmap="viridis", s=18)
        top = max([p["individual_sum"] for p in both] + [p["simultaneous_macros"] for p in both], default=1)
        right.plot([0, top], [0, top], "--", color="grey", label="equal length")
        right.set_xlabel("summed individual lengths (macros)")
        right.set_ylabel("simultaneous length (macros)")
        right.legend(fontsize=8)
        figure.colorbar(scatter, ax=right, label="kernels")
        figure.suptitle(f"{samples} random filters per kernel count, {registers} registers, {budget} per search")
        return figure

    return draw


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("simultaneous", __doc__, samples=2, budget="5s", workers=1)
    parser.add_argument("--max-kernels", type=positive_int, default=5, help="largest kernel count (default 5)")
    parser.add_argument("--registers", type=positive_int, default=18, help="register file size (default 18)")
    args = parser.parse_args(argv)
    if args.max_kernels > args.registers:
        parser.error(f"--max-kernels {args.max_kernels} needs at least as many registers (--registers)")
    machine = machine_info()
    rng = random.Random(args.seed)

    points, all_runs = [], []
    for n in range(1, args.max_kernels + 1):
        for i in range(args.samples):
            point = compile_both_ways([random_weights(rng) for _ in range(n)], args.registers, args, f"n{n}-sample{i}")
            all_runs += [point["simultaneous"], *point["individual"]]
            point["simultaneous_macros"] = point["simultaneous"].macros if point["simultaneous"].ok else None
            points.append(point)

    rows = []
    for n in range(1, args.max_kernels + 1):
        ps = [p for p in points if p["kernels"] == n]
        paired = [p for p in ps if p["individual_sum"] is not None and p["simultaneous_macros"] is not None]
        savings = [p["individual_sum"] - p["simultaneous_macros"] for p in paired]
        rows.append([n, f"{len(paired)}/{len(ps)}", median([p["individual_sum"] for p in paired]),
                     median([p["simultaneous_macros"] for p in paired]), median(savings),
                     f"{sum(s > 0 for s in savings)}/{len(paired)}", f"{sum(s < 0 for s in savings)}/{len(paired)}"])
    headers = ["kernels", "compared", "median individual sum", "median simultaneous", "median saving",
               "simultaneous shorter", "simultaneous longer"]
    body = (f"Each filter compiled kernel by kernel (each kernel given {args.registers} - (n - 1) registers) and all "
            f"at once ({args.registers} registers); `compared` counts filters where every compile verified.\n\n"
            + markdown_table(headers, rows) + "\n" + failures_markdown(all_runs))
    data = {"points": [{"kernels": p["kernels"], "numerators": p["numerators"], "individual_sum": p["individual_sum"],
                        "simultaneous_macros": p["simultaneous_macros"], "simultaneous": p["simultaneous"].as_json(),
                        "individual": [r.as_json() for r in p["individual"]]} for p in points]}
    write_outputs(args, "simultaneous", "Figure 4: simultaneous against individual compilation", argv=argv,
                  machine=machine, data=data, body=body,
                  draw=draw_comparison(points, args.samples, args.registers, str(args.budget)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
