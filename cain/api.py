"""Cain as a library: `cain.compile` one filter, `cain.compile_many` a batch on any executor.

Both run the same passes as `cain-opt` (cain/passes) on the same IR, so the library and the command line
cannot drift apart; every mistake in the input is a `CainError` whose text is what the command line prints.
"""

from __future__ import annotations

import csv
import multiprocessing
import os
import sys
import time as clock
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException, VerifyException

from cain.backend.convert import micro_ops_of, program_from_kernel, simulate_micro_ops
from cain.backend.digital import DigitalProgram, emit_digital, kernel_op
from cain.backend.emit_c import CTarget, emit_kernel, emit_module
from cain.backend.sim import Noise, shift, simulate
from cain.backend.split import KERNEL_STORE
from cain.backend.superpixel import SuperpixelProgram, emit_superpixel
from cain.backend.verify import ensure_verified
from cain.diagnostics import CainError
from cain.dialects import register_dialects
from cain.dialects.goal import FilterOp, filter_from_op, filter_to_op
from cain.dialects.scamp5 import KernelOp
from cain.frontend import READERS
from cain.frontend.onnx_model import onnx_filters
from cain.frontend.options import check_registers
from cain.frontend.tensor import filter_from_weights
from cain.model.filter import Filter
from cain.model.goal import centred
from cain.model.isa import MicroOp
from cain.model.program import Program
from cain.passes.bus_synth import BusSynthPass
from cain.passes.convert_linalg_to_goal import ConvertLinalgToGoalPass
from cain.passes.expand_bus import ExpandBusPass
from cain.passes.regalloc import RegallocPass
from cain.passes.search import SearchPass
from cain.search.config import DEFAULT_TIME, check_budgets
from cain.search.digital import compile_digital
from cain.search.heuristic.worker import BUS_OPTIONS
from cain.search.superpixel import compile_superpixel

XDSL_ERRORS = (ParseError, VerifyException, DiagnosticException, PassFailedException)
"""xDSL's errors about the input, which `cain-opt` prints as `error: ...`."""

FRONTEND_OPTIONS = ("registers", "instruction_set", "max_depth", "max_error")
"""The options that shape the filter (the command line's overrides of a kernel file)."""

LEVELS = ("goal", "scamp5", "allocated", "bus")
"""The IR levels a result keeps: goal IR, scamp5 on SSA values, on registers, as bus micro-ops."""

OUTPUT_LEVELS = ("bus", "macro")
"""What the C is written in: bus micro-ops optimised in ICWs (`bus-synth`, the default), or SDK macros."""
DEFAULT_LEVEL = "bus"

SEARCHES = {"icws": ("icw_search", "cgds"), "macros": ("macro_search", "discrepancy")}
"""At bus level without a `cost`, the two searches whose programs are compared: the prefix of the counts
the printed kernel keeps of the one not chosen (`cain.backend.emit_c.rival_lines`), and its traversal: the
two orders reach different plans, and the shorter is kept (on the suite at 10 s, 5 macros fewer in each half
than with CGDS twice; benchmarks/README.md, "The default compile")."""
ORDERS = {"cgds": "cgds_search", "discrepancy": "discrepancy_search"}
"""At macro level without a `cost`, on a time budget with two workers or more, the search in macros runs
side by side in these two traversal orders, half the workers each, and the program of fewer macros is
printed: the same two orders as at bus level, each with the prefix of the counts the printed kernel keeps of
it when it is not chosen."""

SEARCH_SHARE = 0.3
"""Of a time budget, the first search's part when both run at bus level one after the other (one worker;
one search alone: twice that); its plan is lowered to bus level by the end of half the budget, and the
second search has what is left but `SYNTHESIS_SHARE`, which its plan's lowering has (`compile_filter`)."""
SYNTHESIS_SHARE = 0.2
SIDE_SHARE = 0.75
"""With two workers or more, the two searches run side by side on a time budget, half the workers each, for
this part of it each; the rest is for lowering their plans to bus level. The search in ICWs then builds no
constructive program past its end when it has a plan (the search in macros does, and its result is
compared): built in both, it took the lowering's time on long plans (a 9x9 Gaussian printed the 128 ICWs of
its macros' expansion at 10 s instead of synthesised code)."""

DEFAULT_WORKERS = min(2, os.cpu_count() or 1)
"""Search processes for one filter on a time budget by default (`cain`, `cain.compile`): the two searches
side by side (`default_workers`)."""


def default_workers(budget: int | None) -> int:
    """`DEFAULT_WORKERS` on a time budget; one on a node budget (its program as with one worker: a second
    would double the work, not speed it) and in a daemonic process, e.g. a `multiprocessing.Pool`'s, which
    may start none."""
    return 1 if budget is not None or multiprocessing.current_process().daemon else DEFAULT_WORKERS


