"""Cain-Java's own numbers for its superpixel examples: its cost model beside the real cost of its C.

Each example config of Cain-Java (`examples/boxSmallSuperPixel.json`, `SuperPixel-3-*.json`, present from
commit 3dc1981 on) is run by Cain-Java itself, and the C it prints for its best plan is counted here:

- its cost model: the `Cost:` it reports (the `InstructionCost` of the examples: the sum of each
  transformation's `cost()`);
- ICWs: every DREG kernel word of the C (SET, CLR, MOV, NOT, OR, NOR, DNEWS0, DNEWS1, WHERE) one ICW, as
  `cain.model.dreg.WORDS` counts them; the SDK's in-place macro forms (`NOT(Rl)`, `OR(Rl,Rx)`,
  `NOR(Rl,Rx)`) and `REFRESH` two;
- host pattern loads: `scamp5_load_pattern` and `scamp5_select_pattern` calls between kernels; and the
  kernels (`scamp5_kernel_begin` ... `scamp5_kernel_end` pairs) they split the program into.

The C also shows what docs/reference section 6 suspects of superpixel mode; `defects` lists it factually
per example (comments that are not C, a word whose destination is a source, the y bank offset of each
`Movxb`, `Negate` without a preamble). Analogue calls of the ADC / DAC (lower-case SDK calls) are counted
apart and are not ICWs here.

`python -m benchmarks.superpixel_java --java DIR` (a Cain-Java checkout at 3dc1981 or later, built by
benchmarks/java/build.sh) prints the table and writes benchmarks/results/superpixel-java/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.cain_java import ENVIRONMENT, CainJava, find_cain_java, java_error, run_java
from benchmarks.common import (
    RESULTS_DIR,
    command_line,
    machine_info,
    machine_line,
    markdown_table,
    write_results,
)
from cain.model.dreg import WORDS

EXAMPLES = (
    "boxSmallSuperPixel",
    "SuperPixel-3-2-a",
    "SuperPixel-3-2-a-sobel",
    "SuperPixel-3-2-b",
    "SuperPixel-3-2-c",
    "SuperPixel-3-2-d",
    "SuperPixel-3-3-a",
    "SuperPixel-3-3-b",
    "SuperPixel-3-3-c",
)
"""Cain-Java's superpixel examples, in its `examples/` folder."""

NATURAL_BINDING = {
    "R[mask]": "R0",
    "R[masked]": "R12",
    "R[north]": "R3",
    "R[east]": "R4",
    "R[south]": "R1",
    "R[west]": "R2",
    "R[select]": "SELECT",
    "R[flag]": "FLAG",
}
"""The examples' placeholder names on the SDK's DREGs (docs/reference section 6); the scratch and data
registers go to R5-R11. Counting needs no binding: each name stands for one DREG either way."""

ONE_WORD = {*WORDS, "DNEWS1", "WHERE"}
TWO_WORDS = {("NOT", 1), ("OR", 2), ("NOR", 2), ("REFRESH", 1)}
"""SDK macros of two ICWs (in-place forms read, then write; REFRESH is REFRESH_R, REFRESH_L)."""
LOADS = ("scamp5_load_pattern", "scamp5_select_pattern")

_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CALL = re.compile(r"(\w+)\s*\(([^;]*)\)\s*;")
_CODE = re.compile(
    r"^CircuitDepths:.*?\n(.*?/\* ops: (\d+), selects: (\d+), comments: \d+, other: \d+\s*\*/)",
    re.DOTALL | re.MULTILINE,
)
_COST = re.compile(r"^length: (\d+) Cost: (\d+(?:\.\d+)?)", re.MULTILINE)


# -- counting the C ---------------------------------------------------------------------------------------


@dataclass
class CodeCount:
    """What one C program spends: DREG ICWs inside kernels (and by word), host pattern loads, kernels, and
    what is neither (analogue calls, other host calls, words outside a kernel, unknown calls)."""

    icws: int = 0
    words: dict[str, int] = field(default_factory=dict)
    load_pattern: int = 0
    select_pattern: int = 0
    kernels: int = 0
    empty_kernels: int = 0
    analogue: dict[str, int] = field(default_factory=dict)
    host: dict[str, int] = field(default_factory=dict)
    outside_kernel: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def pattern_loads(self) -> int:
        return self.load_pattern + self.select_pattern


