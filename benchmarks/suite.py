"""The generalisation suite: filters made by rule (classic image filters, CNN layers, multi-channel filters
and the paper's random filters), split by a seed into a tuning half and a validation half, each compiled
with today's search and, side by side, with the search of another git revision.

    python -m benchmarks.suite --budget 5s                       # both halves, 5 s per search, 2 workers
    python -m benchmarks.suite --budget 60s --baseline main      # the issue's settings, next to main
    python -m benchmarks.suite --half tuning --budget 3000 --workers 1 --baseline main   # deterministic
    python -m benchmarks.suite --budget 60s --java ~/cain-java     # next to Cain-Java, the reference
    python -m benchmarks.suite --compile --budget 10s --baseline main   # `cain k.cain` itself (bus level)
    python -m benchmarks.suite --compile --level macro --budget 10s     # `cain k.cain --level macro`

Every filter is written in the kernel language (the text a user would write) and read by the front end.
Each search runs in a fresh process (so its peak memory is its own); with `--baseline REV` the two versions
alternate filter by filter (current first on even filters, baseline first on odd ones), so machine noise
hits both alike. Every program counted, the baseline's too, is verified by today's verifier, against the
goals its own version rounded the weights to (checked within `max_error`). With `--java DIR` Cain-Java (a
checkout, built by benchmarks/java/build.sh) searches each filter too, at the same budget and workers, and
its C is read back, counted and verified the same way (`benchmarks.cain_java`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import cast

from benchmarks.cain_java import ENVIRONMENT, find_cain_java, run_cain_java
from benchmarks.common import (
    ROOT,
    Budget,
    Run,
    check_program,
    failures_markdown,
    fmt,
    log,
    machine_info,
    make_parser,
    markdown_table,
    read_results,
    write_outputs,
)
from cain.frontend.kernel import parse_filter, parse_options
from cain.frontend.options import DEFAULT_MAX_ERROR
from cain.model.approx import rounding_error
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.program import Instr, Program

SPLIT_SEED = 11
"""The seed of the tuning / validation split (fixed with the suite, before any tuning)."""
FILTER_SEED = 2024
"""The seed of the suite's random filters (CNN layers and the paper's eq. 10 filters)."""
HALVES = ("tuning", "validation")


@dataclass(frozen=True)
class SuiteFilter:
    """One filter of the suite: its family (the rule that made it) and its kernel-language source."""

    name: str
    family: str
    source: str

    def load(self) -> Filter:
        return parse_filter(self.source, f"{self.name}.cain")


# -- kernels by rule ---------------------------------------------------------------------------------------

Matrix = list[list[int]]


def binomial(n: int) -> list[int]:
    """Row `n - 1` of Pascal's triangle: the 1-D binomial kernel of `n` taps (sum `2^(n-1)`)."""
    row = [1]
    for _ in range(n - 1):
        row = [a + b for a, b in zip([0, *row], [*row, 0], strict=True)]
    return row


def outer(col: Sequence[int], row: Sequence[int]) -> Matrix:
    return [[a * b for b in row] for a in col]


def rotate45(m: Matrix) -> Matrix:
    """A 3x3 kernel's ring turned by one step (45 degrees) clockwise: how compass sets are made."""
    ring = [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0)]
    out = [row[:] for row in m]
    for i, (r, c) in enumerate(ring):
        pr, pc = ring[i - 1]
        out[r][c] = m[pr][pc]
    return out


def dilate(m: Matrix, rate: int) -> Matrix:
    """The a-trous kernel: `rate - 1` zeros between taps."""
    rows, cols = len(m), len(m[0])
    out = [[0] * ((cols - 1) * rate + 1) for _ in range((rows - 1) * rate + 1)]
    for r in range(rows):
        for c in range(cols):
            out[r * rate][c * rate] = m[r][c]
    return out


def pad(m: Matrix, size: int) -> Matrix:
    """`m` centred in a `size` x `size` matrix of zeros."""
    off = (size - len(m)) // 2
    out = [[0] * size for _ in range(size)]
    for r, row in enumerate(m):
        for c, v in enumerate(row):
            out[r + off][c + off] = v
    return out


def transpose(m: Matrix) -> Matrix:
    return [list(r) for r in zip(*m, strict=True)]


def norm(m: Matrix) -> int:
    """The power of two at least the sum of the positive weights: the scale that keeps outputs in range."""
    pos = sum(v for row in m for v in row if v > 0)
    return 1 << max(0, (pos - 1).bit_length())


def matrix_text(m: Sequence[Sequence[object]]) -> str:
    return "[" + "; ".join(" ".join(str(v) for v in row) for row in m) + "]"


def scaled(m: Matrix, denominator: int | None = None) -> str:
    """`1/N [..]`, with `N` the matrix's `norm` unless given."""
    d = norm(m) if denominator is None else denominator
    return (f"1/{d} " if d != 1 else "") + matrix_text(m)


def source(
    name: str, outputs: Sequence[tuple[str, str]], inputs: str = "A", options: Sequence[str] = ()
) -> str:
    """A filter in the kernel language: outputs are (register, weights) and are named k0, k1, ..."""
    lines = [f"filter {name}", f"input  {inputs}"]
    lines += [f"output k{i} -> {reg} = {w}" for i, (reg, w) in enumerate(outputs)]
    lines += [f"option {o}" for o in ("max_depth = 16", *options)]
    return "\n".join(lines) + "\n"


REGS = "ABCDEF"


