"""Where the search cannot reach a known program: each filter's shortest program of an earlier suite run
(Cain-Java's or Cain's), replayed in reverse from the kernels' goal-bag, asking at each step whether the
search's pair generation offers it among the children a node keeps, and at which rank.

A step not offered is a hole in pair generation (a form, an offset or a split it never makes), to be fixed
in `cain.search.goals.space`; a step offered at a late rank is a matter of order and time. The replay uses
worker 0's goal space (`worker_space`) and branch, and takes a step the search does not offer as if it
had, so every hole of a program is listed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import (
    RESULTS_DIR,
    command_line,
    machine_info,
    machine_line,
    markdown_table,
    read_results,
    write_results,
)
from benchmarks.suite import build_suite, shortest_runs
from cain.api import read_filters
from cain.model.filter import Filter
from cain.model.isa import MACROS
from cain.model.program import Instr, Program
from cain.search import SearchConfig
from cain.search.config import register_names
from cain.search.goals import atoms
from cain.search.heuristic.worker import worker_space

_LINE = re.compile(r"(\w+)\((.*)\)")


def program_of(lines: Sequence[str], filt: Filter) -> Program:
    """A program recorded as `benchmarks.common.program_lines` (`macro(results, scratch, operands,
    directions)` on registers), as SSA values: the inputs in their registers, each kernel read from its
    register at the end."""
    held = {register: value for value, (_, register) in enumerate(filt.inputs)}
    inputs = [(value, register) for register, value in held.items()]
    count = len(held)
    instrs = []
    for line in lines:
        name, text = _LINE.fullmatch(line.strip()).groups()
        macro = MACROS[name]
        args = [a.strip() for a in text.split(",")]
        n_res, n_scr, n_ops = len(macro.results), len(macro.scratch), len(macro.operands)
        operands = tuple(held[r] for r in args[n_res + n_scr : n_res + n_scr + n_ops])
        results = []
        for register in args[:n_res]:
            held[register] = count
            results.append(count)
            count += 1
        instrs.append(Instr(name, tuple(results), operands, tuple(args[n_res + n_scr + n_ops :])))
    return Program(filt.name, inputs, instrs, [(held[k.register], k.register) for k in filt.kernels])


def replay(program: Program, filt: Filter, cfg: SearchConfig) -> list[dict[str, Any]]:
    """Per step of `program`, last first: its macro, and the rank at which the search's pair generation
    offers it from the goal-bag before it (None: not offered)."""
    space = worker_space(filt, cfg, len(register_names(filt, cfg)))
    values = program.evaluate(filt.initial_goals())

    def goal(value: int) -> int:
        return space.intern(atoms.from_goal(values[value]))

    last = program.last_uses()
    bag = space.bag(atoms.from_goal(g) for g in filt.final_goals())
    steps = []
    for i in range(len(program.instrs) - 1, -1, -1):
        instr = program.instrs[i]
        pairs = space.pairs(bag, cfg.branch)  # the step's goals interned after: ids (ties) as in the search
        upper, lowers = goal(instr.results[0]), sorted(goal(o) for o in instr.operands)
        rank = next((k for k, (_, p, _) in enumerate(pairs) if p[2] == upper and sorted(p[3]) == lowers), None)
        steps.append({"step": i, "macro": instr.macro, "rank": rank})
        if rank is not None:
            bag = pairs[rank][2]
        else:
            before = {v for v, _ in program.inputs} | {r for done in program.instrs[:i] for r in done.results}
            bag = tuple(sorted(goal(v) for v in before if last.get(v, -1) >= i))
    return steps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reach", description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, nargs="+", required=True, metavar="OUT",
                        help="earlier suite runs (benchmarks/results/...) whose shortest programs to replay")
    parser.add_argument("--filters", nargs="+", metavar="NAME", help="only these filters (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "reach",
                        help="output directory (default benchmarks/results/reach/)")
    args = parser.parse_args(argv)
    suite = {f.name: f for f in build_suite()}
    unknown = [n for n in args.filters or () if n not in suite]
    if unknown:
        parser.error(f"no suite filter named {', '.join(unknown)}")
    records = []
    for out in args.source:
        try:
            records.append((out.name, read_results(out)["rows"]))
        except (OSError, ValueError) as exc:
            parser.error(f"--from {out}: cannot read its results ({exc})")
    best = shortest_runs(records)
    cfg = SearchConfig()
    rows, table = [], []
    for name in args.filters or [n for n in suite if n in best]:
        if name not in best:
            table.append([name, "-", "no recorded program", "", "", ""])
            continue
        run, source = best[name]
        macros = run["macros"]
        filt = read_filters(suite[name].source)[0]
        steps = replay(program_of(run["program"], filt), filt, cfg)
        holes = [s for s in steps if s["rank"] is None]
        worst = max((s["rank"] for s in steps if s["rank"] is not None), default=None)
        rows.append({"filter": name, "macros": macros, "source": source, "steps": steps})
        table.append([
            name, macros, source, len(steps) - len(holes),
            ", ".join(f"{s['macro']} (step {s['step'] + 1})" for s in holes) or "none", worst,
        ])
        print(f"{name}: {len(holes)} step(s) not offered", file=sys.stderr, flush=True)
    machine = machine_info()
    command = command_line("reach", argv)
    body = markdown_table(
        ["filter", "macros", "program of", "steps offered", "steps not offered", "latest rank offered"], table
    )
    args.out.mkdir(parents=True, exist_ok=True)
    write_results(args.out, {"experiment": "reach", "command": command, "machine": machine, "rows": rows})
    summary = (
        f"# Where the search cannot reach a known program\n\nCommand: `{command}`\n\nMachine: "
        f"{machine_line(machine)}\n\nEach filter's shortest recorded program, replayed in reverse: a step is "
        f"offered when the search's pair generation gives it among the {cfg.branch} children a node keeps "
        f"(rank 0: first).\n\n{body}"
    )
    (args.out / "summary.md").write_text(summary)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
