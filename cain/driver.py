"""`cain`: the command for people (as `clang` beside `opt`; `cain-opt` stays the IR tool).

cain k.cain -o k.c                     compile one filter to verified C (bus level; --level macro for SDK
                                       macros); counts and error on stderr
cain batch DIR|FILE... -o all.c        compile many filters in parallel, one C file and a summary table
cain picture k.cain -o k.png           the kernels, as written and approximated, and the program on a photo
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from pathlib import Path

from cain.api import DEFAULT_LEVEL, DEFAULT_WORKERS, OUTPUT_LEVELS, Batch, Compiled, compile, compile_many
from cain.backend.split import KERNEL_STORE
from cain.cli import add_override_arguments, overrides_from_args
from cain.diagnostics import CainError
from cain.model.approx import format_fraction
from cain.pictures import DEFAULT_NOISE, SAMPLE_IMAGES, picture, require_pictures
from cain.search.config import DEFAULT_TIME


def _search_arguments(parser: argparse.ArgumentParser, workers: int | None) -> None:
    group = parser.add_argument_group("search")
    group.add_argument("--budget", type=int, metavar="N", help="stop after N search nodes (deterministic)")
    group.add_argument(
        "--time", type=float, metavar="S", help=f"search for S seconds (default {DEFAULT_TIME:g})"
    )
    group.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    group.add_argument(
        "--workers",
        type=int,
        default=workers,
        help=f"search processes per filter (default {DEFAULT_WORKERS}, or 1 with --budget; with two or "
        "more on a time budget, the searches in ICWs and in macros run side by side)"
        if workers is None
        else f"search processes per filter (default {workers})",
    )
    group.add_argument(
        "--cost",
        choices=("macros", "icws"),
        help="what the search minimises (default: at bus level both, the program of fewer ICWs kept; "
        "at macro level macros, in two traversal orders side by side on two workers)",
    )
    parser.add_argument(
        "--level",
        choices=OUTPUT_LEVELS,
        default=DEFAULT_LEVEL,
        help=f"the C: bus micro-ops optimised in ICWs, or the SDK's macros (default {DEFAULT_LEVEL})",
    )
    parser.add_argument(
        "--max-icws",
        type=int,
        default=KERNEL_STORE,
        metavar="N",
        help=f"the most ICWs of one SDK kernel; a longer program is printed as several kernels, one after the "
        f"other (default {KERNEL_STORE}, the SDK's whole ICW store; lower it to leave room for the host's "
        "own kernels)",
    )
    add_override_arguments(parser)


def _search_options(args: argparse.Namespace) -> dict[str, object]:
    time = args.time if args.time is not None or args.budget is not None else DEFAULT_TIME
    return {
        "budget": args.budget,
        "time": time,
        "seed": args.seed,
        "workers": args.workers,
        "cost": args.cost,
        "level": args.level,
        "max_icws": args.max_icws,
        **overrides_from_args(args),
    }


def summary(result: Compiled) -> str:
    """`gauss3x3: 8 ICWs at bus level (10 macros, 32 ICWs expanded), depth 4; approximation error blur 0;
    verified`, or at macro level `gauss3x3: 10 macros, 32 ICWs, depth 4; ...`."""
    errors = ", ".join(f"{k} {format_fraction(e)} (~{float(e):.3g})" for k, e in result.errors.items())
    length = f"{result.macros} macros, {result.icws} ICWs"
    if result.micro_ops is not None:
        length = (
            f"{result.icws} ICWs at bus level ({result.macros} macros, {result.program.icws} ICWs expanded)"
        )
    if result.superpixel is not None:
        sp = result.superpixel
        converted = sp.superpixel.adc or sp.superpixel.dac
        extra = (
            f" (ADC / DAC: {sp.analogue[0]} analogue calls, {sp.analogue[1]} scamp5_in)" if converted else ""
        )
        return (
            f"{result.name}: {result.icws} ICWs and {sp.loads} pattern loads on "
            f"{sp.layout.width}x{sp.layout.height} superpixels{extra} ({result.macros} "
            f"macros), depth {result.depth}; approximation error {errors}; verified bit for bit in the DREG simulator"
            + (" with the ideal analogue model" if converted else "")
        )
    return (
        f"{result.name}: {length}, depth {result.depth}; "
        f"approximation error {errors}; verified (symbolically and in the simulator)"
    )


def _parser(prog: str, description: str, inputs: str, output: str, *, required: bool = True):
    """A parser taking the inputs (`inputs`: `input` or `inputs...`), `-o FILE` and the search options (one
    filter: `cain.api.default_workers`; a batch runs its filters in parallel instead, one process each)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    if inputs == "inputs":
        parser.add_argument("inputs", nargs="+", help="kernel files, directories of them, models")
    else:
        parser.add_argument("input", help="the filter: a file, or - for a kernel file's text on stdin")
    parser.add_argument("-o", "--output", metavar="FILE", required=required, help=output)
    _search_arguments(parser, None if inputs == "input" else 1)
    return parser