def calls(code: str) -> list[tuple[str, list[str]]]:
    """The calls of C code, comments removed (a comment ends at its first `*/`, as in C), as (name, args)."""
    text = _COMMENT.sub(" ", code)
    return [
        (name, [a.strip() for a in args.split(",")] if args.strip() else [])
        for name, args in _CALL.findall(text)
    ]


def count_code(code: str) -> CodeCount:
    """Count Cain-Java's superpixel C: each DREG word one ICW (two for the SDK's in-place and REFRESH
    macros), each pattern load or select, each kernel."""
    count = CodeCount()
    words: Counter[str] = Counter()
    analogue: Counter[str] = Counter()
    host: Counter[str] = Counter()
    inside, body = False, 0
    for name, args in calls(code):
        text = f"{name}({', '.join(args)});"
        if name == "scamp5_kernel_begin":
            inside, body = True, 0
            count.kernels += 1
        elif name == "scamp5_kernel_end":
            count.empty_kernels += inside and body == 0
            inside = False
        elif name in LOADS:
            count.load_pattern += name == LOADS[0]
            count.select_pattern += name == LOADS[1]
        elif name.startswith("scamp5_"):
            host[name] += 1
        elif name in ONE_WORD or (name, len(args)) in TWO_WORDS:
            icws = 2 if (name, len(args)) in TWO_WORDS else 1
            words[name] += icws
            count.icws += icws
            body += 1
            if not inside:
                count.outside_kernel.append(text)
        elif name.islower():
            analogue[name] += 1
            body += 1
        else:
            count.unknown.append(text)
    count.words, count.analogue, count.host = dict(words), dict(analogue), dict(host)
    return count


# -- what the C shows of the suspected defects -------------------------------------------------------------

_MOVXB = re.compile(r"\{goalPair=\{T:SP Movxb \((-?\d+), (-?\d+)\) \((\d+) -> (\d+)\)")
_BLOCK = re.compile(r"/\*/\*SP (\w+)\(")
AXES = {"westReg": ("x", 1), "eastReg": ("x", -1), "northReg": ("y", 1), "southReg": ("y", -1)}
"""Cain-Java's `Movxb`: a positive x PE offset reads westReg, a negative eastReg; a positive y offset reads
northReg, a negative southReg (Scamp5SuperPixelTransformation.Movxb.code)."""
DIRECTIONS = {"north", "east", "south", "west"}


def bank_starts(config: dict) -> list[tuple[int, int]]:
    """Each bank's bit-1 PE as Cain-Java's (x, y): x the JSON column, y = height - 1 - JSON row."""
    pair = config["pairGen"]
    starts = []
    for bank in pair["bitOrder"]:
        row, col = next((r, c) for r, line in enumerate(bank) for c, v in enumerate(line) if v == 1)
        starts.append((col, pair["height"] - 1 - row))
    return starts


def movxb_moves(code: str, config: dict) -> list[list[tuple[str, str, int, int]]]:
    """The moves each `movb` block of the C makes: (flag, axis, sign, DNEWS0 steps) per flag register it
    sets, the flag named by its config key less `Reg` (`west`: read the west neighbour)."""
    flags = {config["pairGen"][key]: (key[:-3], *axis) for key, axis in AXES.items()}
    parts = _BLOCK.split(code)
    moves = []
    for kind, text in zip(parts[1::2], parts[2::2], strict=True):
        if kind != "movb":
            continue
        axes: list[tuple[str, str, int, int]] = []
        for name, args in calls(text):
            if name == "SET" and args and args[0] in flags:
                axes.append((*flags[args[0]], 0))
            elif name == "DNEWS0" and axes:
                axes[-1] = (*axes[-1][:3], axes[-1][3] + 1)
        moves.append(axes)
    return moves


def movxb_report(stdout: str, code: str, config: dict) -> list[dict[str, Any]]:
    """Each `Movxb` of the best plan (in code order) beside the moves its C makes: the plan's tile offset
    and banks, the PE offsets Cain-Java computes, the y bank offset, and the flags the C sets."""
    best = stdout[stdout.find("Best Plan:") : stdout.find("\nlength: ")]
    steps = [tuple(map(int, m)) for m in _MOVXB.findall(best)][::-1]
    starts = bank_starts(config)
    width, height = config["pairGen"]["width"], config["pairGen"]["height"]
    report = []
    for (dx, dy, lower, upper), axes in zip(steps, movxb_moves(code, config), strict=False):
        bank = (starts[upper][0] - starts[lower][0], starts[upper][1] - starts[lower][1])
        pe = (dx * width + bank[0], dy * height + bank[1])
        emitted = {"x": 0, "y": 0}
        for _, axis, sign, n in axes:
            emitted[axis] += sign * n
        report.append(
            {
                "tiles": [dx, dy],
                "banks": [lower, upper],
                "bank_offset": list(bank),
                "pe_offset": list(pe),
                "reads": [f"{flag} x{n}" for flag, _, _, n in axes],
                "matches_rule": (emitted["x"], emitted["y"]) == pe,
            }
        )
    return report


