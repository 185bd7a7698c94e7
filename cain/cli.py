"""`cain-opt`: xDSL's opt driver with Cain's dialects, passes and the `.cain` kernel front end."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import os
import sys
import textwrap
from collections.abc import Sequence
from types import ModuleType
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.universe import Universe
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline, parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from cain.backend.emit_c import CTarget
from cain.diagnostics import CainError
from cain.dialects import register_dialects
from cain.frontend import READERS
from cain.frontend.options import CHECKS, DEFAULT_INSTRUCTION_SET, DEFAULT_MAX_DEPTH, OVERRIDE_KEYS
from cain.model.isa import DEFAULT_REGISTERS, INSTRUCTION_SETS
from cain.passes import EMIT, get_all_passes, get_all_targets

DESCRIPTION = """Compile convolution kernels (.cain files) into SCAMP-5 code, or run Cain's passes on IR.
With no pipeline, a .cain file is printed as goal IR. The usual pipeline is
  cain-opt kernel.cain --pass-pipeline=search,regalloc,emit
which prints C (`emit` ending a pipeline is the C target: the same as -t c)."""


class CainOptMain(xDSLOptMain):
    """xDSL's opt driver with Cain's dialects, passes and C target, the kernel-file readers and located
    errors."""

    version_format = "cain-opt (xDSL {xdsl_version})"

    def register_all_dialects(self):
        register_dialects(self.ctx)

    def register_all_passes(self):
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_frontends(self):
        super().register_all_frontends()
        for extension, reader in READERS.items():
            self.available_frontends[extension] = self._kernel_reader(reader)

    def _kernel_reader(self, reader: ModuleType):
        """A front end reading a kernel file with `reader.lower_source`."""

        def parse(io: IO[bytes]) -> ModuleOp:
            return reader.lower_source(io.read().decode(), self.get_input_name(), self.frontend_overrides())

        return parse

    def register_all_targets(self):
        """The IR printer and Cain's C: xDSL's other targets (assembly, WGSL, ...) have nothing to print of
        a scamp5 kernel."""
        self.available_targets["mlir"] = Universe.get_multiverse().all_targets["mlir"]
        self.available_targets.update(get_all_targets())

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--pass-pipeline", dest="passes", metavar="PASSES", help="the same as -p (MLIR's spelling)"
        )
        add_override_arguments(arg_parser)

    def setup_pipeline(self):
        """The pass pipeline, with user errors (unknown pass, bad pass options) as `CainError`s; `emit`
        ending it becomes the C target, with its options."""
        try:
            specs = list(parse_pipeline(self.args.passes))
        except ArgSpecParseError as e:
            raise CainError(f"bad pass pipeline '{self.args.passes}':\n{_indent(str(e))}") from None
        target = self.args.target
        if specs and specs[-1].name == EMIT:
            target = str(specs[-1])
            self.args.target = str(ArgSpec(CTarget.name, specs[-1].parameters))
            specs.pop()
            self.args.passes = ",".join(map(str, specs))
        names = [spec.name for spec in specs]
        if EMIT in names:
            raise CainError(f"{EMIT} prints the C, so it ends the pipeline (or print C with -t c)")
        for name in names:
            if name not in self.available_passes:
                raise CainError(
                    f"unknown pass '{name}' (available passes: {', '.join([*self.available_passes, EMIT])})"
                )
        try:
            super().setup_pipeline()
        except ArgSpecParseError as e:
            raise CainError(f"bad pass pipeline '{self.args.passes}':\n{_indent(str(e))}") from None
        except (ValueError, TypeError) as e:
            raise CainError(f"bad pass options in '{self.args.passes}': {e} (see cain-opt --help)") from None
        try:
            spec = parse_spec(self.args.target)
            self.available_targets[spec.name]().from_spec(spec)
        except (ArgSpecParseError, ValueError, TypeError) as e:
            raise CainError(f"bad target options in '{target}': {e} (see cain-opt --help)") from None

    def prepare_input(self):
        """Checks the input file before xDSL opens it, so a wrong path or type is a one-line error."""
        path = self.args.input_file
        if path is not None:
            if not os.path.exists(path):
                raise CainError(f"cannot read '{path}': no such file")
            if os.path.isdir(path):
                raise CainError(f"cannot read '{path}': it is a directory")
            extension = os.path.splitext(path)[1].lstrip(".")
            if not self.args.frontend and extension not in self.available_frontends:
                kinds = ", ".join(f".{k}" for k in self.available_frontends)
                raise CainError(
                    f"cannot read '{path}': unknown file type '.{extension}' (expected one of {kinds}, "
                    "or choose a reader with --frontend)"
                )
        chunks, file_extension = super().prepare_input()
        if file_extension not in ("cain", "json") and self.frontend_overrides():
            for chunk, _ in chunks:
                chunk.close()
            given = ", ".join(f"--{k.replace('_', '-')}" for k in self.frontend_overrides())
            raise CainError(
                f"{given}: only for kernel files (.cain, .json); IR input already holds its approximated goals "
                "(recompile the kernel file with the option instead)"
            )
        return chunks, file_extension

    def frontend_overrides(self) -> dict[str, object]:
        return overrides_from_args(self.args)


# -- command line ----------------------------------------------------------------------------------


def _arg_type(check):
    def convert(text: str):
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = check.__name__.removeprefix("check_")
    return convert


def add_override_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line options that override a kernel file's `option` lines (`--max-depth` for the
    override key `max_depth`), checked as the file's options are."""
    group = parser.add_argument_group("kernel file options (override the file's `option` lines)")
    for key, option in OVERRIDE_KEYS.items():
        metavar, text = _OVERRIDE_HELP[key]
        group.add_argument(
            f"--{key.replace('_', '-')}", type=_arg_type(CHECKS[option]), metavar=metavar, help=text
        )