SYNTHESIS = BUS_OPTIONS
"""How the default first lowers a plan to bus level: as the search in ICWs scores its plans (beam 16, values
of one user deferred or none, `WORK` states at most); then, on a time budget, with the pass's own options
in the time left (`_synthesised`). The pass's default also defers shared values: on a 25-step plan of
AnalogNet2 that took minutes on a loaded 2-core machine, against 1.3 s of CPU, so it never runs first."""


def check_level(level: str) -> None:
    """A CainError naming the choices for a `level` not in `OUTPUT_LEVELS`."""
    if level not in OUTPUT_LEVELS:
        raise CainError(f"unknown level '{level}' (choose from {', '.join(OUTPUT_LEVELS)})")


def check_max_icws(max_icws: int) -> None:
    """A CainError for a kernel size the SDK cannot record: at least one ICW, at most its whole store."""
    if not 1 <= max_icws <= KERNEL_STORE:
        raise CainError(
            f"max-icws must be between 1 and {KERNEL_STORE} (the SDK's ICW store), not {max_icws}"
        )


@dataclass
class Compiled:
    """One compiled filter: its verified program, C, IR at every level and counts."""

    filter: Filter
    program: Program
    """The register-allocated macro program (at macro level what the C runs; at bus level what
    `micro_ops` were synthesised from)."""
    c: str
    """A C++ file for the SCAMP-5d SDK with the filter's function."""
    function: str
    """The function alone (what a batch file gathers)."""
    ir: dict[str, str]
    """The IR text at each of `LEVELS`."""
    macros: int
    icws: int
    """ICWs of the code the C runs: the bus micro-ops at bus level, the macros' expansion at macro level."""
    seconds: float = 0.0
    digital: DigitalProgram | None = None
    """The DREG program, for a filter on the digital plane (then `program` is its macro plan)."""
    superpixel: SuperpixelProgram | None = None
    """The superpixel program (words and pattern loads), for a filter in superpixel mode."""
    level: str = "macro"
    """`bus` or `macro` (`OUTPUT_LEVELS`): what the C is written in."""
    micro_ops: tuple[MicroOp, ...] | None = None
    """At bus level, the verified bus micro-ops the C runs."""
    rivals: tuple[Program, ...] = ()
    """With two searches, the other one's verified program (allocated macros), not printed because it is
    longer: at bus level in ICWs, at macro level in macros (its counts are in the C header)."""

    @property
    def name(self) -> str:
        return self.filter.name

    @property
    def depth(self) -> int:
        """The approximation depth: every weight is a multiple of 1/2^depth."""
        return self.filter.depth

    @property
    def errors(self) -> dict[str, Fraction]:
        """Each kernel's approximation error, sum |weight - approximation|."""
        return {k.name: k.error for k in self.filter.kernels}

    def simulate(self, image: Any, noise: float | Noise | None = None, seed: int = 0) -> np.ndarray:
        """The program's outputs on `image` in the SCAMP-5 model (the bus micro-ops the C runs: at macro
        level every macro's own), one array per kernel: `[kernel, row, column]`. `image` is 2-D for one
        input channel, else `[channel, row, column]`; `noise` a `Noise` or the standard deviation of each
        bus transfer."""
        if self.superpixel is not None:  # one value per tile, two's complement modulo 2^bits
            return self._superpixel_outputs(self._images(image), seed)
        if self.digital is not None:  # exact integers, in the kernel's units (the program computes 2^depth x)
            images = self._images(image)
            widths = [self.digital.encoding.input_width(z) for z in range(len(self.digital.inputs))]
            if (images != np.round(images)).any() or any(
                images[z].min() < 0 or images[z].max() >= 1 << w for z, w in enumerate(widths)
            ):
                raise CainError(
                    f"{self.name}: the digital program takes unsigned integer images of "
                    f"{'/'.join(map(str, widths))} bit(s) (see Compiled.quantized)"
                )
            return np.stack(self.digital.run(images.astype(np.int64), seed=seed)) / 2**self.depth
        if isinstance(noise, int | float):
            noise = Noise(sigma=float(noise), seed=seed)
        if self.micro_ops is not None:
            outputs = simulate_micro_ops(self.micro_ops, self.filter, self._images(image), noise, seed)
        else:
            outputs = simulate(self.program, self._images(image), noise=noise, seed=seed)
        return np.stack(outputs)

    def _superpixel_outputs(self, images: np.ndarray, seed: int) -> np.ndarray:
        """The superpixel program's outputs on tile images (one value per tile), as signed integers in the
        kernel's units."""
        assert self.superpixel is not None
        bits = self.superpixel.superpixel.bits
        if (images != np.round(images)).any():
            raise CainError(
                f"{self.name}: the superpixel program takes integer tile images (see Compiled.quantized)"
            )
        wrapped = np.mod(images.astype(np.int64), 1 << min(bits, 62)).astype(np.uint64)
        out = np.stack(self.superpixel.run(wrapped, seed=seed)).astype(np.float64)
        out = np.where(out >= 2.0 ** (bits - 1), out - 2.0**bits, out)
        return out / 2**self.depth

    def quantized(self, image: Any) -> np.ndarray:
        """`image` (`[channel, row, column]` or 2-D) stretched over each channel's digital input width and rounded:
        what a digital program reads (unchanged on the analogue plane)."""
        images = self._images(image)
        if self.superpixel is not None:  # positive values of at most 8 bits, so that sums rarely wrap
            widths = [max(1, min(8, self.superpixel.superpixel.bits - 4))] * len(images)
        elif self.digital is None:
            return images
        else:
            widths = [self.digital.encoding.input_width(z) for z in range(len(self.digital.inputs))]
        top = np.array([(1 << w) - 1 for w in widths], dtype=np.float64)[:, None, None]
        low = images.min(axis=(-2, -1), keepdims=True)
        span = np.maximum(images.max(axis=(-2, -1), keepdims=True) - low, 1e-12)
        return np.round((images - low) / span * top)

    def exact(self, image: Any) -> np.ndarray:
        """The direct convolution of `image` with the weights as written (before approximation),
        `[kernel, row, column]`, pixels beyond the edge reading 0 as on the device."""
        images = self._images(image)
        out = np.zeros((len(self.filter.kernels), *images.shape[1:]))
        for k, kernel in enumerate(self.filter.kernels):
            for (x, y, z), w in centred(kernel.weights):
                if w:
                    out[k] += float(w) * shift(images[z], (x, y))
        return out

    def _images(self, image: Any) -> np.ndarray:
        images = np.asarray(image, dtype=np.float64)
        if images.ndim == 2:
            images = images[None]
        channels = len(self.filter.inputs)
        if images.ndim != 3 or len(images) != channels:
            raise CainError(
                f"{self.name}: give {'a 2-D image' if channels == 1 else f'{channels} images'} "
                f"([channel, row, column]), not an array of shape {np.shape(image)}"
            )
        return images