def defects(stdout: str, code: str, config: dict) -> dict[str, Any]:
    """What the C shows of the suspected defects: `*/` left over once comments end at their first `*/`
    (not C), words whose destination is also a source, each `Movxb`, `Negate` blocks without the
    `MOV(masked, out)` preamble, and names the C uses for both a DREG and an analogue register."""
    text = _COMMENT.sub(" ", code)
    in_place = [
        f"{name}({', '.join(args)});"
        for name, args in calls(code)
        if name in ONE_WORD - {"SET", "CLR", "WHERE"} and args[:1] and args[0] in args[1:]
    ]
    parts = _BLOCK.split(code)
    negates = [t for kind, t in zip(parts[1::2], parts[2::2], strict=True) if kind == "Neg"]
    stale = sum(1 for t in negates if not re.search(r"MOV\(R\[masked\], (?!R\[)\w+\)", t))
    dregs = {a for n, args in calls(code) if n in ONE_WORD or n in {"NOT", "OR", "NOR"} for a in args}
    aregs = {
        a
        for n, args in calls(code)
        if n.islower() and n not in LOADS and not n.startswith("scamp5_kernel")
        for a in args
        if a.isidentifier() and a not in DIRECTIONS
    }
    moves = movxb_report(stdout, code, config)
    return {
        "stray_comment_ends": text.count("*/"),
        "in_place_words": in_place,
        "movxb": moves,
        "movxb_y_bank_offset": sum(1 for m in moves if m["bank_offset"][1] != 0),
        "movxb_off_rule": sum(1 for m in moves if not m["matches_rule"]),
        "negates": len(negates),
        "negates_without_preamble": stale,
        "dreg_and_areg_names": sorted(dregs & aregs),
        "data_dregs": sorted(d for d in dregs if d not in NATURAL_BINDING),
    }


# -- one run -----------------------------------------------------------------------------------------------


@dataclass
class JavaSuperpixelRun:
    """Cain-Java on one superpixel config: its cost model, the count of its C, the defects the C shows."""

    example: str
    status: str
    """"ok", "no plan" or "failed"."""
    error: str | None = None
    search_seconds: float | None = None
    workers: int | None = None
    seconds: float | None = None
    """The JVM's wall time."""
    peak_memory: int | None = None
    length: int | None = None
    cost: float | None = None
    """Its cost model: the `Cost:` it reports for its best plan."""
    java_ops: int | None = None
    java_selects: int | None = None
    """Its own trailer `/* ops: N, selects: N ... */` (ops counts every call, selects among them)."""
    count: CodeCount | None = None
    defects: dict[str, Any] = field(default_factory=dict)
    code: str | None = None

    @property
    def icws(self) -> int | None:
        return self.count.icws if self.count else None

    @property
    def pattern_loads(self) -> int | None:
        return self.count.pattern_loads if self.count else None

    @property
    def kernels(self) -> int | None:
        return self.count.kernels if self.count else None

    def as_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "icws": self.icws,
            "pattern_loads": self.pattern_loads,
            "kernels": self.kernels,
        }


def example_config(path: Path, *, seconds: float | None, workers: int, kernel: dict | None = None) -> dict:
    """The config at `path` with the search time (`None`: its own `searchTime`) and workers set, and its
    `filter` replaced by `kernel` if given."""
    config = json.loads(Path(path).read_text())
    if kernel is not None:
        config["filter"] = kernel
    run = config["runConfig"]
    if seconds is not None:
        run["searchTime"] = round(seconds * 1000)
    run["workers"] = workers
    return config