def single(name: str, family: str, weights: str, options: Sequence[str] = ()) -> SuiteFilter:
    return SuiteFilter(name, family, source(name, [("A", weights)], options=options))


def several(name: str, family: str, kernels: Sequence[str], options: Sequence[str] = ()) -> SuiteFilter:
    """Kernel `i` ends in register `i` (the input arrives in A, which the first kernel overwrites)."""
    return SuiteFilter(name, family, source(name, list(zip(REGS, kernels, strict=False)), options=options))


SOBEL_X = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
SCHARR_X = [[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]]
PREWITT_X = [[-1, 0, 1], [-1, 0, 1], [-1, 0, 1]]
KIRSCH_N = [[5, 5, 5], [-3, 0, -3], [-3, -3, -3]]
ROBINSON_N = [[1, 2, 1], [0, 0, 0], [-1, -2, -1]]


def classic_filters() -> list[SuiteFilter]:
    """The classic image filters, each family made by one rule."""
    out: list[SuiteFilter] = []
    for n in (3, 5, 7, 9):
        out.append(single(f"gauss{n}x{n}", "gaussian", scaled(outer(binomial(n), binomial(n)))))
    for n in (2, 4):
        out.append(single(f"box{n}x{n}", "box", scaled([[1] * n for _ in range(n)])))
    for n in (3, 5, 7):
        out.append(single(f"binomial1x{n}", "separable", scaled([binomial(n)])))
    out.append(single("binomial5x1", "separable", scaled(transpose([binomial(5)]))))
    out.append(single("gauss3x5", "separable", scaled(outer(binomial(3), binomial(5)))))
    out.append(single("smooth_deriv5x3", "separable", scaled(outer(binomial(5), [-1, 0, 1]))))
    for name, gx in (("sobel", SOBEL_X), ("scharr", SCHARR_X), ("prewitt", PREWITT_X)):
        out.append(several(f"{name}_pair", "edge pair", [scaled(gx), scaled(transpose(gx))]))
    out.append(
        several("roberts_pair", "edge pair", [matrix_text([[1, 0], [0, -1]]), matrix_text([[0, 1], [-1, 0]])])
    )
    for name, first in (("kirsch", KIRSCH_N), ("robinson", ROBINSON_N)):
        ring = [first]
        for _ in range(3):
            ring.append(rotate45(ring[-1]))
        out.append(several(f"{name}2", "compass", [scaled(m) for m in ring[:4:2]]))
        out.append(several(f"{name}4", "compass", [scaled(m) for m in ring]))
    out.append(single("laplacian4", "laplacian", scaled([[0, 1, 0], [1, -4, 1], [0, 1, 0]])))
    out.append(single("laplacian8", "laplacian", scaled([[1, 1, 1], [1, -8, 1], [1, 1, 1]])))
    out.append(single("laplacian12", "laplacian", scaled([[1, 2, 1], [2, -12, 2], [1, 2, 1]])))
    log5 = [[0, 0, 1, 0, 0], [0, 1, 2, 1, 0], [1, 2, -16, 2, 1], [0, 1, 2, 1, 0], [0, 0, 1, 0, 0]]
    out.append(single("log5x5", "log/dog", scaled(log5)))
    g5, g3 = outer(binomial(5), binomial(5)), pad(outer(binomial(3), binomial(3)), 5)
    out.append(
        single(
            "dog5x3",
            "log/dog",
            scaled(
                [[a - 16 * b for a, b in zip(r5, r3, strict=True)] for r5, r3 in zip(g5, g3, strict=True)],
                256,
            ),
        )
    )
    out.append(single("dog3x1", "log/dog", scaled([[1, 2, 1], [2, -12, 2], [1, 2, 1]], 16)))
    out.append(single("sharpen5", "sharpen", matrix_text([[0, -1, 0], [-1, 5, -1], [0, -1, 0]])))
    out.append(single("sharpen9", "sharpen", matrix_text([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]])))
    unsharp = [[-v for v in row] for row in g5]
    unsharp[2][2] += 512
    out.append(single("unsharp5x5", "sharpen", scaled(unsharp, 256)))
    out.append(single("emboss", "sharpen", matrix_text([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])))
    out.append(single("atrous_row", "dilated", scaled(dilate([binomial(3)], 2))))
    out.append(single("atrous_gauss3x3", "dilated", scaled(dilate(outer(binomial(3), binomial(3)), 2))))
    out.append(single("atrous_laplacian", "dilated", scaled(dilate([[0, 1, 0], [1, -4, 1], [0, 1, 0]], 2))))
    return out


def gaussian_weights(size: int, sigma: float, one_row: bool = False) -> list[list[str]]:
    """A sampled, normalised Gaussian (decimal weights, not powers of two); `one_row`: the 1-D one."""
    c = size // 2
    w = [
        [math.exp(-((r - c) ** 2 + (k - c) ** 2) / (2 * sigma**2)) for k in range(size)]
        for r in ([c] if one_row else range(size))
    ]
    s = sum(map(sum, w))
    return [[f"{v / s:.4f}" for v in row] for row in w]


def approximate_filters() -> list[SuiteFilter]:
    """Kernels whose weights are not multiples of a power of two: they need `max_error`."""
    third = [["1/3"] * 3]
    return [
        single("box3x3_ninth", "approximate", "1/9 " + matrix_text([[1] * 3] * 3), ["max_error = 0.1"]),
        single("box5x5_mean", "approximate", "1/25 " + matrix_text([[1] * 5] * 5), ["max_error = 0.2"]),
        single("gauss5x5_sigma1", "approximate", matrix_text(gaussian_weights(5, 1.0)), ["max_error = 0.05"]),
        single("mean1x3", "approximate", matrix_text(third), ["max_error = 0.02"]),
        several(
            "prewitt_sixth",
            "approximate",
            ["1/6 " + matrix_text(PREWITT_X), "1/6 " + matrix_text(transpose(PREWITT_X))],
            ["max_error = 0.1"],
        ),
    ]


