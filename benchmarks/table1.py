"""The paper's Table 1: the example filters in both instruction sets under a fixed budget, next to the
paper's numbers, the Java implementation's measured numbers and AUKE's.

    python -m benchmarks.table1                   # 60 s per search, 2 workers (the paper's setting)
    python -m benchmarks.table1 --budget 10s      # quicker
    python -m benchmarks.table1 --compile         # `cain k.cain` itself: the default compile, bus level
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import (
    Run,
    failures_markdown,
    fmt,
    log,
    machine_info,
    make_parser,
    markdown_table,
    run_search,
    write_outputs,
)
from benchmarks.suite import ROOT, SuiteFilter, Tree, compile_in_process
from cain.frontend.kernel import parse_filter
from cain.model.filter import Filter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SETS = ("all", "basic")


@dataclass(frozen=True)
class Row:
    """One filter of Table 1 and the reference numbers (macros) to compare with."""

    name: str
    files: tuple[str, ...]
    """Example files (in examples/) compiled together as one filter, the first holding all kernels if
    the filter has its own file."""
    paper: dict[str, int]
    java: dict[str, int]
    java_best_seconds: dict[str, float]
    auke: str
    java_icws: int = 0
    """The ICWs of the Java tool's best program (either set)."""


TABLE1 = (
    Row("gauss3x3", ("gauss3x3.cain",), {"all": 10, "basic": 12}, {"all": 10, "basic": 12},
        {"all": 1.0, "basic": 0.2}, "12", 24),
    Row("gauss5x5", ("gauss5x5.cain",), {"all": 19, "basic": 25}, {"all": 19, "basic": 25},
        {"all": 17.0, "basic": 47.0}, "50", 52),
    Row("gauss5x5+gauss3x3", ("gauss5x5_3x3.cain",),
        {"all": 26, "basic": 39}, {"all": 26, "basic": 37}, {"all": 21.0, "basic": 25.0}, "50+12", 70),
    Row("analognet2", ("analognet2.cain",), {"all": 21, "basic": 30}, {"all": 20, "basic": 30},
        {"all": 6.0, "basic": 7.0}, "13+21+15", 46),
)
"""Paper Table 1; the Java implementation measured on this kind of machine (2 threads, 60 s); AUKE."""


def source_of(row: Row) -> str:
    """The row's kernel file, from examples/."""
    for candidate in row.files:
        path = EXAMPLES / candidate
        if path.exists():
            return path.read_text()
    raise FileNotFoundError(f"no example file for {row.name} in {EXAMPLES} (looked for {', '.join(row.files)})")


def load_filter(row: Row) -> Filter:
    """The row's filter from its example file, through the front end."""
    return dataclasses.replace(parse_filter(source_of(row), f"{row.name}.cain"), name=row.name)


def compiled(row: Row, iset: str, budget, workers: int, seed: int) -> Run:
    """The default compile of the row's kernel file in `iset` (`cain.compile`, bus level, both searches)
    in a fresh process, as `benchmarks.suite --compile` runs it."""
    entry = SuiteFilter(row.name, "table1", source_of(row) + f"option instructions = {iset}\n")
    return compile_in_process(Tree("current", ROOT), entry, entry.load(), budget=budget, workers=workers, seed=seed)


def best_run(runs: Sequence[Run], cost: str = "macros") -> Run:
    """The shortest verified run (in macros, or in ICWs at bus level for `cost=icws`; ties: the other
    count, then earlier), else the first."""
    verified = [r for r in runs if r.ok]
    if not verified:
        return runs[0]
    if cost == "icws":
        return min(verified, key=lambda r: (r.bus_icws, r.macros, r.best_plan_seconds or 0.0))
    return min(verified, key=lambda r: (r.macros, r.icws, r.best_plan_seconds or 0.0))


def target_met(run: Run, row: Row, iset: str) -> str:
    if not run.ok:
        return "no"
    return "yes" if run.macros <= min(row.paper[iset], row.java[iset]) else "no"


