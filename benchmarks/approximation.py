"""Rounding toward zero within `max_error` (`cain.model.approx.sparsen`) against rounding to the nearest.

Filters whose weights are not multiples of a power of two, drawn by rule from a seed (none of them in the
generalisation suite): 2-D and 1-D Gaussians, Laplacians of Gaussians, box means, and random real 3x3
kernels (one or two), each with a `max_error` of 0.02, 0.05 or 0.1. Each is searched twice at the same
depth, on the goals rounded to the nearest and on the goals `approximate` gives, and both programs are
verified.

    python -m benchmarks.approximation                       # 24 filters, 1500 nodes
    python -m benchmarks.approximation --samples 40 --budget 60s --workers 2
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence

from benchmarks.common import (
    Run,
    failures_markdown,
    log,
    machine_info,
    make_parser,
    markdown_table,
    run_search,
    write_outputs,
)
from benchmarks.suite import gaussian_weights, matrix_text
from cain.api import read_filters
from cain.model.approx import approximate_kernel
from cain.model.filter import Filter

ERRORS = ("0.02", "0.05", "0.1")


def _decimals(matrix: list[list[float]], total: float) -> list[list[str]]:
    """`matrix` scaled to absolute weights summing to `total`, as decimal weights."""
    size = sum(abs(v) for row in matrix for v in row)
    return [[f"{total * v / size:.4f}" for v in row] for row in matrix]


def _log(size: int, sigma: float) -> list[list[str]]:
    c = size // 2
    w = [[((r - c) ** 2 + (k - c) ** 2) / (2 * sigma**2) for k in range(size)] for r in range(size)]
    w = [[(v - 1) * math.exp(-v) for v in row] for row in w]
    mean = sum(map(sum, w)) / size**2
    return _decimals([[v - mean for v in row] for row in w], 2)


def sources(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """`count` different kernel files (name, text), drawn by rule from `rng`."""
    out: list[tuple[str, str]] = []
    seen = set()
    while len(out) < count:
        family = rng.choice(["gaussian", "gaussian1d", "log", "box", "random", "random2"])
        if family == "gaussian":
            kernels = [matrix_text(gaussian_weights(rng.choice([3, 5]), rng.choice([0.6, 0.8, 1.0, 1.3])))]
        elif family == "gaussian1d":
            size, sigma = rng.choice([3, 5, 7]), rng.choice([0.7, 1.0, 1.5])
            kernels = [matrix_text(gaussian_weights(size, sigma, one_row=True))]
        elif family == "log":
            kernels = [matrix_text(_log(5, rng.choice([0.8, 1.0, 1.2])))]
        elif family == "box":
            rows, cols = rng.choice([(3, 3), (1, 5), (5, 1), (3, 5), (5, 5)])
            kernels = [f"1/{rows * cols} " + matrix_text([[1] * cols] * rows)]
        else:
            kernels = [
                matrix_text(_decimals([[rng.uniform(-1, 1) for _ in range(3)] for _ in range(3)], 2))
                for _ in range(2 if family == "random2" else 1)
            ]
        max_error = rng.choice(ERRORS)
        if (*kernels, max_error) in seen:
            continue
        seen.add((*kernels, max_error))
        name = f"{family}_{len(out)}"
        outputs = "".join(f"output k{j} -> {'AB'[j]} = {k}\n" for j, k in enumerate(kernels))
        text = f"filter {name}\ninput A\n{outputs}option max_depth = 12\noption max_error = {max_error}\n"
        out.append((name, text))
    return out


def nearest(filt: Filter) -> Filter:
    """`filt` with every weight rounded to the nearest at its depth (what `approximate` did before `sparsen`)."""
    kernels = []
    for k in filt.kernels:
        goal, error = approximate_kernel(k.weights, filt.depth)
        kernels.append(dataclasses.replace(k, goal=goal, error=error))
    return dataclasses.replace(filt, kernels=tuple(kernels))


def _shape(filt: Filter) -> tuple[int, int]:
    """Atoms and positions over all kernels."""
    items = [c for k in filt.kernels for _, c in k.goal.items]
    return sum(abs(c) for c in items), len(items)


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("approximation", __doc__, samples=24, budget="1500", workers=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    machine = machine_info()
    rows, records, runs = [], [], []
    totals = {"nearest": 0, "sparse": 0}
    shorter = longer = 0
    for name, text in sources(rng, args.samples):
        (sparse,) = read_filters(text)
        pair = {"nearest": nearest(sparse), "sparse": sparse}
        found: dict[str, Run] = {}
        for label, filt in pair.items():
            run = run_search(
                filt, budget=args.budget, seed=args.seed, workers=args.workers, label=f"{name} {label}"
            )
            log(args, run.describe())
            found[label] = run
            runs.append(run)
        shapes = {label: _shape(filt) for label, filt in pair.items()}
        if all(r.ok for r in found.values()):
            for label, run in found.items():
                totals[label] += run.macros
            shorter += found["sparse"].macros < found["nearest"].macros
            longer += found["sparse"].macros > found["nearest"].macros
        error = float(sum(k.error for k in sparse.kernels))
        rows.append(
            [
                name,
                text.split("max_error = ")[1].strip(),
                sparse.depth,
                *(f"{shapes[label][0]} / {shapes[label][1]}" for label in pair),
                *(found[label].macros if found[label].ok else found[label].status for label in pair),
                f"{error:.4f}",
            ]
        )
        records.append(
            {
                "name": name,
                "source": text,
                "depth": sparse.depth,
                "error": error,
                **{
                    label: {
                        "atoms": shapes[label][0],
                        "positions": shapes[label][1],
                        **found[label].as_json(),
                    }
                    for label in pair
                },
            }
        )
    rows.append(["**total**", "", "", "", "", totals["nearest"], totals["sparse"], ""])
    change = 100 * (totals["sparse"] - totals["nearest"]) / totals["nearest"] if totals["nearest"] else 0.0
    body = (
        markdown_table(
            [
                "filter",
                "max_error",
                "depth",
                "nearest: atoms / positions",
                "sparse: atoms / positions",
                "nearest: macros",
                "sparse: macros",
                "sparse: error",
            ],
            rows,
        )
        + f"\nOn the filters both compile: {totals['sparse']} macros against {totals['nearest']} ({change:+.1f}%); "
        f"sparse rounding shorter on {shorter}, longer on {longer}.\n\n" + failures_markdown(runs)
    )
    data = {"filters": records, "totals": totals, "shorter": shorter, "longer": longer}
    write_outputs(
        args,
        "approximation",
        "Sparse rounding against rounding to the nearest",
        argv=argv,
        machine=machine,
        data=data,
        body=body,
        draw=None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