def cnn_filters(rng: random.Random) -> list[SuiteFilter]:
    """CNN layers of 2 to 6 3x3 kernels in 6 registers: ternary weights (halved), and small integers in
    -4..4 (quartered, as AnalogNet's)."""
    out = []
    for n in range(2, 7):
        for kind, values, d in (("ternary", (-1, 0, 1), 2), ("int", tuple(range(-4, 5)), 4)):
            kernels = []
            while len(kernels) < n:
                m = [[rng.choice(values) for _ in range(3)] for _ in range(3)]
                if any(v for row in m for v in row):
                    kernels.append(scaled(m, d))
            out.append(several(f"cnn_{kind}{n}", "cnn layer", kernels))
    return out


def multichannel_filters() -> list[SuiteFilter]:
    """Filters of 2 and 3 input channels (outputs after the inputs' registers)."""
    g3 = outer(binomial(3), binomial(3))
    two = "a -> A, b -> B"
    three = "r -> A, g -> B, b -> C"

    def ch(parts: dict[str, str], scale: str = "") -> str:
        return (scale + " " if scale else "") + "{ " + ", ".join(f"{k}: {v}" for k, v in parts.items()) + " }"

    return [
        SuiteFilter(
            "mc2_blur_sum",
            "multi-channel",
            source("mc2_blur_sum", [("C", ch({"a": matrix_text(g3), "b": matrix_text(g3)}, "1/32"))], two),
        ),
        SuiteFilter(
            "mc2_grad_diff",
            "multi-channel",
            source(
                "mc2_grad_diff",
                [
                    (
                        "C",
                        ch(
                            {"a": matrix_text(SOBEL_X), "b": matrix_text([[-v for v in r] for r in SOBEL_X])},
                            "1/8",
                        ),
                    )
                ],
                two,
            ),
        ),
        SuiteFilter(
            "mc2_blur_edge",
            "multi-channel",
            source(
                "mc2_blur_edge",
                [
                    ("C", ch({"a": matrix_text(g3)}, "1/16")),
                    ("D", ch({"a": "[-1 0 1]", "b": "[1 0 -1]"}, "1/2")),
                ],
                two,
            ),
        ),
        SuiteFilter(
            "mc3_luma",
            "multi-channel",
            source(
                "mc3_luma",
                [("D", ch({"r": "[0.299]", "g": "[0.587]", "b": "[0.114]"}))],
                three,
                ["max_error = 0.02"],
            ),
        ),
        SuiteFilter(
            "mc3_luma_chroma",
            "multi-channel",
            source(
                "mc3_luma_chroma",
                [
                    ("D", ch({"r": "[1]", "g": "[2]", "b": "[1]"}, "1/4")),
                    ("E", ch({"r": "[-1]", "g": "[-2]", "b": "[3]"}, "1/4")),
                ],
                three,
            ),
        ),
        SuiteFilter(
            "mc3_blur",
            "multi-channel",
            source(
                "mc3_blur",
                [
                    (
                        "D",
                        ch(
                            {
                                "r": matrix_text(g3),
                                "g": matrix_text([[2 * v for v in r] for r in g3]),
                                "b": matrix_text(g3),
                            },
                            "1/64",
                        ),
                    )
                ],
                three,
            ),
        ),
    ]


def random_filters(rng: random.Random) -> list[SuiteFilter]:
    """The paper's eq. 10: kernels `1/8 [u1..u9]`, each `u` uniform in 0..8; two filters per kernel count 1..5."""
    out = []
    for n in range(1, 6):
        for s in range(2):
            kernels = [scaled([[rng.randint(0, 8) for _ in range(3)] for _ in range(3)], 8) for _ in range(n)]
            out.append(several(f"random{n}_{s}", "random eq. 10", kernels))
    return out


def build_suite() -> list[SuiteFilter]:
    """Every filter of the suite, in a fixed order."""
    rng = random.Random(FILTER_SEED)
    return (
        classic_filters()
        + approximate_filters()
        + cnn_filters(rng)
        + multichannel_filters()
        + random_filters(rng)
    )


def split(suite: Sequence[SuiteFilter], seed: int = SPLIT_SEED) -> dict[str, list[SuiteFilter]]:
    """The tuning and validation halves: within each family (in a seeded order) the filters go to the two
    halves in turn, the turn carrying over from family to family, so both halves get every kind."""
    rng = random.Random(seed)
    halves: dict[str, list[SuiteFilter]] = {h: [] for h in HALVES}
    turn = rng.randrange(2)
    families = sorted({f.family for f in suite})
    for family in families:
        members = [f for f in suite if f.family == family]
        rng.shuffle(members)
        for f in members:
            halves[HALVES[turn]].append(f)
            turn ^= 1
    order = {f.name: i for i, f in enumerate(suite)}
    return {h: sorted(fs, key=lambda f: order[f.name]) for h, fs in halves.items()}


# -- running one search in its own process ------------------------------------------------------------------------

