"""`cain-opt`: xDSL's opt driver with Cain's dialects, passes and the `.cain` kernel front end."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from cain.diagnostics import CainError

DIALECTS: dict[str, str] = {
    "goal": "cain.dialects.goal:GoalDialect",
    "scamp5": "cain.dialects.scamp5:Scamp5",
}
"""Dialect name -> `module:Dialect object`, imported when first needed."""

PASSES: dict[str, str] = {
    "search": "cain.passes.search:SearchPass",
    "regalloc": "cain.passes.regalloc:RegallocPass",
    "expand-bus": "cain.passes.expand_bus:ExpandBusPass",
    "verify": "cain.passes.verify:VerifyPass",
    "emit": "cain.passes.emit:EmitPass",
}
"""Pass name (as on the command line) -> `module:ModulePass class`, in pipeline order."""

DESCRIPTION = """Compile convolution kernels (.cain files) into SCAMP-5 code, or run Cain's passes on IR.
With no pipeline, a .cain file is printed as goal IR. The usual pipeline is
  cain-opt kernel.cain --pass-pipeline=search,regalloc,emit"""


def load(spec: str):
    """The object a `module:name` spec names."""
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def _pass_loader(name: str, spec: str):
    def factory() -> type[ModulePass]:
        try:
            return load(spec)
        except ImportError as e:
            raise CainError(f"pass '{name}' is not available in this installation ({e})") from None

    return factory


class CainOptMain(xDSLOptMain):
    """xDSL's opt driver with Cain's dialects and passes, the kernel-file readers and located errors."""

    version_format = "cain-opt (xDSL {xdsl_version})"

    def register_all_dialects(self):
        from xdsl.dialects.builtin import Builtin

        self.ctx.load_dialect(Builtin)
        for name, spec in DIALECTS.items():
            self.ctx.register_dialect(name, lambda spec=spec: load(spec))

    def register_all_passes(self):
        for name, spec in PASSES.items():
            self.register_pass(name, _pass_loader(name, spec))

    def register_all_frontends(self):
        super().register_all_frontends()

        for extension, module in (("cain", "cain.frontend"), ("json", "cain.frontend_json")):
            self.available_frontends[extension] = self._kernel_reader(module)

    def _kernel_reader(self, module: str):
        """A front end reading a kernel file with `module.lower_source` (imported on first use)."""

        def parse(io: IO[bytes]) -> ModuleOp:
            lower_source = importlib.import_module(module).lower_source
            return lower_source(io.read().decode(), self.get_input_name(), self.frontend_overrides())

        return parse

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        from cain.frontend import add_override_arguments

        arg_parser.add_argument(
            "--pass-pipeline", dest="passes", metavar="PASSES", help="the same as -p (MLIR's spelling)"
        )
        add_override_arguments(arg_parser)

    def setup_pipeline(self):
        """The pass pipeline, with user errors (unknown pass, bad pass options) as `CainError`s."""
        try:
            names = [spec.name for spec in parse_pipeline(self.args.passes)]
        except ArgSpecParseError as e:
            raise CainError(f"bad pass pipeline '{self.args.passes}':\n{_indent(str(e))}") from None
        for name in names:
            if name not in self.available_passes:
                raise CainError(
                    f"unknown pass '{name}' (available passes: {', '.join(self.available_passes)})"
                )
        try:
            super().setup_pipeline()
        except ArgSpecParseError as e:
            raise CainError(f"bad pass pipeline '{self.args.passes}':\n{_indent(str(e))}") from None
        except (ValueError, TypeError) as e:
            raise CainError(f"bad pass options in '{self.args.passes}': {e} (see cain-opt --help)") from None

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

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """The C text when the pipeline ended with `emit` (and no other target was asked for), else IR."""
        from cain.passes.emit import emitted_text

        text = emitted_text(prog)
        if text is not None and self.args.target == "mlir":
            return text
        return super().output_resulting_program(prog)

    def frontend_overrides(self) -> dict[str, object]:
        from cain.frontend import overrides_from_args

        return overrides_from_args(self.args)


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
    """One paragraph per available pass: its name, summary and options (for `--help`)."""
    lines = ["passes (run in the order given, e.g. --pass-pipeline=search,regalloc,emit):"]
    for name, spec in PASSES.items():
        try:
            cls: type[ModulePass] = load(spec)
        except ImportError:
            continue
        doc = (cls.__doc__ or "").strip().splitlines()
        lines.append(f"  {name:<11} {doc[0] if doc else ''}")
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
    lines.append("pass options go in braces: -p 'NAME{OPTION=VALUE OPTION=VALUE},NAME'")
    return "\n".join(lines)


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
