"""Bus level against macros: for each filter, the searched plan's ICWs as its macros expand and after
bus-level synthesis (cain.backend.bus_synth), their bus2/bus3 counts, and the error of both programs in
the simulator with analogue noise on (cain.backend.sim.Noise), so that fewer ICWs never buys more noise
silently. Point it at any list of kernel files:

    python -m benchmarks.bus                                  # every examples/*.cain, 10 s per search
    python -m benchmarks.bus --filters suite/*.cain --budget 20000 --cost icws
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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
from cain.backend.bus_synth import expansion
from cain.backend.sim import Noise, correlate, random_images, simulate_bus
from cain.frontend import READERS
from cain.model.filter import Filter
from cain.model.isa import NEIGHBOUR_SIDE, MicroOp

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(path: Path) -> Filter:
    """A filter from a kernel file (any front end Cain reads)."""
    reader = READERS[path.suffix.lstrip(".")]
    return reader.parse_filter(path.read_text(), str(path))


def noise_error(ops: Sequence[MicroOp], filter: Filter, noise: Noise, images: int, size: int) -> float:
    """The RMS difference between the noisy simulation of `ops` and the exact correlation, over every
    output and the pixels far enough from the edges to be exact without noise."""
    margin = sum(1 for op in ops for r in op.dests + op.srcs if r in NEIGHBOUR_SIDE)
    size = max(size, 2 * margin + 16)
    pictures = random_images(len(filter.inputs), images, size, seed=noise.seed + 1)
    inputs = {r: pictures[z] for z, (_, r) in enumerate(filter.inputs)}
    outs = simulate_bus(ops, inputs, [k.register for k in filter.kernels], noise=noise, seed=noise.seed + 2)
    inner = (..., slice(margin, -margin or None), slice(margin, -margin or None))
    squares = [
        np.mean((out[inner] - correlate(pictures, k.goal, filter.depth)[inner]) ** 2)
        for out, k in zip(outs, filter.kernels, strict=True)
    ]
    return float(np.sqrt(np.mean(squares)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("bus", __doc__, samples=1, budget="10s", workers=1)
    parser.add_argument(
        "--filters",
        nargs="+",
        type=Path,
        default=sorted(EXAMPLES.glob("*.cain")),
        help="kernel files (default examples/*.cain)",
    )
    parser.add_argument(
        "--cost",
        choices=("macros", "icws"),
        default="icws",
        help="what the search minimises (default icws: plans scored at bus level)",
    )
    parser.add_argument("--sigma", type=float, default=0.5, help="noise of every transfer (default 0.5)")
    parser.add_argument("--extra", type=float, default=1.0, help="further noise of bus2/bus3 (default 1.0)")
    parser.add_argument("--images", type=int, default=4, help="noisy images per program (default 4)")
    args = parser.parse_args(argv)
    machine = machine_info()
    noise = Noise(args.sigma, args.extra, args.seed)

    records, table, runs = [], [], []
    totals = {"macro": 0, "bus": 0}
    for path in args.filters:
        try:
            filter = load(path)
        except Exception as exc:  # noqa: BLE001 - a broken file is a reported failure
            runs.append(Run(path.stem, "failed", error=f"could not load the filter: {exc}"))
            continue
        run = run_search(
            filter,
            budget=args.budget,
            seed=args.seed,
            workers=args.workers,
            cost=args.cost,
            label=filter.name,
        )
        log(args, run.describe())
        runs.append(run)
        if not run.ok:
            continue
        macro_ops, bus_ops = expansion(run.allocated), run.bus_ops
        errors = {
            level: noise_error(ops, filter, dataclasses.replace(noise), args.images, 48)
            for level, ops in (("macro", macro_ops), ("bus", bus_ops))
        }
        totals["macro"] += len(macro_ops)
        totals["bus"] += len(bus_ops)
        record = {
            "filter": filter.name,
            "file": str(path),
            "macros": run.macros,
            "macro_icws": len(macro_ops),
            "macro_bus2": sum(op.kind != "bus" for op in macro_ops),
            "bus_icws": len(bus_ops),
            "bus_bus2": sum(op.kind != "bus" for op in bus_ops),
            "error_macro": errors["macro"],
            "error_bus": errors["bus"],
            "run": run.as_json(),
        }
        records.append(record)
        table.append(
            [
                filter.name,
                run.macros,
                record["macro_icws"],
                record["bus_icws"],
                f"{100 * (1 - record['bus_icws'] / record['macro_icws']):.0f}%",
                record["macro_bus2"],
                record["bus_bus2"],
                f"{errors['macro']:.3f}",
                f"{errors['bus']:.3f}",
                "yes" if errors["bus"] <= errors["macro"] else "NO",
            ]
        )
    saving = 100 * (1 - totals["bus"] / totals["macro"]) if totals["macro"] else 0.0
    table.append(["total", "", totals["macro"], totals["bus"], f"{saving:.0f}%", "", "", "", "", ""])
    headers = [
        "filter",
        "macros",
        "macro ICWs",
        "bus ICWs",
        "saved",
        "macro bus2",
        "bus bus2",
        "RMS error (macro)",
        "RMS error (bus)",
        "bus no noisier",
    ]
    body = (
        f"Each filter's plan (search `cost={args.cost}`) as the macros expand and after bus-level synthesis, "
        f"both verified. Noise: {args.sigma} per transfer, {args.extra} more on bus2/bus3 (in quadrature), "
        f"{args.images} random images per program, RMS error against the exact correlation away from the "
        "edges.\n\n" + markdown_table(headers, table) + "\n" + failures_markdown(runs)
    )
    write_outputs(
        args,
        "bus",
        "Bus-level synthesis against the macros: ICWs and noise",
        argv=argv,
        machine=machine,
        data={"rows": records, "totals": totals},
        body=body,
        draw=None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
