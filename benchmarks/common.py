"""What every benchmark shares: its command line, the machine record, the paper's random filters, one
verified search run, and the JSON / Markdown / PNG writers.

Every experiment records the machine and the exact settings next to its raw results, so a result file
says how it was produced. Every program counted is verified again here, independently of the search.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gzip
import json
import multiprocessing
import os
import platform
import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import metadata
from pathlib import Path
from typing import Any

from cain.backend.bus_synth import counts, synthesize
from cain.backend.emit_c import length_bound
from cain.backend.verify import verify_bus, verify_for_filter
from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal
from cain.model.isa import DEFAULT_REGISTERS
from cain.search import SearchConfig, search

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = Path(__file__).resolve().parent / "results"

PAPER_DEPTH = 3
"""Random kernels are `1/8 [u1..u9]` (paper eq. 10): exact at approximation depth 3."""
PAPER_WEIGHT_MAX = 8
"""Each `u` is uniform in `0..8`."""


# -- settings -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """How long each search may run: a node count (deterministic) or wall-clock seconds."""

    nodes: int | None = None
    seconds: float | None = None

    def __str__(self) -> str:
        return f"{self.nodes} nodes" if self.nodes is not None else f"{self.seconds:g} s"

    @property
    def option(self) -> str:
        """The search pass option that sets this budget (`budget=N` or `time=S`)."""
        return f"budget={self.nodes}" if self.nodes is not None else f"time={self.seconds:g}"

    def config(self) -> dict[str, Any]:
        """The `SearchConfig` fields this budget sets."""
        return {"node_budget": self.nodes, "time_budget": self.seconds}


def parse_budget(text: str) -> Budget:
    """`20000` is a node budget, `60s` (or `1.5s`) a time budget."""
    text = text.strip()
    if re.fullmatch(r"[0-9]+", text) and int(text) > 0:
        return Budget(nodes=int(text))
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)\s*s", text)
    if match and float(match.group(1)) > 0:
        return Budget(seconds=float(match.group(1)))
    raise argparse.ArgumentTypeError(
        f"invalid budget '{text}': give a node count such as 20000, or seconds such as 60s"
    )


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def make_parser(name: str, doc: str, *, samples: int, budget: str, workers: int) -> argparse.ArgumentParser:
    """The options every experiment takes; the defaults are the quick settings of `name`, the description
    the first paragraph of its module docstring `doc`."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{name}", description=doc.split("\n\n")[0])
    parser.add_argument("--samples", type=positive_int, default=samples,
                        help=f"random filters per data point (default {samples})")
    parser.add_argument("--budget", type=parse_budget, default=parse_budget(budget),
                        help=f"per search: a node count (20000) or seconds (60s) (default {budget})")
    parser.add_argument("--workers", type=positive_int, default=workers,
                        help=f"search processes per search (default {workers})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random filters and the search (default 0)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / name,
                        help=f"output directory (default benchmarks/results/{name}/)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw plot.png")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options as plain JSON values."""
    out: dict[str, Any] = {}
    for key, value in vars(args).items():
        if isinstance(value, Budget):
            out[key] = {"nodes": value.nodes, "seconds": value.seconds, "text": str(value)}
        elif isinstance(value, Path):
            out[key] = str(value)
        else:
            out[key] = value
    return out


def log(args: argparse.Namespace, message: str) -> None:
    """A progress line on stderr (never stdout, which carries the table)."""
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr, flush=True)


# -- the machine ----------------------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> dict[str, Any]:
    """The commit of the code base, and whether the compiler's sources differ from it."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "cain", "dialects",
                                "passes"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(dirty)}


def machine_info() -> dict[str, Any]:
    """What the results were measured on: CPU, cores, memory, software versions, commit and date."""
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    meminfo = re.search(r"^MemTotal:\s*([0-9]+) kB", _read("/proc/meminfo"), re.MULTILINE)
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": model.group(1).strip() if model else (platform.processor() or platform.machine()),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_bytes": int(meminfo.group(1)) * 1024 if meminfo else None,
        "os": platform.platform(),
        "python": platform.python_version(),
        "xdsl": _version("xdsl"),
        "numpy": _version("numpy"),
        "cain": {"version": _version("cain"), **git_commit()},
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def machine_line(machine: dict[str, Any]) -> str:
    memory = machine.get("memory_bytes")
    mem = f"{memory / 2**30:.1f} GiB" if memory else "unknown memory"
    commit = machine["cain"].get("commit") or "unknown commit"
    dirty = " (modified)" if machine["cain"].get("dirty") else ""
    load = machine.get("load_average")
    busy = f", load {load[0]:.1f} at start" if load else ""
    return (f"{machine['cpu']}, {machine['cores']} cores, {mem}{busy}; Python {machine['python']}, "
            f"xDSL {machine['xdsl']}; cain {commit[:10]}{dirty}; {machine['date']}")


