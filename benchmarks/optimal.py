"""Proven optima: the exact search (`search{exact=true}`) on the classic small filters, both instruction sets.

With `--cost icws`, the exact search over bus micro-ops instead (`search{exact=true cost=icws}`): per filter
the program it returns (verified again here), the ICW bound it proved in its model, and the ICWs of
bus-level synthesis on the heuristic's plan (the length it had to beat).

The filters are chosen by rule, not by result: the classic 3x3 and 2x2 image filters of textbooks (the
Sobel, Prewitt and Roberts gradients, alone and as x/y pairs, sharpen, emboss, the 3x3 box sum, the
4-neighbour Laplacian) and the paper's 3x3 Gaussian. Each row is one exact search under the budget: the
program it returns (verified again here), the bound it proved in the goal model and whether the two meet.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from benchmarks import common
from cain.backend.bus_synth import counts
from cain.backend.verify import verify_bus
from cain.frontend.kernel import parse_filter
from cain.model.filter import Filter
from cain.search import SearchConfig, search
from cain.search.config import register_names
from cain.search.exact.bus import upper_ops

SETS = ("all", "basic")

FILTERS: dict[str, str] = {
    "roberts": "output gx -> B = [1 0; 0 -1]\noutput gy -> C = [0 1; -1 0]",
    "sobel_x": "output gx -> B = [-1 0 1; -2 0 2; -1 0 1]",
    "prewitt_x": "output gx -> B = [-1 0 1; -1 0 1; -1 0 1]",
    "sharpen": "output s -> B = [0 -1 0; -1 5 -1; 0 -1 0]",
    "emboss": "output e -> B = [-2 -1 0; -1 1 1; 0 1 2]",
    "box3x3": "output b -> B = [1 1 1; 1 1 1; 1 1 1]",
    "laplacian4": "output l -> B = [0 1 0; 1 -4 1; 0 1 0]",
    "sobel": "output gx -> B = [-1 0 1; -2 0 2; -1 0 1]\noutput gy -> C = [1 2 1; 0 0 0; -1 -2 -1]",
    "prewitt": "output gx -> B = [-1 0 1; -1 0 1; -1 0 1]\noutput gy -> C = [1 1 1; 0 0 0; -1 -1 -1]",
    "gauss3x3": "output g -> B = 1/16 [1 2 1; 2 4 2; 1 2 1]",
}
"""The filters as kernel-language text (input in A, outputs in B and C, exact weights)."""

SMALL = ("roberts", "sobel_x", "prewitt_x")
"""Rows cheap enough to prove in tests (tests/search/test_exact.py)."""


def load(name: str, instruction_set: str) -> Filter:
    text = f"filter {name}\ninput A\noption instructions = {instruction_set}\n{FILTERS[name]}\n"
    return dataclasses.replace(parse_filter(text, f"{name}.cain"), instruction_set=instruction_set)


def main(argv: Sequence[str] | None = None) -> int:
    parser = common.make_parser("optimal", __doc__, samples=1, budget="600s", workers=1)
    parser.add_argument(
        "--filters", nargs="+", choices=list(FILTERS), default=list(FILTERS), help="rows to run (default all)"
    )
    parser.add_argument(
        "--sets", nargs="+", choices=SETS, default=list(SETS), help="instruction sets (default both)"
    )
    parser.add_argument(
        "--cost", choices=("macros", "icws"), default="macros", help="what is minimised (default macros)"
    )
    args = parser.parse_args(argv)
    machine = common.machine_info()
    if args.cost == "icws":
        return icws(args, argv, machine)
    table, records, runs = [], [], []
    for name in args.filters:
        for iset in args.sets:
            run: common.Run = common.run_search(
                load(name, iset),
                budget=args.budget,
                seed=args.seed,
                instruction_set=iset,
                label=f"{name} {iset}",
                exact=True,
            )
            common.log(args, run.describe())
            runs.append(run)
            records.append({"filter": name, "set": iset, "text": FILTERS[name], "run": run.as_json()})
            table.append(
                [
                    name,
                    iset,
                    run.macros if run.ok else None,
                    run.model_bound,
                    run.lower_bound,
                    proof(run),
                    run.icws if run.ok else None,
                    common.fmt(run.seconds, 1),
                    run.nodes,
                    run.stopped,
                    run.status,
                ]
            )
    headers = [
        "filter",
        "set",
        "macros",
        "proven bound",
        "general bound",
        "optimal",
        "ICWs",
        "seconds",
        "nodes",
        "stopped",
        "status",
    ]
    body = (
        "One exact search per filter and instruction set. `macros`: the verified program returned; `proven "
        "bound`: no program of the goal model (instructions split atoms, never cancel them) is shorter; "
        "`general bound`: no program of the instruction set at all is shorter (`cain.search.exact.bound`, "
        "raised by CP-SAT's refutations, `cain.search.exact.sat`); `optimal`: `macros` equals the general "
        "bound (`every program`) or the proven bound (`goal model`).\n\n" + common.markdown_table(headers, table) + "\n"
    )
    return write(args, argv, machine, "Proven optima of small filters", records, body)


def proof(run: common.Run) -> str:
    """How far the program is proven shortest: among every program, the goal model's, or not."""
    if not run.ok:
        return "no"
    if run.lower_bound is not None and run.macros <= run.lower_bound:
        return "every program"
    return "goal model" if run.optimal else "no"


