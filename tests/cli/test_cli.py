"""`cain-opt`: the .cain front end, IR input, overrides, --help, --version, and one-line errors."""

from dataclasses import dataclass
from pathlib import Path

import pytest
from cain.dialects.goal import FilterOp, filter_from_op
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cain import cli, passes
from cain.frontend.kernel import parse_filter

EXAMPLES = Path(__file__).parents[2] / "examples"
GAUSS = str(EXAMPLES / "gauss3x3.cain")


@dataclass(frozen=True)
class RenamePass(ModulePass):
    """Renames every filter (a stand-in pass with options, for testing the driver)."""

    name = "rename"
    to: str = "renamed"
    """The new name, repeated
    `times` times."""
    times: int = 1

    def apply(self, ctx, op: ModuleOp) -> None:
        for filter_op in op.walk():
            if isinstance(filter_op, FilterOp):
                filter_op.sym_name = type(filter_op.sym_name)(self.to * self.times)


@pytest.fixture
def rename_pass(monkeypatch):
    monkeypatch.setattr(passes, "PASSES", (*passes.PASSES, RenamePass))


def run(capsys, *argv):
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cain_file_prints_goal_ir(capsys):
    status, out, err = run(capsys, GAUSS)
    assert status == 0 and err == ""
    assert 'goal.filter @gauss3x3 depth 4 registers ["A", "B", "C", "D", "E", "F"] instructions "all"' in out
    assert "goal #goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]> error 0" in out


def test_saved_ir_is_read_back(capsys, tmp_path):
    status, out, _ = run(capsys, str(EXAMPLES / "analognet2.cain"))
    saved = tmp_path / "analognet2.mlir"
    saved.write_text(out)
    status, again, _ = run(capsys, str(saved))
    assert status == 0 and again == out


def test_output_file_and_overrides(capsys, tmp_path):
    target = tmp_path / "out.mlir"
    argv = [
        GAUSS,
        "-o",
        str(target),
        "--registers",
        "A,B,C",
        "--instruction-set",
        "basic",
        "--max-depth",
        "6",
    ]
    status, out, err = run(capsys, *argv)
    assert status == 0 and out == "" and err == ""
    from cain.dialects.goal import GoalDialect
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(GoalDialect)
    (op,) = Parser(ctx, target.read_text()).parse_module().ops
    f = filter_from_op(op)
    assert f.registers == ("A", "B", "C") and f.instruction_set == "basic" and f.depth == 4
    assert f.kernels == parse_filter(Path(GAUSS).read_text(), GAUSS).kernels


def test_pass_pipeline_runs_passes_with_options(capsys, rename_pass):
    status, out, _ = run(capsys, GAUSS, "--pass-pipeline=rename{to=ab times=2}")
    assert status == 0 and "goal.filter @abab depth 4" in out
    status, out, _ = run(capsys, GAUSS, "-p", "rename")
    assert status == 0 and "goal.filter @renamed depth 4" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.cain"], "error: cannot read 'missing.cain': no such file"),
        ([str(EXAMPLES)], "it is a directory"),
        (
            [GAUSS, "-p", "nope"],
            "error: unknown pass 'nope' (available passes: convert-linalg-to-goal, search, regalloc",
        ),
        ([GAUSS, "-p", "rename{colour=red}"], "error: bad pass options in 'rename{colour=red}'"),
        ([GAUSS, "-p", "rename{times=x}"], "error: bad pass options in 'rename{times=x}'"),
        ([GAUSS, "-p", "rename{to=a"], "error: bad pass pipeline 'rename{to=a'"),
        ([GAUSS, "--max-depth", "2"], "gauss3x3.cain:4:8: error: the kernels cannot be represented"),
    ],
)
def test_errors_are_one_clear_message(capsys, rename_pass, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 1
    assert message in err
    assert "Traceback" not in err and out == ""


def test_unknown_file_type(capsys, tmp_path):
    path = tmp_path / "kernel.txt"
    path.write_text("output k -> A = [1]")
    status, _, err = run(capsys, str(path))
    assert status == 1 and "unknown file type '.txt' (expected one of .mlir, .cain" in err
    status, out, _ = run(capsys, str(path), "--frontend", "cain")
    assert status == 0 and "goal.filter @kernel depth 0" in out


def test_kernel_errors_show_line_and_caret(capsys, tmp_path):
    path = tmp_path / "bad.cain"
    path.write_text("output k -> A = [1 2 1;\n                 2 4]\n")
    status, out, err = run(capsys, str(path))
    assert status == 1 and out == ""
    assert err.splitlines() == [
        (
            f"{path}:2:18: error: ragged matrix: row 2 has 2 entries but row 1 has 3 entries; "
            "every row needs the same number of entries"
        ),
        "                 2 4]",
        "                 ^",
    ]


def test_ir_errors(capsys, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text('goal.filter @f depth x registers ["A"] instructions "all" {\n}\n')
    status, _, err = run(capsys, str(path))
    assert status == 1 and "Expected integer literal" in err and "Traceback" not in err
    path.write_text(
        'goal.filter @f depth 0 registers ["A"] instructions "all" {\n'
        '  goal.input "A" -> "A"\n'
        '  goal.kernel "k" -> "B" weights [[1]] goal #goal.goal<[[1]]> error 0\n}\n'
    )
    status, _, err = run(capsys, str(path))
    assert status == 1 and "register 'B' is not in the register file" in err


def test_overrides_do_not_apply_to_ir(capsys, tmp_path):
    status, ir, _ = run(capsys, GAUSS)
    saved = tmp_path / "gauss.mlir"
    saved.write_text(ir)
    status, out, err = run(capsys, str(saved), "--max-error", "1/4", "--registers", "A,B")
    assert status == 1 and out == ""
    assert "error: --max-error, --registers: only for kernel files (.cain, .json)" in err


def test_bad_override_is_a_usage_error(capsys):
    status, _, err = run(capsys, GAUSS, "--registers", "A,NEWS")
    assert status == 2 and "argument --registers: NEWS is reserved" in err


def test_help_lists_options_and_passes(capsys, rename_pass):
    status, out, _ = run(capsys, "--help")
    assert status == 0
    assert "usage: cain-opt" in out and "--pass-pipeline" in out
    for option in ["--max-depth", "--max-error", "--registers", "--instruction-set", "-o OUTPUT_FILE"]:
        assert option in out
    assert "rename      Renames every filter" in out
    assert "Available targets are: mlir,c " in " ".join(out.split()) and "riscv" not in out  # not xDSL's unrelated ones
    lines = out.splitlines()
    assert any(
        line.split() == ["to=renamed", "The", "new", "name,", "repeated", "`times`", "times."]
        for line in lines
    )
    assert any(line.split() == ["times=1"] for line in lines)
    for option, text in [
        ("images=2", "Random images"),
        ("registers=None", "The register file"),
        ("verify=True", "Verify"),
    ]:
        assert any(line.split()[:1] == [option] and text in line for line in lines), option


def test_version(capsys):
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.startswith("cain-opt (xDSL 0.74.0)")


def test_stdin_reads_ir(capsys, monkeypatch):
    import io
    import sys

    text = Path(EXAMPLES / "sobel.cain").read_text()
    status, ir, _ = run(capsys, str(EXAMPLES / "sobel.cain"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ir.encode())))
    status, out, _ = run(capsys)
    assert status == 0 and out == ir
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    status, out, _ = run(capsys, "--frontend", "cain")
    assert status == 0 and out.replace("@stdin", "@sobel") == ir