def java_superpixel(
    config_path: str | Path,
    *,
    seconds: float | None = None,
    workers: int = 2,
    tool: CainJava,
    kernel: dict | None = None,
) -> JavaSuperpixelRun:
    """Cain-Java on the superpixel config at `config_path` for `seconds` (None: the config's own
    `searchTime`) with `workers` threads, its `filter` replaced by `kernel` if given; its cost model, and
    its C counted (`count_code`, `defects`)."""
    path = Path(config_path)
    config = example_config(path, seconds=seconds, workers=workers, kernel=kernel)
    search = config["runConfig"]["searchTime"] / 1000
    timeout = 2 * search + 120
    done = run_java(tool, config, path.stem, timeout=timeout)
    run = JavaSuperpixelRun(
        path.stem,
        "failed",
        search_seconds=search,
        workers=workers,
        seconds=done.seconds,
        peak_memory=done.peak_memory,
    )
    if done.returncode is None:
        run.error = f"Cain-Java did not end within {timeout:g} s"
        return run
    if "No Solutions Found!" in done.stdout:
        run.status = "no plan"
        return run
    found, cost = _CODE.search(done.stdout), _COST.search(done.stdout)
    if done.returncode != 0 or found is None or cost is None:
        run.error = f"Cain-Java exited with {done.returncode}: {java_error(done)}"
        return run
    run.status, run.code = "ok", found.group(1)
    run.length, run.cost = int(cost.group(1)), float(cost.group(2))
    run.java_ops, run.java_selects = int(found.group(2)), int(found.group(3))
    run.count = count_code(run.code)
    run.defects = defects(done.stdout, run.code, config)
    return run


# -- the table ---------------------------------------------------------------------------------------------

HEADERS = (
    "example",
    "Java cost model",
    "ICWs",
    "pattern loads",
    "kernels",
    "Java ops/selects",
    "time (s)",
    "status",
)


def table(runs: list[JavaSuperpixelRun]) -> str:
    """The Markdown table of the runs: cost model, ICWs, pattern loads, kernels, its own trailer, time."""
    rows = [
        (
            r.example,
            r.cost,
            r.icws,
            r.pattern_loads,
            r.kernels,
            f"{r.java_ops}/{r.java_selects}" if r.java_ops is not None else None,
            r.seconds,
            r.status if r.error is None else f"{r.status}: {r.error}",
        )
        for r in runs
    ]
    return markdown_table(HEADERS, rows)


def defects_table(runs: list[JavaSuperpixelRun]) -> str:
    """Per example, what the C shows of the suspected defects."""
    rows = []
    for r in runs:
        d = r.defects
        if not d:
            continue
        moves = d["movxb"]
        rows.append(
            (
                r.example,
                d["stray_comment_ends"],
                len(d["in_place_words"]) or 0,
                f"{len(moves)} ({sum(1 for m in moves if m['pe_offset'][1])} in y)",
                d["movxb_y_bank_offset"],
                d["movxb_off_rule"],
                f"{d['negates']} ({d['negates_without_preamble']} without preamble)",
                ", ".join(d["dreg_and_areg_names"]) or "-",
                len(d["data_dregs"]),
            )
        )
    return markdown_table(
        (
            "example",
            "stray `*/`",
            "in-place words",
            "Movxb steps",
            "with y bank offset",
            "off Java's rule",
            "Negate",
            "DREG = AREG names",
            "data+scratch DREGs",
        ),
        rows,
    )


def _where(runs: list[JavaSuperpixelRun], test) -> str:
    """The examples whose defects pass `test`, with what it returns, or "none"."""
    found = [f"{r.example} ({test(r.defects)})" for r in runs if r.defects and test(r.defects)]
    return ", ".join(found) or "none"


CHECKS = (
    (
        (
            "Comments that are not C (a `*/` left over once each comment ends at its first `*/`, from the nested "
            "`/*/*SP ...*/ */` and `/*\\n/* Bit i */*/`)"
        ),
        lambda d: d["stray_comment_ends"],
    ),
    (
        (
            "A word whose destination is also a source (`DNEWS0(s0, s0)` of a `Movxb` with an odd x and a nonzero "
            "y PE offset)"
        ),
        lambda d: "; ".join(d["in_place_words"]),
    ),
    (
        (
            "`Movxb` with a y bank offset (its C moves data by -(dy*height + bank offset) PEs in y but +(dx*width + "
            "bank offset) in x; with row 0 north and column 0 east, reference section 3, the bank part goes away "
            "from the destination bank in y, toward it in x)"
        ),
        lambda d: d["movxb_y_bank_offset"],
    ),
    ("`Movxb` whose C departs from Cain-Java's own rule", lambda d: d["movxb_off_rule"]),
    ("`Negate` (copies R12 outside the bit PEs, no preamble)", lambda d: d["negates"]),
    ("Names the C gives both a DREG and an analogue register", lambda d: ", ".join(d["dreg_and_areg_names"])),
)
"""The suspected defects of docs/reference section 6 (and a name clash), each with what it counts."""