def _context() -> Context:
    return register_dialects(Context())


def read_filters(source: Any, **options: Any) -> list[Filter]:
    """The filters a source describes: a `.cain` / `.json` / `.mlir` / `.onnx` path, kernel-language text,
    a `Filter`, or weights (see `cain.frontend.tensor.filter_from_weights`, whose options apply).

    `options`: `registers`, `instruction_set`, `max_depth`, `max_error` (None: the file's or the default);
    for weights also `name`, `outputs`, `inputs`, `kernel_names`; for ONNX `outputs_per_filter`, `bias`."""
    try:
        return _read(source, {k: v for k, v in options.items() if v is not None})
    except XDSL_ERRORS as e:
        raise CainError(str(e)) from None


def _read(source: Any, options: dict[str, Any]) -> list[Filter]:
    overrides = {k: options.pop(k) for k in FRONTEND_OPTIONS if k in options}
    if isinstance(source, Filter):
        _no_options(options, "a Filter")
        return [source]
    if type(source).__module__.startswith("onnx"):
        return onnx_filters(source, **overrides, **options)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        kind = path.suffix.lstrip(".")
        if not path.is_file():
            raise CainError(
                f"cannot read '{path}': {'it is a directory' if path.is_dir() else 'no such file'}"
            )
        if kind == "onnx":
            return onnx_filters(path, **overrides, **options)
        _no_options(options, f"a .{kind} file")
        if kind in READERS:
            return [READERS[kind].parse_filter(path.read_text(), str(path), overrides)]
        if kind == "mlir":
            return _ir_filters(path.read_text(), str(path), overrides)
        raise CainError(
            f"cannot read '{path}': unknown file type '.{kind}' (expected .cain, .json, .mlir or .onnx)"
        )
    if isinstance(source, str):
        _no_options(options, "kernel-language text")
        return [READERS["cain"].parse_filter(source, options.get("name", "<string>"), overrides)]
    return [filter_from_weights(source, **overrides, **options)]


def _looks_like_path(text: str) -> bool:
    """A one-line string naming a kernel, IR or model file (kernel text holds `output` or a newline)."""
    return "\n" not in text and Path(text).suffix in (".cain", ".json", ".mlir", ".onnx")