_RUNNER = r"""
import dataclasses, json, sys
from cain.frontend.kernel import parse_filter
from cain.search import SearchConfig, search
request = json.load(sys.stdin)
filt = parse_filter(request["source"], request["name"] + ".cain")
result = search(filt, SearchConfig(**request["config"]))
program = result.program
json.dump({"program": dataclasses.asdict(program) if program is not None else None,
           "depth": filt.depth, "goals": [[[*a, c] for a, c in k.goal.items] for k in filt.kernels],
           "errors": [str(k.error) for k in filt.kernels],
           "events": [dataclasses.asdict(e) for e in result.events], "nodes": result.nodes,
           "seconds": result.seconds, "peak_memory": result.peak_memory, "stopped": result.stopped,
           "lower_bound": getattr(result, "lower_bound", None),
           "kernel_by_kernel": getattr(result, "kernel_by_kernel", False)}, sys.stdout)
"""
"""Run in a fresh interpreter by `search_in_process`: the search of whichever tree is on its path."""

_COMPILE_RUNNER = r"""
import dataclasses, json, sys, time
import cain
from cain.backend.bus_synth import counts
from cain.backend.verify import verify_bus
from cain.backend.convert import program_from_kernel
from cain.backend.sim import expansion
request = json.load(sys.stdin)
lowered = []
if not hasattr(cain.Compiled, "rivals"):  # a revision before them: its searches' programs as they are lowered
    plain = cain.api._lower
    cain.api._lower = lambda *a, **k: lowered.append(plain(*a, **k)) or lowered[-1]
start = time.perf_counter()
done = cain.compile(request["source"], **request["options"])
seconds = time.perf_counter() - start
ops = done.micro_ops if done.micro_ops is not None else expansion(done.program)  # macro level: the expansion
verify_bus(ops, done.filter)
found = counts(ops)
rivals = getattr(done, "rivals", ()) or [program_from_kernel(run.allocated) for run in lowered]
fewest = min((done.program, *rivals), key=lambda p: p.macros)
json.dump({"program": dataclasses.asdict(fewest), "depth": done.filter.depth,
           "goals": [[[*a, c] for a, c in k.goal.items] for k in done.filter.kernels],
           "errors": [str(k.error) for k in done.filter.kernels], "icws": done.icws,
           "bus2": found.get("bus2", 0), "bus3": found.get("bus3", 0), "seconds": seconds}, sys.stdout)
"""
"""Run in a fresh interpreter by `compile_in_process`: the default compile (`cain.compile`, bus level unless
asked) of whichever tree is on its path; its printed program is verified again here (at macro level, its
expansion)."""


def program_from_json(data: dict) -> Program:
    return Program(
        name=data["name"],
        inputs=[tuple(i) for i in data["inputs"]],
        instrs=[
            Instr(
                i["macro"],
                tuple(i["results"]),
                tuple(i["operands"]),
                tuple(i["directions"]),
                tuple(i.get("scratch", ())),
            )
            for i in data["instrs"]
        ],
        outputs=[tuple(o) for o in data["outputs"]],
        registers={int(k): v for k, v in data.get("registers", {}).items()},
    )


@dataclass(frozen=True)
class Tree:
    """A code base to search with: a directory and the `PYTHONPATH` that imports its `cain` (None: ours)."""

    label: str
    directory: Path
    pythonpath: str | None = None


def export_revision(rev: str, into: Path) -> Tree:
    """`rev` of this repository unpacked into `into`, importable with `PYTHONPATH=into`: the package
    directories that install as `cain.dialects` and `cain.passes` are linked into `cain/`."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for package in ("dialects", "passes"):
        link = into / "cain" / package
        if (into / package).is_dir() and not link.exists():
            link.symlink_to(into / package, target_is_directory=True)
    return Tree(f"{rev} ({commit[:10]})", into, str(into))


@contextmanager
def versions_of(baseline: str | None, machine: dict) -> Iterator[list[Tree]]:
    """Today's code, and `baseline` (a git revision, if any) unpacked into a temporary directory for as long
    as the block runs; the baseline's label is noted in `machine`."""
    with tempfile.TemporaryDirectory(prefix="cain-baseline-") as tmp:
        trees = [Tree("current", ROOT)]
        if baseline:
            trees.append(export_revision(baseline, Path(tmp)))
            machine["baseline"] = trees[1].label
        yield trees


def search_in_process(
    tree: Tree,
    entry: SuiteFilter,
    filt: Filter,
    *,
    budget: Budget,
    workers: int,
    seed: int,
    cost: str | None = None,
) -> Run:
    """One search of `entry` by `tree`'s code in a fresh process (`cost` passed on unless None: a baseline
    revision may not know it), its program verified here and synthesised at bus level by today's bus-synth."""
    config = {
        "node_budget": budget.nodes,
        "time_budget": budget.seconds,
        "workers": workers,
        "seed": seed,
        "progress": False,
    }
    if cost is not None:
        config["cost"] = cost
    request = {"source": entry.source, "name": entry.name, "config": config}
    data = _run_in(tree, entry, _RUNNER, request, budget)
    if isinstance(data, Run):
        return data
    run = Run(
        entry.name,
        "impossible" if data["stopped"] == "impossible" else "no plan",
        events=data["events"],
        nodes=int(data["nodes"]),
        seconds=float(data["seconds"]),
        peak_memory=data["peak_memory"],
        stopped=data["stopped"],
        lower_bound=data.get("lower_bound"),
    )
    if data["program"] is not None:
        _check(run, entry, filt, data, cost or "macros")
    return run


