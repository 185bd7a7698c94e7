"""C is an output target, registered as xDSL registers its own: `cain-opt -t c`, a pipeline ending in
`emit`, plain `xdsl-opt -t c` and `cain.compile` print the same verified C."""

import subprocess
import sys
from pathlib import Path

import pytest
from cain.dialects import get_all_dialects

from cain import api, cli, passes
from cain.backend.emit_c import CTarget
from cain.universe import CAIN_UNIVERSE

KERNEL = Path(__file__).parents[1] / "filecheck" / "emit" / "target_c.mlir"
SEARCH = "search{budget=300 quiet=true}"


def cain_opt(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def test_one_registry_for_cain_opt_the_library_and_xdsl():
    assert {name: factory() for name, factory in passes.get_all_targets().items()} == {"c": CTarget}
    assert list(CAIN_UNIVERSE.all_targets) == ["c"] and CAIN_UNIVERSE.all_targets["c"]() is CTarget
    assert list(CAIN_UNIVERSE.all_dialects) == list(get_all_dialects()) == ["goal", "scamp5", "dreg"]
    assert "emit" not in passes.get_all_passes()  # a spelling of the target, not a pass


@pytest.mark.slow
def test_emit_and_dash_t_c_print_the_same_c(capsys, tmp_path):
    source = tmp_path / "blur.cain"
    source.write_text("filter blur\ninput A\noutput b -> B = 1/4 [1 2 1]\n")
    by_target = cain_opt(capsys, str(source), "-p", f"{SEARCH},regalloc", "-t", "c")
    by_emit = cain_opt(capsys, str(source), "-p", f"{SEARCH},regalloc,emit")
    assert by_target == by_emit and "void blur(void) {" in by_target
    compiled = api.compile(source, budget=300, level="macro")
    assert compiled.c == by_target  # the library prints through the same target


def test_xdsl_opt_prints_c_with_dash_t_c(capsys):
    xdsl_opt = Path(sys.executable).parent / "xdsl-opt"
    if not xdsl_opt.exists():
        pytest.skip("no xdsl-opt beside this Python")
    done = subprocess.run(
        [str(xdsl_opt), str(KERNEL), "-p", "regalloc", "-t", "c"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == cain_opt(capsys, str(KERNEL), "-p", "regalloc", "-t", "c")
    assert "add(A, D, C, B);" in done.stdout