def _no_options(options: dict[str, Any], what: str) -> None:
    extra = sorted(k for k in options if k != "name" or what != "kernel-language text")
    if extra:
        raise CainError(f"{', '.join(extra)}: only for weights, not for {what}")


def _ir_filters(text: str, filename: str, overrides: dict[str, Any]) -> list[Filter]:
    """The filters of goal or scamp5 IR, or of a model's convolutions (by `convert-linalg-to-goal`)."""
    module = Parser(_context(), text, filename).parse_module()
    if not any(isinstance(op, FilterOp | KernelOp) for op in module.walk()):
        ConvertLinalgToGoalPass(**_linalg_options(overrides)).apply(_context(), module)
    elif overrides:
        raise CainError(
            f"{', '.join(overrides)}: IR input already holds its approximated goals (recompile the kernel file)"
        )
    return [
        filter_from_op(op) if isinstance(op, FilterOp) else op.filter
        for op in module.walk()
        if isinstance(op, FilterOp | KernelOp)
    ]


def _linalg_options(overrides: dict[str, Any]) -> dict[str, Any]:
    """The pass options of `convert-linalg-to-goal` for the API's overrides."""
    options = dict(overrides)
    if "max_error" in options:
        options["max_error"] = str(options["max_error"])
    if "registers" in options:
        try:
            options["registers"] = check_registers(options["registers"])
        except ValueError as e:
            raise CainError(str(e)) from None
    return options