def observations(runs: list[JavaSuperpixelRun]) -> str:
    """Which examples' C shows each of `CHECKS`, and how much."""
    counted = [r for r in runs if r.defects]
    return "".join(f"- {label}: {_where(counted, test)}.\n" for label, test in CHECKS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.superpixel_java", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--java",
        metavar="DIR",
        default=os.environ.get(ENVIRONMENT),
        help=f"Cain-Java checkout, 3dc1981 or later (default ${ENVIRONMENT})",
    )
    parser.add_argument("--examples", nargs="*", default=list(EXAMPLES), help="example names (default: all)")
    parser.add_argument(
        "--seconds", type=float, default=None, help="search time (default: each config's own)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--java-heap", default="4g")
    parser.add_argument(
        "--filter-of",
        metavar="EXAMPLE",
        default=None,
        help="compile EXAMPLE's filter on every example's layout instead of its own",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "superpixel-java")
    args = parser.parse_args(argv)
    tool = find_cain_java(Path(args.java) if args.java else None, args.java_heap)
    if isinstance(tool, str):
        print(f"Cain-Java skipped, nothing run: {tool}", file=sys.stderr)
        return 0
    folder = Path(args.java) / "examples"
    wanted = [*args.examples, *([args.filter_of] if args.filter_of else [])]
    missing = [e for e in wanted if not (folder / f"{e}.json").is_file()]
    if missing:
        print(
            f"Cain-Java skipped, nothing run: no {', '.join(missing)} in {folder} (the superpixel examples "
            "are in Cain-Java from commit 3dc1981 on)",
            file=sys.stderr,
        )
        return 0
    kernel = None
    if args.filter_of:
        kernel = json.loads((folder / f"{args.filter_of}.json").read_text())["filter"]
    machine = {**machine_info(), "cain_java": tool.describe()}
    runs = []
    for example in args.examples:
        started = time.strftime("%H:%M:%S")
        runs.append(
            java_superpixel(
                folder / f"{example}.json",
                seconds=args.seconds,
                workers=args.workers,
                tool=tool,
                kernel=kernel,
            )
        )
        print(
            f"{started} {example}: {runs[-1].status}, cost {runs[-1].cost}, {runs[-1].icws} ICWs",
            file=sys.stderr,
        )
    write(args, machine, runs, argv)
    return 0


def write(
    args: argparse.Namespace, machine: dict[str, Any], runs: list[JavaSuperpixelRun], argv: list[str] | None
) -> None:
    """summary.md and results.json.gz in `args.out`; the summary printed."""
    args.out.mkdir(parents=True, exist_ok=True)
    command = command_line("superpixel_java", argv)
    settings = {
        "seconds": args.seconds,
        "workers": args.workers,
        "java_heap": args.java_heap,
        "examples": args.examples,
        "filter_of": args.filter_of,
    }
    write_results(
        args.out,
        {
            "experiment": "superpixel_java",
            "command": command,
            "settings": settings,
            "machine": machine,
            "runs": [r.as_json() for r in runs],
        },
    )
    budget = "each config's own searchTime" if args.seconds is None else f"{args.seconds:g} s"
    if args.filter_of:
        budget += f", every layout given {args.filter_of}'s filter"
    summary = (
        f"# Cain-Java's superpixel examples, counted\n\nCommand: `{command}`\n\nSettings: {budget}, "
        f"{args.workers} worker(s), heap {args.java_heap}; Cain-Java {machine['cain_java']['commit'][:7]} "
        f"({machine['cain_java']['jvm']}).\n\nMachine: {machine_line(machine)}\n\n"
        + table(runs)
        + "\nWhat the C shows of the suspected defects (docs: reference section 6):\n\n"
        + defects_table(runs)
        + "\n"
        + observations(runs)
    )
    (args.out / "summary.md").write_text(summary)
    print(summary)


if __name__ == "__main__":
    sys.exit(main())