def write(args, argv: Sequence[str] | None, machine: dict, title: str, records: list, body: str) -> int:
    """Write the results and the summary (`common.write_outputs`)."""
    common.write_outputs(
        args, "optimal", title, argv=argv, machine=machine, data={"rows": records}, body=body, draw=None
    )
    return 0


def icws(args, argv: Sequence[str] | None, machine: dict) -> int:
    """The `--cost icws` table: one exact search over micro-ops per filter (the instruction set does not
    matter at bus level)."""
    table, records = [], []
    for name in args.filters:
        filt = load(name, "all")
        cfg = SearchConfig(exact=True, cost="icws", progress=False, seed=args.seed, **args.budget.config())
        started = time.perf_counter()
        result = search(filt, cfg)
        seconds = time.perf_counter() - started
        ops = result.bus_ops
        if ops is not None:
            verify_bus(ops, filt)
        synth = len(upper_ops(result.program, filt, register_names(filt, cfg))) if result.program else None
        found = counts(ops) if ops is not None else {}
        optimal = ops is not None and len(ops) <= result.icw_bound
        row = [
            name,
            found.get("icws"),
            result.icw_bound,
            "yes" if optimal else "no",
            found.get("bus2"),
            synth,
            common.fmt(seconds, 1),
            result.nodes,
            result.stopped,
        ]
        common.log(args, " ".join(str(x) for x in row))
        table.append(row)
        records.append(
            {
                "filter": name,
                "text": FILTERS[name],
                "icws": found.get("icws"),
                "bound": result.icw_bound,
                "optimal": optimal,
                "program": [str(op) for op in ops or []],
                "bus_synth_icws": synth,
                "seconds": seconds,
                "nodes": result.nodes,
                "stopped": result.stopped,
            }
        )
    headers = [
        "filter",
        "ICWs",
        "proven bound",
        "optimal",
        "bus2",
        "bus-synth ICWs",
        "seconds",
        "nodes",
        "stopped",
    ]
    body = (
        "One exact search over bus micro-ops per filter (`search{exact=true cost=icws}`). `ICWs`: the verified "
        "program returned; `proven bound`: no program of the bus-level model (cain/search/exact/bus.py: the "
        "bus rules, NEWS never read and written in one micro-op, sources never cancelling, whole goals) is shorter; "
        "`optimal`: the two meet; `bus-synth ICWs`: bus-level synthesis of the heuristic's macro plan, the "
        "length to beat; `stopped`: `optimal` (a program of the bound found), `upper` (every shorter length "
        "refuted), `time` or `nodes` (the budget ended first).\n\n"
        + common.markdown_table(headers, table)
        + "\n"
    )
    return write(args, argv, machine, "Proven ICW optima of small filters", records, body)


if __name__ == "__main__":
    raise SystemExit(main())