# -- random filters (paper eq. 10) -------------------------------------------------------------------------


def register_names(count: int) -> tuple[str, ...]:
    """A register file of `count` registers: SCAMP-5's A..F, then further letters for a larger machine."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWYZ"  # no X: XN..XW name the neighbours' NEWS registers
    if count > len(letters):
        return tuple(letters) + tuple(f"R{i}" for i in range(len(letters), count))
    return tuple(letters[:count])


def random_weights(rng: random.Random) -> tuple[tuple[int, ...], ...]:
    """One random 3x3 kernel as its integer numerators `u` (the weights are `u / 8`)."""
    return tuple(tuple(rng.randint(0, PAPER_WEIGHT_MAX) for _ in range(3)) for _ in range(3))


def filter_from_numerators(name: str, numerators: Sequence[Sequence[Sequence[int]]],
                           registers: Sequence[str] = DEFAULT_REGISTERS) -> Filter:
    """A single-input filter of 3x3 kernels `u / 8`: input in the first register, kernel `i`'s output in
    register `i` of the file. Depth 3 makes each goal exact (error 0)."""
    registers = tuple(registers)
    if len(numerators) > len(registers):
        raise ValueError(f"{len(numerators)} kernels need at least as many registers, got {len(registers)}")
    kernels = []
    for i, matrix in enumerate(numerators):
        weights = tuple(tuple(Fraction(u, 2**PAPER_DEPTH) for u in row) for row in matrix)
        kernels.append(Kernel(name=f"k{i}", register=registers[i], weights=(weights,),
                              goal=Goal.from_matrices([matrix]), error=Fraction(0)))
    return Filter(name=name, inputs=(("input", registers[0]),), kernels=tuple(kernels), depth=PAPER_DEPTH,
                  registers=registers)


def random_filter(rng: random.Random, kernels: int, registers: Sequence[str] = DEFAULT_REGISTERS,
                  name: str = "random") -> Filter:
    """A filter of `kernels` random 3x3 kernels drawn as in the paper's eq. 10."""
    return filter_from_numerators(name, [random_weights(rng) for _ in range(kernels)], registers)


def numerators_of(filter: Filter) -> list[list[list[int]]]:
    """The `u` matrices of a random filter (for the JSON record), read back from its goals."""
    return [k.goal.matrices(channels=1, radius=1)[0] for k in filter.kernels]


# -- one verified search ----------------------------------------------------------------------------------


@dataclass
class Run:
    """One search and the independent verification of its best plan.

    `status` is `verified` (a data point), `no plan` (the budget ended before any plan), `impossible` (no
    program of the goal model fits the registers, proven before searching: `cain.search.exact.full`), or
    `failed` (the search raised, or its program did not verify: reported, never counted)."""

    label: str
    status: str
    macros: int | None = None
    icws: int | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    nodes: int | None = None
    seconds: float | None = None
    peak_memory: int | None = None
    stopped: str | None = None
    error: str | None = None
    program: list[str] = field(default_factory=list)
    bus_icws: int | None = None
    """ICWs of the program after bus-level synthesis (cain.backend.bus_synth), verified again."""
    bus2: int | None = None
    bus3: int | None = None
    """bus2 / bus3 micro-ops of that program (the noisiest)."""
    macro_bus2: int | None = None
    """bus2 micro-ops of the macros' own expansion."""
    bus_program: list[str] = field(default_factory=list)
    allocated: Any = field(default=None, repr=False)
    """The verified program itself (a `Program`; not written to JSON)."""
    bus_ops: Any = field(default=None, repr=False)
    """Its verified micro-ops after bus-level synthesis (not written to JSON)."""
    lower_bound: int | None = None
    """No program of the instruction set is shorter (`SearchResult.lower_bound`)."""
    model_bound: int | None = None
    """No program of the goal model is shorter (the exact search's proof, where it ran)."""
    optimal: bool = False
    """The program is proven shortest in the goal model."""

    @property
    def ok(self) -> bool:
        return self.status == "verified"

    @property
    def first_plan_seconds(self) -> float | None:
        return self.events[0]["seconds"] if self.ok and self.events else None

    @property
    def best_plan_seconds(self) -> float | None:
        """When the best plan (the one returned) was found: the last improvement."""
        return self.events[-1]["seconds"] if self.ok and self.events else None

    @property
    def nodes_per_second(self) -> float | None:
        return self.nodes / self.seconds if self.nodes is not None and self.seconds else None

    def best_after(self, nodes: int) -> int | None:
        """The length of the best plan found within the first `nodes` nodes, or None."""
        if not self.ok:
            return None
        best = None
        for event in self.events:
            if event["nodes"] <= nodes:
                best = event["macros"] if best is None else min(best, event["macros"])
        return best

    @property
    def bound_text(self) -> str:
        """` (optimal)`, ` (optimal in the goal model)` or ` (lower bound N)`, as the C header says it."""
        counts = {"macros": self.macros if self.ok else None, "lower_bound": self.lower_bound,
                  "model_bound": self.model_bound, "optimal": int(self.optimal)}
        return length_bound({k: v for k, v in counts.items() if v is not None})

    @property
    def gap(self) -> int | None:
        """Macros above the best lower bound (0 when optimal)."""
        return self.macros - self.model_bound if self.ok and self.model_bound is not None else None

    def as_json(self) -> dict[str, Any]:
        skip = ("allocated", "bus_ops")
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in skip}

    def describe(self) -> str:
        """One progress line: the outcome, the search's effort, and any failure."""
        effort = f"{fmt(self.nodes)} nodes, {fmt(self.seconds)} s"
        if self.ok:
            bus = f", {self.bus_icws} ICWs at bus level ({self.bus2} bus2)" if self.bus_icws is not None else ""
            return f"{self.label}: {self.macros} macros{self.bound_text}, {self.icws} ICWs{bus} ({effort})"
        bound = self.bound_text
        if self.status in ("no plan", "impossible"):
            return f"{self.label}: {self.status}{bound} ({effort})"
        return f"{self.label}: FAILED: {self.error}"


