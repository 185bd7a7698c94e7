"""Proven optima: the exact search (`search{exact=true}`) on the classic small filters, both instruction sets.

The filters are chosen by rule, not by result: the classic 3x3 and 2x2 image filters of textbooks (the
Sobel, Prewitt and Roberts gradients, alone and as x/y pairs, sharpen, emboss, the 3x3 box sum, the
4-neighbour Laplacian) and the paper's 3x3 Gaussian. Each row is one exact search under the budget: the
program it returns (verified again here), the bound it proved in the goal model and whether the two meet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from benchmarks import common
from cain.frontend.kernel import parse_filter
from cain.model.filter import Filter

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
"""Rows cheap enough to prove in tests (tests/test_exact.py)."""


def load(name: str, instruction_set: str) -> Filter:
    text = f"filter {name}\ninput A\noption instructions = {instruction_set}\n{FILTERS[name]}\n"
    return dataclasses.replace(parse_filter(text, f"{name}.cain"), instruction_set=instruction_set)


def main(argv: Sequence[str] | None = None) -> int:
    parser = common.make_parser("optimal", __doc__.split("\n\n")[0], samples=1, budget="600s", workers=1)
    parser.add_argument(
        "--filters", nargs="+", choices=list(FILTERS), default=list(FILTERS), help="rows to run (default all)"
    )
    parser.add_argument(
        "--sets", nargs="+", choices=SETS, default=list(SETS), help="instruction sets (default both)"
    )
    args = parser.parse_args(argv)
    machine = common.machine_info()
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
                    "yes" if run.ok and run.optimal else "no",
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
        "`general bound`: no program of the instruction set at all is shorter (`cain.search.bound`); "
        "`optimal`: `macros` equals the proven bound (where it also equals the general bound, no program at all "
        "is shorter).\n\n" + common.markdown_table(headers, table) + "\n"
    )
    common.write_outputs(
        args,
        "optimal",
        "Proven optima of small filters",
        argv=argv,
        machine=machine,
        data={"rows": records},
        body=body,
        draw=None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
