"""`cain-opt`: xDSL's opt driver with Cain's dialects, passes and the `.cain` kernel front end."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException, VerifyException
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


def load(spec: str):
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


class CainOptMain(xDSLOptMain):
    version_format = "cain-opt (xDSL {xdsl_version})"

    def register_all_dialects(self):
        from xdsl.dialects.builtin import Builtin

        self.ctx.load_dialect(Builtin)
        for name, spec in DIALECTS.items():
            self.ctx.register_dialect(name, lambda spec=spec: load(spec))

    def register_all_passes(self):
        for name, spec in PASSES.items():
            self.register_pass(name, lambda spec=spec: load(spec))

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_cain(io: IO[bytes]) -> ModuleOp:
            from cain.frontend import lower_source

            return lower_source(io.read().decode(), self.get_input_name(), self.frontend_overrides())

        self.available_frontends["cain"] = parse_cain

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        from cain.frontend import add_override_arguments

        # `--pass-pipeline` is the MLIR spelling of xDSL's `-p/--passes`
        arg_parser.add_argument("--pass-pipeline", dest="passes", help=argparse.SUPPRESS)
        add_override_arguments(arg_parser)

    def frontend_overrides(self) -> dict[str, object]:
        from cain.frontend import overrides_from_args

        return overrides_from_args(self.args)


def pass_help() -> str:
    """One paragraph per pass: its name, summary and options (for `--help`)."""
    import dataclasses

    lines = ["passes (run in the order given, e.g. -p search,regalloc,emit):"]
    for name, spec in PASSES.items():
        try:
            cls: type[ModulePass] = load(spec)
        except ImportError:
            continue
        doc = (cls.__doc__ or "").strip().splitlines()
        lines.append(f"  {name:<11} {doc[0] if doc else ''}")
        for f in dataclasses.fields(cls):
            if f.name == "name":
                continue
            default = f.default if f.default is not dataclasses.MISSING else None
            meta = f.metadata.get("help", "") if f.metadata else ""
            lines.append(f"      {f.name.replace('_', '-')}={default!s:<10} {meta}")
    lines.append("pass options: -p 'search{budget=20000 seed=1},regalloc,emit'")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        _print_help(argv)
        return 0
    try:
        CainOptMain(description=DESCRIPTION, args=argv).run()
    except CainError as e:
        print(e, file=sys.stderr)
        return 1
    except (ParseError, VerifyException, DiagnosticException, PassFailedException) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as e:
        print(f"cain-opt: error: {e}", file=sys.stderr)
        return 1
    return 0


DESCRIPTION = """Compile convolution kernels (.cain files) into SCAMP-5 code, or run Cain's passes on IR.
With no pipeline, a .cain file is printed as goal IR. The usual pipeline is
  cain-opt kernel.cain -p search,regalloc,emit"""


def _print_help(argv: list[str]) -> None:
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


def run(argv: Sequence[str]) -> int:
    """Entry point for tests: like the command line, returns the exit status."""
    return main(argv)


if __name__ == "__main__":
    sys.exit(main())