def _compile_parser() -> argparse.ArgumentParser:
    description = (
        "Compile a filter (.cain, .json, .mlir with one convolution, .onnx with one conv layer) to verified C "
        "for the SCAMP-5d SDK: by default bus micro-ops, optimised in ICWs (the searches in ICWs and in "
        "macros, side by side on two workers, get 75% of the time and the bus-level synthesis of their plans "
        "the rest; the program of fewer ICWs is printed); --level macro prints the "
        "SDK's macros (the search in macros, on two workers in two orders side by side, the program of fewer "
        "macros printed). Subcommands: `cain batch ...` compiles many filters, `cain picture ...` draws "
        "what a filter does (see `cain batch --help`, `cain picture --help`)."
    )
    return _parser("cain", description, "input", "write the C here (default: stdout)", required=False)


def _batch_parser() -> argparse.ArgumentParser:
    description = (
        "Compile every filter of the given files and directories (and every conv layer of .onnx / .mlir "
        "models) in parallel; write one C file and a summary table. A filter that fails is listed with its "
        "error; the others are compiled all the same (exit status 1 if any failed)."
    )
    parser = _parser("cain batch", description, "inputs", "the C file to write")
    parser.add_argument(
        "--table", metavar="FILE", help="the summary table (.csv or Markdown; default: stdout)"
    )
    parser.add_argument("-j", "--jobs", type=int, help="local processes (default: every core)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a Dask distributed scheduler (cain[cluster])")
    parser.add_argument(
        "--outputs-per-filter", type=int, metavar="N", help="split wider conv layers of models"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _picture_parser() -> argparse.ArgumentParser:
    description = (
        "Compile a filter and draw, as PNG, its kernels as written and as approximated, and the program run "
        "on a photograph in the SCAMP-5 model (with and without noise) beside the exact convolution. Needs "
        "cain[pictures] (matplotlib, scikit-image)."
    )
    parser = _parser("cain picture", description, "input", "the PNG file to write")
    parser.add_argument(
        "--image", choices=SAMPLE_IMAGES, default="camera", help="scikit-image's sample photo"
    )
    parser.add_argument(
        "--noise", type=float, default=DEFAULT_NOISE, help=f"per bus transfer ({DEFAULT_NOISE})"
    )
    return parser


def _compiled(args: argparse.Namespace) -> Compiled:
    """`compile` of the input with the search options: the named file, or with `-` a kernel file's text
    read from stdin (its errors named `<stdin>`)."""
    options = _search_options(args)
    if args.input != "-":
        return compile(Path(args.input), **options)
    text = sys.stdin.read()
    # ended by a newline, text is never taken for a file's name (`cain.api.read_filters`)
    return compile(text if text.endswith("\n") else text + "\n", name="<stdin>", **options)


def _run_compile(argv: list[str]) -> int:
    args = _compile_parser().parse_args(argv)
    result = _compiled(args)
    if args.output:
        Path(args.output).write_text(result.c)
    else:
        sys.stdout.write(result.c)
    print(summary(result), file=sys.stderr)
    return 0


@contextmanager
def _executor(address: str | None) -> Iterator[Executor | None]:
    """A Dask client's executor while the batch runs (None: local processes)."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client  # an optional extra: cain[cluster]
    except ImportError:
        raise CainError("--scheduler needs Dask distributed: pip install 'cain[cluster]'") from None
    try:
        client = Client(address, timeout=30)
    except OSError as e:
        raise CainError(f"--scheduler: cannot reach the Dask scheduler at {address}: {e}") from None
    with client:
        yield client.get_executor()


def _run_batch(argv: list[str]) -> int:
    args = _batch_parser().parse_args(argv)
    with _executor(args.scheduler) as executor:
        batch: Batch = compile_many(
            [Path(source) for source in args.inputs],
            executor=executor,
            jobs=args.jobs,
            progress=False if args.no_progress else None,
            outputs_per_filter=args.outputs_per_filter,
            **_search_options(args),
        )
    batch.write(args.output, args.table)
    if args.table is None:
        sys.stdout.write(batch.table())
    done = len(batch) - len(batch.failed)
    print(f"cain batch: {done} of {len(batch)} filters compiled into {args.output}", file=sys.stderr)
    for item in batch.failed:
        print(f"{item.name}: {item.error}", file=sys.stderr)
    return 1 if batch.failed else 0


def _run_picture(argv: list[str]) -> int:
    args = _picture_parser().parse_args(argv)
    require_pictures()
    result = _compiled(args)
    picture(result, args.output, image=args.image, noise=args.noise)
    print(summary(result), file=sys.stderr)
    print(f"cain picture: wrote {args.output}", file=sys.stderr)
    return 0


COMMANDS = {"batch": _run_batch, "picture": _run_picture}


def main(argv: Sequence[str] | None = None) -> int:
    """Runs `cain` on `argv`; returns the exit status (1: an error in the input, 2: bad usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run = COMMANDS.get(argv[0], _run_compile) if argv else _run_compile
    try:
        return run(argv[1:] if run is not _run_compile else argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except CainError as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:
        print(f"cain: error: {e.strerror or e}: '{e.filename}'", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