def program_lines(program) -> list[str]:
    """The program as SDK-like lines (registers once allocated, `v<n>` values before)."""
    regs = program.registers or {}

    def name(v: int) -> str:
        return regs.get(v, f"v{v}")

    lines = []
    for instr in program.instrs:
        args = [name(r) for r in instr.results] + list(instr.scratch) + [name(o) for o in instr.operands]
        lines.append(f"{instr.macro}({', '.join(args + list(instr.directions))})")
    return lines


def _event(event) -> dict[str, Any]:
    return {"nodes": int(event.nodes), "seconds": float(event.seconds), "macros": int(event.macros),
            "icws": int(event.icws), "bus_icws": int(event.bus_icws)}


def run_search(filter: Filter, *, budget: Budget, seed: int = 0, workers: int = 1, label: str = "",
               instruction_set: str | None = None, heuristic: str = "scamp5", cost: str = "macros",
               traversal: str = "cgds", exact: bool = False) -> Run:
    """Search `filter` under `budget`, then verify the returned program against the filter.

    Anything that goes wrong is recorded in the `Run` as a failure rather than raised, so one bad
    sample cannot stop an experiment or slip into its data."""
    label = label or filter.name
    iset = instruction_set or filter.instruction_set
    cfg = SearchConfig(instruction_set=iset, registers=None, seed=seed, workers=workers, traversal=traversal,
                       cost=cost, heuristic=heuristic, progress=False, exact=exact, **budget.config())
    searched = dataclasses.replace(filter, instruction_set=iset)
    started = time.perf_counter()
    try:
        result = search(searched, cfg)
    except Exception as exc:  # noqa: BLE001 - any crash of the search is a reported failure
        return Run(label, "failed", seconds=time.perf_counter() - started,
                   error=f"search raised {type(exc).__name__}: {exc}")
    status = "impossible" if result.stopped == "impossible" else "no plan"
    run = Run(label, status, events=[_event(e) for e in result.events], nodes=int(result.nodes),
              seconds=float(result.seconds), peak_memory=result.peak_memory, stopped=result.stopped,
              lower_bound=result.lower_bound, model_bound=result.model_bound, optimal=result.optimal)
    if result.program is not None:
        check_program(run, result.program, searched, cost=cost)
    return run


def check_program(run: Run, program, filter: Filter, *, cost: str = "macros") -> Run:
    """Record `program` as the run's plan and verify it against `filter`: `verified`, or `failed` with
    the verifier's report."""
    run.macros, run.icws, run.program = program.macros, program.icws, program_lines(program)
    try:
        verify_for_filter(program, filter)
    except Exception as exc:  # noqa: BLE001 - a program that does not verify is never a data point
        run.status, run.error = "failed", f"verification failed: {type(exc).__name__}: {exc}"
        return run
    run.status = "verified"
    try:
        bus = synthesize(program, filter)
        verify_bus(bus.ops, filter)
    except Exception as exc:  # noqa: BLE001 - a bus program that does not verify is never a data point
        run.status, run.error = "failed", f"bus-level synthesis failed: {type(exc).__name__}: {exc}"
        return run
    found = counts(bus.ops)
    run.bus_icws, run.bus2, run.bus3 = found["icws"], found["bus2"], found["bus3"]
    run.macro_bus2 = counts(bus.plain)["bus2"]
    run.bus_program = [str(op) for op in bus.ops]
    run.allocated, run.bus_ops = program, bus.ops
    if cost == "macros" and run.events and run.events[-1]["macros"] != program.macros:
        run.error = f"note: the last improvement event says {run.events[-1]['macros']} macros"
    return run