def compile_in_process(
    tree: Tree,
    entry: SuiteFilter,
    filt: Filter,
    *,
    budget: Budget,
    workers: int | None,
    seed: int,
    level: str = "bus",
) -> Run:
    """The default compile of `entry` (`cain.compile` at `level`, both searches) by `tree`'s code in a fresh
    process. Its `macros` are the fewest of the two searches' programs (verified here), its `bus ICWs`,
    `bus2` and `bus3` those of the printed program (verified again in that process; at macro level, its
    expansion)."""
    options = {"time": budget.seconds, "budget": budget.nodes, "seed": seed}
    if level != "bus":  # a baseline revision may not know the option
        options["level"] = level
    if workers is not None:  # else the tree's own default (a baseline revision's)
        options["workers"] = workers
    data = _run_in(tree, entry, _COMPILE_RUNNER, {"source": entry.source, "options": options}, budget)
    if isinstance(data, Run):
        return data
    seconds = float(data["seconds"])
    run = Run(entry.name, "no plan", seconds=seconds, stopped="compiled")
    _check(run, entry, filt, data, "macros")
    run.events = [{"nodes": 0, "seconds": seconds, "macros": run.macros, "icws": run.icws, "bus_icws": data["icws"]}]
    if run.ok:
        run.bus_icws, run.bus2, run.bus3 = data["icws"], data["bus2"], data["bus3"]
        run.bus_program, run.bus_ops = [], None
    return run