_OVERRIDE_HELP = {
    "max_depth": ("N", f"largest approximation depth (default {DEFAULT_MAX_DEPTH})"),
    "max_error": ("X", "largest total approximation error, e.g. 0 or 1/64 (default 0)"),
    "registers": ("A,B,...", f"the register file (default {','.join(DEFAULT_REGISTERS)})"),
    "instruction_set": ("|".join(INSTRUCTION_SETS), f"instruction set (default {DEFAULT_INSTRUCTION_SET})"),
}
"""Override key -> the metavar and help text of its command-line option."""


def overrides_from_args(args: argparse.Namespace) -> dict[str, object]:
    """The overrides given on the command line (absent ones are left out)."""
    return {key: getattr(args, key) for key in OVERRIDE_KEYS if getattr(args, key, None) is not None}


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def option_docs(cls: type) -> dict[str, str]:
    """Each pass option's help: the string literal written under its field, as for any attribute."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0]
        except (OSError, TypeError, SyntaxError):
            continue
        if not isinstance(body, ast.ClassDef):
            continue
        for field, doc in zip(body.body, body.body[1:]):
            if (
                isinstance(field, ast.AnnAssign)
                and isinstance(field.target, ast.Name)
                and isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                docs[field.target.id] = " ".join(doc.value.value.split())
    return docs


def pass_help() -> str:
    """One paragraph per available pass and target: its name, summary and options (for `--help`)."""
    lines = ["passes (run in the order given, e.g. --pass-pipeline=search,regalloc,emit):"]
    for name, factory in get_all_passes().items():
        lines += _paragraph(name, factory())
    lines.append(f"  {EMIT:<11} Print C: ending a pipeline, the same as -t c (with the options of c)")
    lines.append("pass options go in braces: -p 'NAME{OPTION=VALUE OPTION=VALUE},NAME'")
    lines.append("targets (-t, --target; default mlir, the IR):")
    for name, factory in get_all_targets().items():
        lines += _paragraph(name, factory())
    return "\n".join(lines)


def _paragraph(name: str, cls: type) -> list[str]:
    """A pass's or target's name, summary and options."""
    doc = (cls.__doc__ or "").strip().splitlines()
    lines = [f"  {name:<11} {doc[0] if doc else ''}"]
    docs = option_docs(cls)
    for f in dataclasses.fields(cls):
        if f.name == "name":
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = "(required)"
        option = f"{f.name.replace('_', '-')}={default!s}"
        lines.append(f"      {option:<24} {docs.get(f.name, '')}".rstrip())
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Runs `cain-opt` on `argv`; returns the exit status (1: an error in the input, 2: bad usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        _print_help()
        return 0
    try:
        CainOptMain(description=DESCRIPTION, args=argv).run()
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except CainError as e:
        print(e, file=sys.stderr)
        return 1
    except (ParseError, VerifyException, DiagnosticException, PassFailedException) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"cain-opt: error: {e.strerror or e}: '{e.filename}'", file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print("cain-opt: error: the input is not UTF-8 text", file=sys.stderr)
        return 1
    return 0


def _print_help() -> None:
    """`--help` without parsing the other arguments: the driver's options and every pass's options."""
    parser = argparse.ArgumentParser(
        prog="cain-opt",
        description=DESCRIPTION,
        epilog=pass_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tool = CainOptMain.__new__(CainOptMain)
    tool.available_frontends, tool.available_passes, tool.available_targets = {}, {}, {}
    tool.register_all_frontends()
    tool.register_all_passes()
    tool.register_all_targets()
    tool.register_all_arguments(parser)
    parser.print_help()


if __name__ == "__main__":
    sys.exit(main())