def failures_markdown(runs: Sequence[Run]) -> str:
    """A section listing every failed run with its reason (empty when there are none)."""
    failed = [r for r in runs if r.status == "failed"]
    if not failed:
        return "No failures: every plan counted was verified.\n"
    lines = [f"**{len(failed)} failed run(s)** (not counted):", ""]
    lines += [f"- {r.label}: " + " / ".join(line.strip() for line in (r.error or "").splitlines() if line.strip())
              for r in failed]
    return "\n".join(lines) + "\n"


# -- writers ------------------------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 1) -> str:
    """A table cell: `-` for missing values, fixed digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table, columns padded so it also reads well on a terminal."""
    cells = [[str(h) for h in headers]] + [[fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    return "\n".join([line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *(line(r) for r in cells[1:])]) + "\n"


def command_line(name: str, argv: Sequence[str] | None) -> str:
    args = list(sys.argv[1:] if argv is None else argv)
    return " ".join(["python", "-m", f"benchmarks.{name}", *args])


def save_plot(path: Path, draw: Callable[[Any], Any]) -> bool:
    """Draw with matplotlib (`draw(pyplot) -> figure`) into `path`; without matplotlib, say so and skip."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'cain[plot]'): plot skipped", file=sys.stderr)
        return False
    figure = draw(plt)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return True


RESULTS_FILE = "results.json.gz"


def write_results(out: Path, record: dict[str, Any]) -> Path:
    """`record` as gzipped JSON in `out`: the raw results, a tenth of their size (no timestamp in the
    gzip header, so the same record gives the same bytes)."""
    path = out / RESULTS_FILE
    path.write_bytes(gzip.compress((json.dumps(record, indent=1, default=str) + "\n").encode(), mtime=0))
    return path


def read_results(out: Path) -> dict[str, Any]:
    """The raw results an experiment wrote in `out`."""
    return json.loads(gzip.decompress((out / RESULTS_FILE).read_bytes()))


def write_outputs(args: argparse.Namespace, name: str, title: str, *, argv: Sequence[str] | None,
                  machine: dict[str, Any], data: dict[str, Any], body: str,
                  draw: Callable[[Any], Any] | None) -> dict[str, Path]:
    """Write `results.json.gz`, `summary.md` and (if possible) `plot.png` into `args.out`; print the summary."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    command = command_line(name, argv)
    settings = settings_of(args)
    record = {"experiment": name, "command": command, "settings": settings, "machine": machine, **data}
    paths = {"json": write_results(out, record), "summary": out / "summary.md"}
    plotted = False
    if draw is not None and not args.no_plot:
        plotted = save_plot(out / "plot.png", draw)
        if plotted:
            paths["plot"] = out / "plot.png"
    summary = (f"# {title}\n\nCommand: `{command}`\n\nSettings: {args.samples} sample(s), budget {args.budget}"
               f" per search, {args.workers} worker(s), seed {args.seed}.\n\nMachine: {machine_line(machine)}\n\n"
               + body + ("\n![plot](plot.png)\n" if plotted else ""))
    paths["summary"].write_text(summary)
    print(summary)
    return paths


def median(values: Sequence[float]) -> float | None:
    """The median, or None for no values."""
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


FUZZ_OUTCOMES = ("passed", "no fit", "error", "crash", "wrong")
"""What a fuzzed kernel file of the digital or superpixel mode comes to (`fuzz_cases`)."""


def fuzz_cases(fuzz_case: Callable[[Any], tuple], cases: Sequence[Any], jobs: int, keep: Path,
               seed: int) -> tuple[Counter[str], list[list[Any]], list[str]]:
    """Run `fuzz_case` on every case (in `jobs` processes), each to (outcome, kernel file, *counts): the
    outcomes counted, the counts of every case that has them, and each case's outcome in order (so that two
    campaigns on one seed compare filter by filter). A file that neither passed nor did not fit is kept in
    `keep` (`fuzz{seed}_{i}.cain`), and the tally goes to stderr every 25 cases."""
    outcomes: Counter[str] = Counter()
    counts = []
    each = []
    with multiprocessing.Pool(jobs) if jobs > 1 else nullcontext() as pool:
        results = pool.imap(fuzz_case, cases) if pool is not None else map(fuzz_case, cases)
        for i, (outcome, text, *rest) in enumerate(results):
            outcomes[outcome] += 1
            each.append(outcome)
            if rest[0] is not None:
                counts.append(rest)
            if outcome not in ("passed", "no fit"):
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"fuzz{seed}_{i}.cain").write_text(text)
            if (i + 1) % 25 == 0:
                print(f"{i + 1}: {dict(outcomes)}", file=sys.stderr, flush=True)
    return outcomes, counts, each