def _run_in(tree: Tree, entry: SuiteFilter, runner: str, request: dict, budget: Budget) -> dict | Run:
    """`runner` on `request` (JSON on its stdin) in a fresh interpreter importing `tree`'s code: its JSON
    answer, or a failed `Run` saying why there is none."""
    env = dict(os.environ)
    if tree.pythonpath is not None:
        env["PYTHONPATH"] = tree.pythonpath
    timeout = None if budget.seconds is None else 3 * budget.seconds + 120
    try:
        done = subprocess.run(
            [sys.executable, "-c", runner],
            check=False,
            input=json.dumps(request),
            capture_output=True,
            text=True,
            cwd=tree.directory,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Run(entry.name, "failed", error=f"the run did not end within {timeout} s")
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return Run(entry.name, "failed", error=f"the run raised: {tail[0]}")
    return json.loads(done.stdout)


def _check(run: Run, entry: SuiteFilter, filt: Filter, data: dict, cost: str) -> None:
    """Verify the program `data` holds against `filt` rounded as that run rounded it (`check_program`)."""
    try:
        rounded = own_rounding(filt, data, max_error_of(entry.source))
    except ValueError as e:
        run.status, run.error = "failed", str(e)
        return
    check_program(run, program_from_json(data["program"]), rounded, cost=cost)


def max_error_of(source: str) -> Fraction:
    """The `max_error` option of a kernel file (0 when it has none)."""
    return cast(Fraction, parse_options(source, "suite.cain").get("max_error", DEFAULT_MAX_ERROR))


def own_rounding(filt: Filter, data: dict, max_error: Fraction) -> Filter:
    """`filt` with the goals the searched version rounded the weights to (versions may round differently
    within `max_error`), each checked to be within the filter's `max_error` of the weights as written."""
    if "goals" not in data:
        return filt
    kernels = []
    for kernel, items, error in zip(filt.kernels, data["goals"], data["errors"], strict=True):
        goal = Goal((tuple(a), c) for *a, c in items)
        distance = rounding_error(kernel.weights, data["depth"], goal)
        if distance != Fraction(error):
            raise ValueError(f"{filt.name}: kernel {kernel.name} is {distance} from its weights, not {error}")
        kernels.append(dataclasses.replace(kernel, goal=goal, error=distance))
    if sum(k.error for k in kernels) > max_error:
        raise ValueError(f"{filt.name}: the goals are further than max_error from the weights")
    return dataclasses.replace(filt, kernels=tuple(kernels), depth=data["depth"])


# -- the experiment ------------------------------------------------------------------------------------------------


def total(runs: Sequence[Run], key: str) -> int:
    return sum(getattr(r, key) for r in runs if r.ok)


def half_table(rows: list[dict], versions: Sequence[str]) -> tuple[str, list]:
    """The per-filter table of one half, and its totals (over the filters every version compiled)."""
    headers = ["filter", "family"]
    for v in versions:
        p = f"{v}: " if len(versions) > 1 else ""
        headers += [f"{p}macros", f"{p}ICWs", f"{p}bus ICWs", f"{p}bus2", f"{p}first (s)", f"{p}best (s)"]
        headers += [f"{p}nodes/s", f"{p}peak MB"]
    headers += ["lower bound"]
    table = []
    for row in rows:
        line = [row["filter"], row["family"]]
        for v in versions:
            r = row["runs"][v]
            ok = r["status"] == "verified"
            events = r["events"] if ok else []
            nps = r["nodes"] / r["seconds"] if r.get("nodes") and r.get("seconds") else None
            mem = r["peak_memory"] / 2**20 if r.get("peak_memory") else None
            line += [
                r["macros"] if ok else r["status"],
                r["icws"] if ok else "-",
                r["bus_icws"] if ok else "-",
                r["bus2"] if ok else "-",
                fmt(events[0]["seconds"], 2) if events else "-",
                fmt(events[-1]["seconds"], 2) if events else "-",
                round(nps) if nps else None,
                round(mem) if mem else None,
            ]
        line.append(row.get("lower_bound"))
        table.append(line)
    common = [row for row in rows if all(row["runs"][v]["status"] == "verified" for v in versions)]
    sums = ["**total**", f"{len(common)} of {len(rows)} compiled by all"]
    for v in versions:
        sums += [
            sum(r["runs"][v]["macros"] for r in common),
            sum(r["runs"][v]["icws"] for r in common),
            sum(r["runs"][v]["bus_icws"] for r in common),
            sum(r["runs"][v]["bus2"] for r in common),
            "",
            "",
            "",
            "",
        ]
    sums.append("")
    table.append(sums)
    return markdown_table(headers, table), common


def comparison(rows: list[dict], versions: Sequence[str]) -> str:
    """Current (`versions[0]`) against `versions[1]` on one half: totals where the other compiles, and every
    filter longer."""
    cur, base = versions
    both = [r for r in rows if r["runs"][base]["status"] == "verified"]
    ok = [r for r in both if r["runs"][cur]["status"] == "verified"]
    lost = [r["filter"] for r in both if r["runs"][cur]["status"] != "verified"]
    tc = sum(r["runs"][cur]["macros"] for r in ok)
    tb = sum(r["runs"][base]["macros"] for r in ok)

    def longer_on(key: str) -> str:
        """How many filters of `ok` current is longer on in `key`, and which: `2: a (3 > 2), b (5 > 4)`."""
        pairs = [(r["filter"], r["runs"][cur][key], r["runs"][base][key]) for r in ok]
        longer = [f"{name} ({c} > {b})" for name, c, b in pairs if c > b]
        return f"{len(longer)}{': ' + ', '.join(longer) if longer else ''}"

    shorter = sum(r["runs"][cur]["macros"] < r["runs"][base]["macros"] for r in ok)
    only = [r["filter"] for r in rows if r["runs"][cur]["status"] == "verified" and r not in both]
    bus = sum(r["runs"][cur]["bus_icws"] for r in ok)
    macro_icws = sum(r["runs"][base]["icws"] for r in ok)
    base_bus = sum(r["runs"][base]["bus_icws"] for r in ok)
    return (
        f"On the {len(ok)} filters both compile: {tc} macros against {tb} ({percent(tc, tb)}); shorter on "
        f"{shorter}, longer on {longer_on('macros')}. "
        f"Compiled only by {cur}: {', '.join(only) or 'none'}. "
        f"Compiled only by {base}: {', '.join(lost) or 'none'}.\n\n"
        f"ICWs: {cur} at bus level (bus-synth) {bus} against {base}'s macro programs {macro_icws} "
        f"({percent(bus, macro_icws)}), and against {base}'s programs through bus-synth {base_bus} "
        f"({percent(bus, base_bus)}); longer than those on {longer_on('bus_icws')}.\n"
    )


def percent(new: int, old: int) -> str:
    """`new` against `old` as a signed percentage."""
    return f"{100 * (new - old) / old:+.1f}%" if old else "-"


def draw_halves(rows: list[dict], versions: Sequence[str]):
    """Macros per filter, one bar per version, the two halves side by side."""

    def draw(plt):
        import numpy as np

        figure, axes = plt.subplots(2, 1, figsize=(14, 8))
        for ax, half in zip(axes, HALVES, strict=True):
            part = [r for r in rows if r["half"] == half]
            x = np.arange(len(part))
            width = 0.8 / len(versions)
            for i, v in enumerate(versions):
                values = [r["runs"][v]["macros"] if r["runs"][v]["status"] == "verified" else 0 for r in part]
                ax.bar(x + (i - (len(versions) - 1) / 2) * width, values, width=width, label=v)
            ax.set_xticks(x, [r["filter"] for r in part], rotation=70, fontsize=7)
            ax.set_ylabel("macros")
            ax.set_title(f"{half} half (a missing bar: no verified program)")
            ax.legend(fontsize=8)
        figure.tight_layout()
        return figure

    return draw


SMALL = 12
"""The most macros of a best known program for which `--best-from` reports whether each version reaches it."""


def shortest_runs(records: Sequence[tuple[str, list[dict]]]) -> dict[str, tuple[dict, str]]:
    """Per filter, the verified run of fewest macros in `records` (each a suite run's rows and where they are
    from), with where it is from and its version; on a tie, the first found."""
    best: dict[str, tuple[dict, str]] = {}
    for where, record_rows in records:
        for row in record_rows:
            for version, run in row["runs"].items():
                name = row["filter"]
                if run["status"] == "verified" and (name not in best or run["macros"] < best[name][0]["macros"]):
                    best[name] = (run, f"{version} ({where})" if where else version)
    return best


def best_known(outs: Sequence[Path], rows: list[dict]) -> dict[str, int]:
    """Per filter, the fewest macros of any verified program in `rows` and in the earlier runs `outs`."""
    records = [("", rows)] + [(str(out), read_results(out)["rows"]) for out in outs]
    return {name: run["macros"] for name, (run, _) in shortest_runs(records).items()}


def reached(rows: list[dict], versions: Sequence[str], best: dict[str, int]) -> str:
    """Of one half's filters whose best known program has at most `SMALL` macros, how many each version
    reaches, and the ones it misses."""
    small = [r for r in rows if best.get(r["filter"], SMALL + 1) <= SMALL]
    lines = []
    for v in versions:
        missed = [
            f"{r['filter']} ({r['runs'][v]['macros'] if r['runs'][v]['status'] == 'verified' else '-'} > "
            f"{best[r['filter']]})"
            for r in small
            if r["runs"][v]["status"] != "verified" or r["runs"][v]["macros"] > best[r["filter"]]
        ]
        lines.append(
            f"{v} reaches the best known program on {len(small) - len(missed)} of the {len(small)} filters "
            f"whose best has at most {SMALL} macros{'; not on ' + ', '.join(missed) if missed else ''}."
        )
    return "\n".join(lines) + "\n"


def java_runs_from(
    out: Path, args: argparse.Namespace, names: Sequence[str]
) -> tuple[dict[str, Run], dict] | str:
    """Cain-Java's runs of `names` recorded in an earlier run's `out` and the Java build that made them, or
    what keeps them from standing in for a run at `args`' budget and workers."""
    try:
        record = read_results(out)
    except (OSError, ValueError) as exc:
        return f"--java-from {out}: cannot read its results ({exc})"
    settings = record["settings"]
    if "Cain-Java" not in record["versions"]:
        return f"--java-from {out}: that run has no Cain-Java column"
    if (settings["budget"]["seconds"], settings["workers"]) != (args.budget.seconds, args.workers):
        return (
            f"--java-from {out}: recorded at {settings['budget']['text']} and {settings['workers']} worker(s), "
            f"not {args.budget} and {args.workers}"
        )
    runs = {row["filter"]: Run(**row["runs"]["Cain-Java"]) for row in record["rows"]}
    missing = [n for n in names if n not in runs]
    if missing:
        return f"--java-from {out}: no Cain-Java run of {', '.join(missing)}"
    return runs, {**record["machine"]["cain_java"], "recorded": f"{out} ({record['machine']['date']})"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser("suite", __doc__, samples=1, budget="5s", workers=2)
    parser.add_argument(
        "--half", choices=(*HALVES, "both"), default="both", help="which half to run (default both)"
    )
    parser.add_argument("--filters", nargs="+", metavar="NAME", help="only these filters of the suite")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also run the search of this git revision (e.g. main), alternating with today's",
    )
    parser.add_argument(
        "--cost",
        choices=("macros", "icws"),
        default="macros",
        help="what today's search minimises (default macros, the search's own default; icws: plans scored at "
        "bus level); a baseline revision searches with its own default",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="run the default compile (cain.compile: the searches in ICWs and in macros, bus level) instead "
        "of the search alone: macros are the fewer of its two searches' programs, bus ICWs the printed "
        "program's (the README's first command at this budget and worker count; a baseline revision with its "
        "own default worker count)",
    )
    parser.add_argument(
        "--level",
        choices=("bus", "macro"),
        default="bus",
        help="with --compile: the compile's output level (default bus; macro: `cain --level macro`, whose "
        "macros are the printed program's and whose bus ICWs are its expansion's)",
    )
    parser.add_argument(
        "--java",
        nargs="?",
        const="",
        metavar="DIR",
        help=f"also run Cain-Java, from this checkout (default ${ENVIRONMENT}), built by benchmarks/java/build.sh",
    )
    parser.add_argument("--java-heap", default="8g", help="Cain-Java's largest heap (java -Xmx; default 8g)")
    parser.add_argument(
        "--java-only", action="store_true", help="with --java: run Cain-Java alone (to record its runs once)"
    )
    parser.add_argument(
        "--java-from",
        type=Path,
        metavar="OUT",
        help="take Cain-Java's runs from an earlier run's output directory (same budget and workers) instead of "
        "running it again: they do not depend on Cain's code",
    )
    parser.add_argument(
        "--best-from",
        nargs="+",
        type=Path,
        default=[],
        metavar="OUT",
        help=f"earlier runs' output directories (any budget): each half then says on how many filters whose best "
        f"known program (there or here) has at most {SMALL} macros each version reaches it",
    )
    parser.add_argument("--note", help="a line put at the top of the summary (what the run is for)")
    parser.add_argument("--list", action="store_true", help="list the suite and its split, and run nothing")
    args = parser.parse_args(argv)
    suite = build_suite()
    halves = split(suite)
    half_of = {f.name: h for h, fs in halves.items() for f in fs}
    if args.list:
        for f in suite:
            print(f"{half_of[f.name]:10} {f.family:14} {f.name}")
        return 0
    names = {f.name for f in suite}
    unknown = sorted(set(args.filters or ()) - names)
    if unknown:
        parser.error(f"unknown filter(s): {', '.join(unknown)} (see --list)")
    chosen = [
        f
        for f in suite
        if (args.half == "both" or half_of[f.name] == args.half)
        and (not args.filters or f.name in args.filters)
    ]
    machine = machine_info()
    for out in args.best_from:
        try:
            read_results(out)
        except (OSError, ValueError) as exc:
            parser.error(f"--best-from {out}: cannot read its results ({exc})")
    if args.compile and (args.cost != "macros" or args.java_only):
        parser.error("--compile runs both searches: it takes neither --cost nor --java-only")
    if args.level != "bus" and not args.compile:
        parser.error("--level is the compile's output level: it needs --compile")
    if args.java_only and args.java is None:
        parser.error("--java-only needs --java")
    recorded = None
    if args.java_from is not None:
        found = java_runs_from(args.java_from, args, [f.name for f in chosen])
        if isinstance(found, str):
            parser.error(found)
        recorded, machine["cain_java"] = found
    java = None
    if args.java is not None:
        if args.budget.seconds is None:
            parser.error("--java needs a time budget (e.g. --budget 60s): Cain-Java counts no nodes alike")
        checkout = args.java or os.environ.get(ENVIRONMENT)
        java = find_cain_java(Path(checkout) if checkout else None, args.java_heap)
        if isinstance(java, str):
            print(f"Cain-Java skipped, nothing run: {java}", file=sys.stderr)
            return 0
        machine["cain_java"] = java.describe()
    with versions_of(args.baseline, machine) as trees:

        def run_tree(tree: Tree, entry: SuiteFilter, filt: Filter) -> Run:
            """Today's code (`trees[0]`) as asked; a baseline revision with its own default cost (in a compile,
            its own default worker count too)."""
            ours = tree is trees[0]
            options = {"budget": args.budget, "seed": args.seed}
            if args.compile:
                workers = args.workers if ours else None
                return compile_in_process(tree, entry, filt, workers=workers, level=args.level, **options)
            return search_in_process(
                tree, entry, filt, workers=args.workers, cost=args.cost if ours else None, **options
            )

        runners: list[tuple[str, Callable[[SuiteFilter, Filter], Run]]] = [
            (tree.label, lambda entry, filt, tree=tree: run_tree(tree, entry, filt))
            for tree in trees
            if not args.java_only
        ]
        if recorded is not None:
            runners.append(("Cain-Java", lambda entry, filt: recorded[entry.name]))
        elif java is not None:
            runners.append(
                (
                    "Cain-Java",
                    lambda entry, filt: run_cain_java(
                        java, entry.name, filt, budget=args.budget, workers=args.workers
                    ),
                )
            )
        versions = [label for label, _ in runners]
        rows, all_runs = [], []
        for i, entry in enumerate(chosen):
            try:
                filt = entry.load()
            except Exception as exc:  # noqa: BLE001 - a suite filter that does not parse is a reported failure
                runs = {v: Run(entry.name, "failed", error=f"could not load: {exc}") for v in versions}
            else:
                runs = {}
                for label, runner in runners if i % 2 == 0 else runners[::-1]:
                    run = runner(entry, filt)
                    log(args, f"[{i + 1}/{len(chosen)}] {label}: {run.describe()}")
                    runs[label] = run
            all_runs += runs.values()
            bounds = [r.lower_bound for r in runs.values() if r.lower_bound is not None]
            rows.append(
                {
                    "filter": entry.name,
                    "family": entry.family,
                    "half": half_of[entry.name],
                    "source": entry.source,
                    "lower_bound": max(bounds) if bounds else None,
                    "runs": {v: runs[v].as_json() for v in versions},
                }
            )
    body = [f"**{args.note}**\n"] if args.note else []
    body += [
        (
            f"The suite: {len(suite)} filters made by rule (`benchmarks/suite.py`), split with seed {SPLIT_SEED} "
            f"into a tuning half ({len(halves['tuning'])}) and a validation half ({len(halves['validation'])}). "
            "Times are seconds from the start of the search; peak memory is the sum of the peak resident sets "
            "of the search's processes. A status instead of macros: no verified program.\n"
        )
    ]
    if args.compile:
        body.append(
            f"Cain's columns are its default compile (`cain.compile` at {args.budget}, {args.workers} worker(s)): "
            "`macros` the fewer of its two searches' programs (the one in ICWs and the one in macros), "
            "`ICWs` that program's macros expanded, `bus ICWs`/`bus2` the printed bus-level program's, and "
            "`first`/`best` the compile's whole time.\n"
            if args.level == "bus"
            else f"Cain's columns are its compile at macro level (`cain.compile(..., level=\"macro\")` at "
            f"{args.budget}, {args.workers} worker(s): with two, the search in macros in two orders side by side): "
            "`macros` and `ICWs` the printed program's, `bus ICWs`/`bus2` its expansion's, and `first`/`best` "
            "the compile's whole time.\n"
        )
    if "cain_java" in machine:
        built = machine["cain_java"]
        body.append(
            f"Cain-Java: commit {built['commit'][:10]} (github.com/ed741/cain, version 3.1), built by "
            "benchmarks/java/build.sh, heap at most "
            f"{built['heap']}, {args.workers} worker(s), {args.budget} per filter"
            + (f" (its runs recorded in {built['recorded']})" if "recorded" in built else "")
            + "; its paper-era search (CGDS, "
            "PlanLength, Threshold 10 with the Pattern heuristic, the filter's registers and instruction set) "
            "on Cain's goals. Its programs are read from its C (one macro per SDK call), their ICWs are the "
            "macros' expansion in Cain's table, and each is verified; its `bus ICWs` are Cain's bus-synth "
            "applied to its program, its nodes the nodes its workers expanded, its times from its search's "
            "start (the JVM's wall clock for nodes/s), its peak memory the JVM's resident set (sampled twice a "
            "second).\n"
        )
    best = best_known(args.best_from, rows) if args.best_from else {}
    if args.best_from:
        body.append(f"Best known programs: the fewest macros here and in {', '.join(map(str, args.best_from))}.\n")
    for half in HALVES:
        part = [r for r in rows if r["half"] == half]
        if not part:
            continue
        table, _ = half_table(part, versions)
        body.append(f"## The {half} half\n\n{table}")
        for other in versions[1:]:
            body.append(comparison(part, (versions[0], other)))
        if args.best_from:
            body.append(reached(part, versions, best))
    body.append(failures_markdown(all_runs))
    write_outputs(
        args,
        "suite",
        "The generalisation suite",
        argv=argv,
        machine=machine,
        data={"versions": versions, "split_seed": SPLIT_SEED, "filter_seed": FILTER_SEED, "rows": rows},
        body="\n".join(body),
        draw=draw_halves(rows, versions) if rows else None,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
