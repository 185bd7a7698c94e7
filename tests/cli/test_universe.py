"""Plain `xdsl-opt` finds Cain's dialects and passes through the `xdsl.universe` entry point, and
`cain-opt --help` lists only Cain's passes."""

import re
import subprocess
import sys
from pathlib import Path

from cain import cli, passes
from cain.universe import CAIN_UNIVERSE

MODEL = Path(__file__).parents[1] / "filecheck" / "convert-linalg-to-goal" / "nchw.mlir"


def xdsl_opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "xdsl-opt"), *args], capture_output=True, text=True, check=False
    )


def test_the_universe_holds_cains_dialects_and_passes():
    assert set(CAIN_UNIVERSE.all_dialects) == {"goal", "scamp5", "dreg"}
    assert list(CAIN_UNIVERSE.all_passes) == [p.name for p in passes.PASSES]
    assert list(CAIN_UNIVERSE.all_targets) == ["c"]


def test_xdsl_opt_lists_and_runs_cains_passes():
    listed = xdsl_opt("--help")
    assert listed.returncode == 0
    listing = "".join(listed.stdout.split())  # argparse wraps the list of passes anywhere
    for name in ("search", "regalloc", "expand-bus", "convert-linalg-to-goal"):
        assert re.search(rf"(?<![\w-]){name}(?![\w-])", listing), name
    done = xdsl_opt(
        str(MODEL), "-p", "convert-linalg-to-goal,search{budget=100 quiet=true},regalloc,expand-bus,verify"
    )
    assert done.returncode == 0, done.stderr
    assert "scamp5.kernel @net_conv0" in done.stdout and "scamp5.bus" in done.stdout


def test_cain_opt_help_lists_only_cains_passes(capsys):
    assert cli.main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "convert-linalg-to-goal" in text and "canonicalize" not in text and "riscv" not in text