@dataclass(frozen=True)
class SearchOptions:
    """The search pass's options, as `cain-opt -p 'search{...}'` takes them."""

    budget: int | None = None
    time: float | None = None
    seed: int = 0
    workers: int = 1
    cost: str | None = None
    """What the search minimises; None: `macros`, and at bus level the `icws` search as well."""
    traversal: str = "cgds"
    constructive: bool = True
    """Compare the constructive program with the search's plan (`SearchPass.constructive`)."""

    def __post_init__(self) -> None:
        """A clear error for a budget no search can run on, in the user's own figures (before the searches
        take their shares of it)."""
        check_budgets(self.budget, self.time, self.workers)

    def search_pass(self) -> SearchPass:
        return SearchPass(
            budget=self.budget,
            time=self.time,
            seed=self.seed,
            workers=self.workers,
            traversal=self.traversal,
            cost=self.cost or "macros",
            constructive=self.constructive,
            quiet=True,
        )

    def costs(self, level: str) -> list[SearchOptions]:
        """The searches a compile at `level` runs: the one `cost` names, else at bus level the search in
        ICWs and the one in macros; on a time budget, each with `SEARCH_SHARE` of it (one alone: twice
        that), or `SIDE_SHARE` and half the workers when they run side by side (`side_by_side`; then only
        the search in macros compares the constructive program with its plan: `SIDE_SHARE`). A node budget
        is each search's: deterministic."""
        if level == "macro":
            if self.side_by_side:
                return [replace(self, cost="macros", traversal=t, workers=self.workers // 2) for t in ORDERS]
            return [replace(self, cost=self.cost or "macros")]
        time = self.seconds
        if self.cost is not None:
            searches = [self]
        else:
            searches = [
                replace(self, cost=cost, traversal=traversal) for cost, (_, traversal) in SEARCHES.items()
            ]
        if self.side_by_side:
            return [
                replace(s, time=time * SIDE_SHARE, workers=self.workers // 2, constructive=s.cost != "icws")
                for s in searches
            ]
        share = None if time is None else time * SEARCH_SHARE * len(SEARCHES) / len(searches)
        return [replace(s, time=share) for s in searches]

    @property
    def side_by_side(self) -> bool:
        """Whether two searches run at once, in processes of their own: without a `cost`, on a time budget,
        with two workers or more (at bus level the search in ICWs and the one in macros; at macro level the
        search in macros in both `ORDERS`)."""
        return self.cost is None and self.budget is None and self.workers >= 2

    @property
    def seconds(self) -> float | None:
        """The time budget: `time`, else the default unless a node budget is given (then None)."""
        return self.time if self.time is not None or self.budget is not None else DEFAULT_TIME


def _compile_dregs(filt: Filter, search: SearchOptions, start: float, max_icws: int) -> Compiled:
    """A filter on the DREG plane compiled: a superpixel one (`cain.search.superpixel`), its verified words
    and pattern loads as C, or a digital one (`cain.search.digital`), its verified words as C."""
    options = {"budget": search.budget, "seed": search.seed, "time": search.time}
    channels = [c for c, _ in filt.inputs]
    program: DigitalProgram | SuperpixelProgram
    if filt.superpixel is not None:
        program = compile_superpixel(filt, filt.superpixel, **options)
        function = emit_superpixel(program, channels, max_icws)
        ir = {"superpixel": "\n".join(str(i) for i in program.items)}
        mode = {"superpixel": program}
    else:
        assert filt.encoding is not None
        program = compile_digital(filt, filt.encoding, **options)
        function = emit_digital(program, channels, max_icws)
        ir = {"dreg": str(ModuleOp([kernel_op(program)]))}
        mode = {"digital": program}
    assert program.plan is not None
    return Compiled(
        filt,
        program.plan,
        emit_module([]) + function + "\n",
        function,
        ir,
        program.macros,
        program.icws,
        clock.perf_counter() - start,
        **mode,
    )


def compile_filter(
    filt: Filter,
    search: SearchOptions = SearchOptions(),
    level: str = DEFAULT_LEVEL,
    max_icws: int = KERNEL_STORE,
) -> Compiled:
    """Run `search` and `regalloc` on the goal IR of `filt`, keeping the IR after each pass, then at bus
    level `bus-synth` (else `expand-bus`, for the IR), and print the C (`CTarget`).

    At bus level without a `cost`, both searches run (`SearchOptions.costs`) and the program of fewer ICWs
    is printed (then fewer bus2/bus3, then fewer macros): never longer than the macro program's own
    expansion, which `bus-synth` keeps when it finds nothing shorter; when one search finds no program, the
    other's is printed. Each level is verified once (`cain.backend.verify.remember`). With a time budget the
    searches share it as `_lower_all` says (side by side on two workers or more), and each plan's synthesis
    (`_synthesised`) keeps what it found by its end or the macros' own expansion; with a node budget, each
    synthesis ends by `SYNTHESIS.work`.
    For the digital plane: the digital search, lowering and verification (`cain.backend.digital`); for
    superpixels, `cain.search.superpixel`. A
    program longer than `max_icws` is printed as several SDK kernels (`cain.backend.split`)."""
    check_level(level)
    check_max_icws(max_icws)
    start = clock.perf_counter()
    if filt.superpixel is not None or filt.encoding is not None:
        return _compile_dregs(filt, search, start, max_icws)
    try:
        runs, failed = _lower_all(filt, search, level, start)
        if not runs:
            raise failed[0]
        chosen = min(runs, key=lambda run: _length(_kernel(run.printed), level))
        for rival in runs:
            if rival is not chosen:
                _note_rival(_kernel(chosen.printed), rival, level)
                chosen.ir["bus" if level == "bus" else "allocated"] = str(chosen.printed)
        c = CTarget(max_icws=max_icws).text(chosen.printed)
    except XDSL_ERRORS as e:
        raise CainError(str(e)) from None
    kernel = _kernel(chosen.printed)
    program = program_from_kernel(chosen.allocated)
    ops = tuple(micro_ops_of(kernel)) if level == "bus" else None
    return Compiled(
        filt,
        program,
        c,
        emit_kernel(kernel, max_icws),
        chosen.ir,
        program.macros,
        program.icws if ops is None else len(ops),
        clock.perf_counter() - start,
        level=level,
        micro_ops=ops,
        rivals=tuple(program_from_kernel(run.allocated) for run in runs if run is not chosen),
    )


def _lower_all(
    filt: Filter, search: SearchOptions, level: str, start: float
) -> tuple[list[_Lowered], list[CainError]]:
    """Every search of `search.costs(level)` lowered (`_lower`), side by side or one after the other, and
    the errors of those that found no program. On a time budget of T one after the other, the first
    search's synthesis ends by T/2 and the second search has what is left but `SYNTHESIS_SHARE` of T (at
    least its own share); every synthesis ends by T."""
    costs = search.costs(level)
    if search.side_by_side:
        return _lower_side_by_side(filt, costs, level, start + search.seconds)
    runs: list[_Lowered] = []
    failed: list[CainError] = []
    seconds = search.seconds if level == "bus" else None
    for k, options in enumerate(costs):
        end = None if seconds is None else start + seconds * (k + 1) / len(costs)
        if seconds is not None and k == len(costs) - 1 and k > 0:
            left = start + seconds * (1 - SYNTHESIS_SHARE) - clock.perf_counter()
            options = replace(options, time=max(options.time, left))
        try:
            runs.append(_lower(filt, options, level, runs, end))
        except CainError as e:  # the other search's program may still be found
            failed.append(e)
    return runs, failed


def _lower_side_by_side(
    filt: Filter, costs: list[SearchOptions], level: str, end: float
) -> tuple[list[_Lowered], list[CainError]]:
    """`_lower` for each of `costs` at once, each in a forked process whose IR text comes back and is parsed
    again here (the C is printed from it, so `emit` verifies it once more in this process)."""
    ctx = multiprocessing.get_context("fork")
    jobs = []
    runs: list[_Lowered] = []
    failed: list[CainError] = []
    try:
        for options in costs:  # not daemons: a search of two workers or more starts its own processes
            parent, child = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_lower_in_child, args=(filt, options, level, end, child))
            process.start()
            child.close()
            jobs.append((options, process, parent))
        for options, process, pipe in jobs:
            try:
                kind, got = pipe.recv()
            except EOFError:
                kind, got = "crash", f"exit status {process.exitcode}"
            process.join()
            if kind == "error":
                failed.append(CainError(*got))
            elif kind == "crash":
                raise RuntimeError(f"the search in {options.cost} ({options.traversal}) failed: {got}")
            else:
                parsed = {name: Parser(_context(), got[name]).parse_module() for name in ("allocated", "bus")}
                printed = parsed["bus"] if level == "bus" else parsed["allocated"]
                runs.append(_Lowered(options, got, _kernel(parsed["allocated"]), printed))
    finally:
        for _, process, _ in jobs:
            if process.is_alive():  # the other search failed, or the compile was interrupted
                process.terminate()
    return runs, failed


def _lower_in_child(filt: Filter, options: SearchOptions, level: str, end: float, pipe) -> None:
    """In a forked process: `_lower`, its IR text sent back (or its error)."""
    try:
        pipe.send(("ok", _lower(filt, options, level, (), end).ir))
    except CainError as e:
        pipe.send(("error", (e.message, e.location)))
    except BaseException:  # noqa: BLE001 - a bug: its traceback goes to the parent, which raises it
        pipe.send(("crash", traceback.format_exc()))
    finally:
        pipe.close()


@dataclass
class _Lowered:
    """One search's program through the passes: the search, its IR text at each of `LEVELS`, its allocated
    kernel, and the module the C is printed from (bus level, or the allocated macros)."""

    search: SearchOptions
    ir: dict[str, str]
    allocated: KernelOp
    printed: ModuleOp


def _lower(
    filt: Filter,
    search: SearchOptions,
    level: str,
    done: Sequence[_Lowered] = (),
    end: float | None = None,
) -> _Lowered:
    """`filt` through `search`, `regalloc` and, at bus level, `bus-synth` (at macro level `expand-bus`, for
    the IR), each level verified; a program one of `done` holds already is not synthesised again. The
    synthesis stops at `end` (a `perf_counter` instant) or its work budget."""
    ctx = _context()
    module = ModuleOp([filter_to_op(filt)])
    ir = {"goal": str(module)}
    search.search_pass().apply(ctx, module)
    ir["scamp5"] = str(module)
    RegallocPass().apply(ctx, module)
    ir["allocated"] = str(module)
    program = program_from_kernel(_kernel(module))
    same = [run for run in done if program_from_kernel(run.allocated) == program]
    if same:
        bus = same[0].printed.clone()
    elif level == "macro":
        bus = module.clone()
        ExpandBusPass().apply(ctx, bus)
        ensure_verified(_kernel(bus))
    else:
        bus = _synthesised(ctx, module, end)
    ir["bus"] = str(bus)
    return _Lowered(search, ir, _kernel(module), bus if level == "bus" else module)


def _synthesised(ctx: Context, module: ModuleOp, end: float | None) -> ModuleOp:
    """The allocated `module` at bus level: `bus-synth` as `SYNTHESIS` says, then, on a time budget with
    time left before `end`, `bus-synth` with the pass's own options (a wider beam, every deferral, no work
    limit) until `end`, the shorter kept (`_length`; each verified). The second finds what the first's
    work limit cuts off on long plans (a 30-step 7x7 Gaussian: 24 ICWs, where the first stops with the 30 of
    deferring nothing, its quick mode), and a shared value's deferral on small ones."""

    def lowered(synthesis: BusSynthPass) -> ModuleOp:
        bus = module.clone()
        synthesis.apply(ctx, bus)
        ensure_verified(_kernel(bus))
        return bus

    left = None if end is None else max(0.0, end - clock.perf_counter())
    quick = BusSynthPass(beam=SYNTHESIS.beam, defer=SYNTHESIS.defer, work=SYNTHESIS.work, time=left)
    runs = [lowered(quick)]
    if end is not None and end > clock.perf_counter():
        runs.append(lowered(BusSynthPass(time=end - clock.perf_counter())))
    return min(runs, key=lambda bus: _length(_kernel(bus)))


def _length(kernel: KernelOp, level: str = "bus") -> tuple[int, ...]:
    """What makes a program better: at bus level fewer ICWs, then fewer bus2 and bus3 (the noisiest), then
    fewer macros; at macro level fewer macros, then fewer ICWs."""
    found = kernel.counts
    if level == "macro":
        return (found["macros"], found["icws"])
    return (found["icws"], found.get("bus2", 0) + found.get("bus3", 0), found.get("macros", 0))


def _note_rival(kernel: KernelOp, rival: _Lowered, level: str) -> None:
    """Record on the printed `kernel` the counts of the other search's program (prefixed as in `SEARCHES`,
    or at macro level `ORDERS`), which the C header reports (`cain.backend.emit_c.rival_lines`)."""
    theirs = _kernel(rival.printed).counts
    search = rival.search
    prefix = ORDERS[search.traversal] if level == "macro" else SEARCHES[search.cost or "macros"][0]
    found = {
        "macros": theirs["macros"],
        "icws": theirs["icws"],
        "expansion_icws": theirs.get("expansion_icws", theirs["icws"]),
    }
    for key, value in found.items():
        kernel.attributes[f"{prefix}_{key}"] = IntegerAttr(value, 64)


def _kernel(module: ModuleOp) -> KernelOp:
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    return kernel


def compile(
    source: Any,
    *,
    registers: Sequence[str] | str | None = None,
    instruction_set: str | None = None,
    max_depth: int | None = None,
    max_error: Any = None,
    budget: int | None = None,
    time: float | None = None,
    seed: int = 0,
    workers: int | None = None,
    cost: str | None = None,
    level: str = DEFAULT_LEVEL,
    max_icws: int = KERNEL_STORE,
    **weights_options: Any,
) -> Compiled:
    """Compile one filter (see `read_filters` for the sources and `weights_options`) to verified SCAMP-5
    code: at `level` `bus` (the default) bus micro-ops optimised in ICWs, at `macro` SDK macros (see
    `compile_filter`). Without `budget` (search nodes, deterministic) or `time` (seconds), the search runs
    10 s; `workers` search processes (default `default_workers`). `max_icws`: the most ICWs of one SDK
    kernel (default the SDK's whole store); a longer program is printed as several kernels."""
    filters = read_filters(
        source,
        registers=registers,
        instruction_set=instruction_set,
        max_depth=max_depth,
        max_error=max_error,
        **weights_options,
    )
    if len(filters) != 1:
        names = ", ".join(f.name for f in filters)
        raise CainError(
            f"the source holds {len(filters)} filters ({names}); compile them with cain.compile_many"
        )
    if workers is None:
        workers = default_workers(budget)
    return compile_filter(filters[0], SearchOptions(budget, time, seed, workers, cost), level, max_icws)


# -- batches ---------------------------------------------------------------------------------------


@dataclass
class BatchItem:
    """One filter of a batch: what it came from, and its result or the error that stopped it."""

    name: str
    source: str
    compiled: Compiled | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.compiled is not None


@dataclass
class Batch:
    """The outcome of `compile_many`, in the order of its sources."""

    items: list[BatchItem] = field(default_factory=list)

    def __iter__(self) -> Iterator[BatchItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def failed(self) -> list[BatchItem]:
        return [i for i in self.items if not i.ok]

    def c(self) -> str:
        """One C++ file with the function of every compiled filter."""
        return emit_module([]) + "\n".join(i.compiled.function + "\n" for i in self.items if i.compiled)

    def rows(self) -> list[dict[str, object]]:
        """The summary table: one row per filter."""
        rows: list[dict[str, object]] = []
        for item in self.items:
            done = item.compiled
            errors = done.errors if done else {}
            rows.append(
                {
                    "filter": item.name,
                    "source": item.source,
                    "kernels": len(errors) if done else "",
                    "depth": done.depth if done else "",
                    "macros": done.macros if done else "",
                    "icws": done.icws if done else "",
                    "approx error": f"{float(sum(errors.values(), Fraction(0))):.4g}" if done else "",
                    "seconds": f"{done.seconds:.2f}" if done else "",
                    "status": "verified" if done else (item.error or "").splitlines()[0],
                }
            )
        return rows

    def table(self) -> str:
        """The summary as a Markdown table."""
        rows = self.rows()
        head = list(rows[0]) if rows else ["filter"]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(str(r[h]).replace("|", "/") for h in head) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    def write(self, c_path: str | Path, table_path: str | Path | None = None) -> None:
        """Write the C file and the summary table (CSV for a `.csv` path, else Markdown)."""
        Path(c_path).write_text(self.c())
        if table_path is not None:
            path = Path(table_path)
            if path.suffix == ".csv":
                with path.open("w", newline="") as out:
                    rows = self.rows()
                    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["filter"])
                    writer.writeheader()
                    writer.writerows(rows)
            else:
                path.write_text(self.table())


KERNEL_FILES = (".cain", ".json")
"""What a directory given to `compile_many` stands for: the kernel files in it."""

ONNX_OPTIONS = ("outputs_per_filter", "bias")
"""Options for ONNX models only, which a batch passes to its models and not to its other sources."""


def expand_sources(sources: Iterable[Any], **options: Any) -> list[BatchItem | tuple[str, Filter]]:
    """Every filter the sources hold, in order, a directory standing for its kernel files; a source that
    cannot be read becomes a failed `BatchItem`. Filter names are made unique (`name_2`, ...)."""
    expanded: list[BatchItem | tuple[str, Filter]] = []
    seen: dict[str, int] = {}
    for index, source in enumerate(sources):
        if isinstance(source, str | os.PathLike) and Path(source).is_dir():
            files = sorted(p for p in Path(source).iterdir() if p.suffix in KERNEL_FILES)
            if not files:
                expanded.append(
                    BatchItem(str(source), str(source), error=f"error: '{source}' holds no kernel file")
                )
            expanded += expand_sources(files, **options)
            continue
        label = str(source) if isinstance(source, str | os.PathLike) else f"source {index}"
        try:
            named = dict(options)
            if isinstance(source, str | os.PathLike) and Path(source).suffix != ".onnx":
                named = {k: v for k, v in named.items() if k not in ONNX_OPTIONS}
            if not isinstance(source, str | os.PathLike | Filter):
                named.setdefault("name", f"filter{index}")
            filters = read_filters(source, **named)
        except CainError as e:
            name = Path(label).stem if isinstance(source, str | os.PathLike) else f"filter{index}"
            expanded.append(BatchItem(name, label, error=str(e)))
            continue
        for filt in filters:
            count = seen.get(filt.name, 0) + 1
            seen[filt.name] = count
            expanded.append((label, filt if count == 1 else replace(filt, name=f"{filt.name}_{count}")))
    return expanded


def _compile_job(filt: Filter, search: SearchOptions, level: str, max_icws: int) -> Compiled:
    return compile_filter(filt, search, level, max_icws)


def compile_many(
    sources: Iterable[Any],
    *,
    executor: Executor | None = None,
    jobs: int | None = None,
    progress: bool | None = None,
    budget: int | None = None,
    time: float | None = None,
    seed: int = 0,
    workers: int = 1,
    cost: str | None = None,
    level: str = DEFAULT_LEVEL,
    max_icws: int = KERNEL_STORE,
    on_done: Callable[[BatchItem], None] | None = None,
    **options: Any,
) -> Batch:
    """Compile every filter of `sources` (paths, directories, models, weights; `options` as for
    `read_filters`) in parallel: on `executor` (any `concurrent.futures.Executor`, e.g. a Dask client's
    `get_executor()`), else on `jobs` local processes (default: every core). A filter that fails is
    reported with its error in the result and does not stop the others. `progress`: a tqdm bar on
    stderr (default: when stderr is a terminal). `level` and `max_icws` as for `compile`."""
    check_level(level)
    check_max_icws(max_icws)
    search = SearchOptions(budget, time, seed, workers, cost)
    items = expand_sources(sources, **options)
    batch = Batch([i if isinstance(i, BatchItem) else BatchItem(i[1].name, i[0]) for i in items])
    todo = [(k, item[1]) for k, item in enumerate(items) if not isinstance(item, BatchItem)]
    own = executor is None and len(todo) > 1 and (jobs or os.cpu_count() or 1) > 1
    pool: Executor | None = ProcessPoolExecutor(jobs or os.cpu_count()) if own else executor
    bar = tqdm(total=len(todo), desc="compiling", unit="filter", disable=not _show(progress), leave=False)
    try:
        futures: dict[Future, int] = {}
        for k, filt in todo:
            if pool is None:
                _finish(
                    batch.items[k],
                    lambda filt=filt: compile_filter(filt, search, level, max_icws),
                    bar,
                    on_done,
                )
            else:
                futures[pool.submit(_compile_job, filt, search, level, max_icws)] = k
        for future in as_completed(futures):
            _finish(batch.items[futures[future]], future.result, bar, on_done)
    finally:
        bar.close()
        if own and pool is not None:
            pool.shutdown()
    return batch


def _finish(item: BatchItem, result: Callable[[], Compiled], bar: tqdm, on_done) -> None:
    """Record one filter's result or error (any error: one filter must not stop the batch)."""
    try:
        item.compiled = result()
    except CainError as e:
        item.error = str(e)
    except Exception as e:  # noqa: BLE001 (a crash in one filter's compilation is reported with it)
        item.error = f"error: {type(e).__name__}: {e}"
    bar.update()
    if on_done is not None:
        on_done(item)


def _show(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else progress