def draw_bars(records: list[dict]):
    """Grouped bars per filter and set: ours, the paper's, the Java implementation's macros."""

    def draw(plt):
        import numpy as np

        figure, ax = plt.subplots(figsize=(9, 4))
        labels = [f"{r['filter']}\n{r['set']}" for r in records]
        ours = [r["best"]["macros"] if r["best"]["status"] == "verified" else 0 for r in records]
        x = np.arange(len(records))
        for offset, values, name in ((-0.27, ours, "Cain (Python, this run)"),
                                     (0.0, [r["paper"] for r in records], "paper Table 1"),
                                     (0.27, [r["java"] for r in records], "Java implementation, 60 s")):
            ax.bar(x + offset, values, width=0.27, label=name)
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_ylabel("program length (macros)")
        ax.set_title("Table 1 filters (a missing bar: no verified plan)")
        ax.legend(fontsize=8)
        return figure

    return draw


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("table1", __doc__, samples=1, budget="60s", workers=2)
    parser.add_argument("--filters", nargs="+", choices=[r.name for r in TABLE1], default=[r.name for r in TABLE1],
                        help="rows to run (default all)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS), help="instruction sets (default both)")
    parser.add_argument("--cost", choices=("macros", "icws"), default="macros",
                        help="what the search minimises: macros (the paper) or ICWs at bus level (default macros)")
    parser.add_argument("--compile", action="store_true",
                        help="run the default compile (cain.compile: the searches in ICWs and in macros, bus level) "
                             "instead of one search; `bus ICWs` are then the printed program's, `macros` the fewer "
                             "of the two searches' programs and the times the whole compile's")
    args = parser.parse_args(argv)
    if args.compile and args.cost != "macros":
        parser.error("--compile runs both searches: it takes no --cost")
    machine = machine_info()

    rows = [r for r in TABLE1 if r.name in args.filters]
    records, table, all_runs = [], [], []
    for row in rows:
        try:
            filter = load_filter(row)
        except Exception as exc:  # noqa: BLE001 - a missing or broken example is a reported failure
            for iset in args.sets:
                run = Run(f"{row.name} {iset}", "failed", error=f"could not load the filter: {exc}")
                all_runs.append(run)
                records.append({"filter": row.name, "set": iset, "runs": [run.as_json()]})
                table.append([row.name, iset, *["-"] * 10, "failed", row.paper[iset], row.java[iset], row.auke,
                              row.java_icws, "no"])
            continue
        for iset in args.sets:
            runs = []
            for i in range(args.samples):
                label = f"{row.name} {iset} seed {args.seed + i}"
                if args.compile:
                    run = compiled(row, iset, args.budget, args.workers, args.seed + i)
                    run.label = label
                else:
                    run = run_search(filter, budget=args.budget, seed=args.seed + i, workers=args.workers,
                                     instruction_set=iset, label=label, cost=args.cost)
                log(args, run.describe())
                runs.append(run)
            all_runs += runs
            best = best_run(runs, "icws" if args.compile else args.cost)
            records.append({"filter": row.name, "set": iset, "paper": row.paper[iset], "java": row.java[iset],
                            "java_best_seconds": row.java_best_seconds[iset], "auke": row.auke,
                            "best": best.as_json(), "runs": [r.as_json() for r in runs]})
            memory = best.peak_memory / 2**20 if best.peak_memory is not None else None
            noisy = f"{best.bus2}/{best.bus3}" if best.bus2 is not None else None
            table.append([row.name, iset, best.macros, best.lower_bound if best.ok else None, best.icws, best.bus_icws,
                          noisy, fmt(best.first_plan_seconds, 2),
                          fmt(best.best_plan_seconds, 2),
                          best.nodes, round(best.nodes_per_second) if best.nodes_per_second else None,
                          round(memory) if memory is not None else None, best.status,
                          row.paper[iset], row.java[iset], row.auke, row.java_icws, target_met(best, row, iset)])

    headers = ["filter", "set", "macros", "lower bound", "ICWs", "bus ICWs", "bus2/bus3", "first plan (s)",
               "best plan (s)", "nodes", "nodes/s", "peak MB", "status", "paper", "Java", "AUKE", "Java ICWs",
               "target met"]
    body = ("Our best verified program per filter and instruction set; `paper` is the paper's Table 1, `Java` "
            "the Java implementation measured with 2 threads in 60 s on this kind of machine, `AUKE` the paper's "
            "AUKE numbers (per kernel; basic set only). `ICWs` counts the macros' bus expansion, `bus ICWs` the same "
            "plan after bus-level synthesis (bus-synth; `bus2/bus3` its noisiest micro-ops, verified again), "
            "`Java ICWs` the Java tool's best program in ICWs. `target met`: at most min(paper, Java) macros. Times are "
            "seconds from the start of the search; peak memory is the sum of the peak resident sets of the search's "
            "processes.\n\n"
            + ("With --compile each row is the default compile (`cain.compile` at this budget and these workers, bus "
               "level: the searches in ICWs and in macros side by side, the program of fewer bus ICWs printed): "
               "`macros` is the fewer of the two searches' programs, `bus ICWs` the printed program's, the times "
               "the whole compile's, and nodes and memory are not recorded.\n\n" if args.compile else "")
            + markdown_table(headers, table) + "\n" + failures_markdown(all_runs))
    write_outputs(args, "table1", "Table 1: the example filters", argv=argv, machine=machine,
                  data={"rows": records}, body=body,
                  draw=draw_bars([r for r in records if "best" in r]) if any("best" in r for r in records) else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
