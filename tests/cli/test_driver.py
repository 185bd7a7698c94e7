"""`cain`, the command for people: compile to C with the counts on stderr, `cain batch`, `cain picture`."""

import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.stand_in import CXX, SIZE, compile_and_run
from cain import driver
from cain.backend.sim import correlate, random_images
from cain.frontend.kernel import parse_filter

EXAMPLES = Path(__file__).parents[2] / "examples"
FILECHECK = Path(__file__).parents[1] / "filecheck"


def run(capsys, *argv):
    status = driver.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_compile_writes_verified_c_and_reports_counts_and_error(capsys, tmp_path):
    out_file = tmp_path / "gauss.c"
    status, out, err = run(capsys, EXAMPLES / "gauss3x3.cain", "-o", out_file, "--budget", 300)
    assert status == 0 and out == ""
    c = out_file.read_text()
    assert c.startswith("#include <scamp5.hpp>") and "void gauss3x3(void)" in c
    icws = c.count(";") - 3  # bus level: one line per ICW
    macros, expanded = re.search(r"(\d+) macro instructions .*\n.* would expand to (\d+) ICWs", c).groups()
    assert f" {icws} ICWs (bus micro-operations)" in c and icws < int(expanded)
    assert err.strip() == (
        f"gauss3x3: {icws} ICWs at bus level ({macros} macros, {expanded} ICWs expanded), depth 4; "
        "approximation error blur 0 (~0); verified (symbolically and in the simulator)"
    )


def test_level_macro_writes_the_sdk_macros(capsys):
    status, out, err = run(capsys, EXAMPLES / "gauss3x3.cain", "--budget", 300, "--level", "macro")
    macros, icws = out.count(";") - 3, re.search(r"(\d+) ICWs", out)[1]
    assert status == 0 and "div(" in out and "bus(" not in out and "chosen:" not in out
    assert err.startswith(f"gauss3x3: {macros} macros, {icws} ICWs, depth 4;")


def test_compile_to_stdout_with_options(capsys):
    status, out, err = run(
        capsys,
        EXAMPLES / "gauss3x3.cain",
        "--budget",
        300,
        "--max-depth",
        2,
        "--max-error",
        0.75,
        "--instruction-set",
        "basic",
    )
    assert status == 0 and "void gauss3x3(void)" in out and "depth 2" in err
    assert "approximation error blur 3/4 (~0.75)" in err


def test_errors_are_one_line_and_exit_1(capsys, tmp_path):
    status, out, err = run(capsys, tmp_path / "missing.cain")
    assert (
        status == 1
        and out == ""
        and err == f"error: cannot read '{tmp_path / 'missing.cain'}': no such file\n"
    )
    status, _, err = run(capsys, EXAMPLES / "gauss3x3.cain", "--cost", "nodes")
    assert status == 2 and "invalid choice: 'nodes'" in err
    status, _, err = run(capsys, EXAMPLES / "gauss3x3.cain", "--level", "micro")
    assert status == 2 and "invalid choice: 'micro' (choose from 'bus', 'macro')" in err
    status, _, err = run(capsys)
    assert status == 2 and "the following arguments are required: input" in err
    for option, value, message in [
        ("--time", -1, "time budget must be positive, not -1 s"),
        ("--budget", 0, "node budget must be positive, not 0"),
    ]:
        status, out, err = run(capsys, EXAMPLES / "gauss3x3.cain", option, value)
        assert (status, out, err) == (1, "", f"error: the {message}\n")


def test_dash_reads_the_kernel_file_from_stdin(capsys, monkeypatch):
    """`cain -` compiles the kernel text piped in, to the C its file gives; an error in it is named
    `<stdin>` at its line and column."""
    kernel = EXAMPLES / "gauss3x3.cain"
    _, from_file, _ = run(capsys, kernel, "--budget", 100)
    monkeypatch.setattr(sys, "stdin", io.StringIO(kernel.read_text()))
    status, out, err = run(capsys, "-", "--budget", 100)
    assert status == 0 and out == from_file and "void gauss3x3(void)" in out and "verified" in err
    monkeypatch.setattr(sys, "stdin", io.StringIO("filter f\ninput A\noutput o -> A = [1 2; 3]"))
    status, out, err = run(capsys, "-")
    assert status == 1 and out == "" and err.startswith("<stdin>:3:23: error: ragged matrix")


def test_an_error_of_the_searches_side_by_side_is_printed_once(capsys, tmp_path):
    """On a time budget the two searches run in processes of their own; the error one of them raises is
    printed as raised, once, as the command's only output."""
    kernel = tmp_path / "one.cain"
    kernel.write_text("filter one\noutput o -> A = [1 2; 3 4]\n")
    status, out, err = run(capsys, kernel, "--registers", "A", "--time", 0.5)
    assert (
        status == 1
        and out == ""
        and err.count("error:") == 1
        and err.startswith("error: search: found no program")
    )


def test_batch_compiles_a_directory_and_a_model_and_reports_failures(capsys, tmp_path):
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "sobel.cain").write_text((EXAMPLES / "sobel.cain").read_text())
    (folder / "wrong.cain").write_text("output x -> Q = [1]\n")
    model = FILECHECK / "convert-linalg-to-goal" / "nhwc.mlir"
    c_file, table = tmp_path / "all.c", tmp_path / "summary.md"
    status, out, err = run(
        capsys,
        "batch",
        folder,
        model,
        "-o",
        c_file,
        "--table",
        table,
        "--budget",
        150,
        "-j",
        2,
        "--no-progress",
    )
    assert status == 1 and out == ""
    assert "cain batch: 2 of 3 filters compiled" in err and "wrong: " in err and "unknown register 'Q'" in err
    text = c_file.read_text()
    assert "void sobel(void)" in text and "void rgb_conv0(void)" in text
    lines = table.read_text().splitlines()
    assert lines[0].startswith("| filter | source | kernels |") and len(lines) == 5
    assert any(line.startswith("| rgb_conv0 |") and "verified" in line for line in lines)


@pytest.mark.slow
def test_the_batch_c_holds_each_filters_function(capsys, tmp_path):
    """Each function of the batch file is headed by its filter's inputs and outputs."""
    c_file = tmp_path / "all.c"
    status, out, _ = run(
        capsys, "batch", EXAMPLES / "sobel.cain", EXAMPLES / "box3x3.cain", "-o", c_file, "--budget", 100
    )
    assert status == 0 and "| sobel |" in out and "| box3x3 |" in out
    for name in ("sobel", "box3x3"):
        filt = parse_filter((EXAMPLES / f"{name}.cain").read_text(), name)
        header = c_file.read_text().split(f"void {name}(void)")[0].rsplit("/*", 1)[1]
        assert all(f"output {k.name} in register {k.register}" in header for k in filt.kernels)


@pytest.mark.slow
def test_picture(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("skimage")
    png = tmp_path / "sobel.png"
    status, _, err = run(
        capsys, "picture", EXAMPLES / "sobel.cain", "-o", png, "--budget", 100, "--noise", 0.5
    )
    assert status == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"cain picture: wrote {png}" in err


def test_the_cain_script_is_installed():
    script = Path(sys.executable).parent / "cain"
    done = subprocess.run([script, "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "cain batch" in done.stdout


def test_a_file_of_another_kind_is_named_as_such(capsys, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    status, _, err = run(capsys, notes)
    assert status == 1 and err.strip() == (
        f"error: cannot read '{notes}': unknown file type '.txt' (expected .cain, .json, .mlir or .onnx)"
    )


@pytest.mark.slow
def test_batch_on_a_dask_scheduler(capsys, tmp_path):
    distributed = pytest.importorskip("distributed")
    c_file = tmp_path / "all.c"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster:
        status, out, err = run(
            capsys, "batch", EXAMPLES / "sobel.cain", EXAMPLES / "laplacian.cain", "-o", c_file,
            "--budget", 100, "--scheduler", cluster.scheduler_address,
        )  # fmt: skip
    assert status == 0 and "cain batch: 2 of 2 filters compiled" in err
    assert "void sobel(void)" in c_file.read_text() and "| laplacian |" in out


@pytest.mark.slow
@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_max_icws_cuts_the_program_into_kernels_that_compute_the_filter(capsys, tmp_path):
    status, out, err = run(capsys, EXAMPLES / "gauss3x3.cain", "--budget", 300, "--max-icws", 4)
    assert status == 0 and "// kernel 2 of " in out
    sizes = [int(n) for n in re.findall(r"// kernel \d+ of \d+: (\d+) ICWs", out)]
    assert max(sizes) <= 4 and sum(sizes) == int(re.search(r"(\d+) ICWs \(bus micro", out)[1])
    filt = parse_filter((EXAMPLES / "gauss3x3.cain").read_text(), "gauss3x3.cain")
    images = random_images(1, 1, SIZE, seed=4)[:, 0]
    (got,) = compile_and_run(out, "gauss3x3", ["A"], ["A"], images, tmp_path)
    expected = correlate(images, filt.kernels[0].goal, 4)
    assert np.allclose(got[2:-2, 2:-2], expected[2:-2, 2:-2], atol=1e-9)
    status, out, err = run(capsys, EXAMPLES / "gauss3x3.cain", "--budget", 300, "--max-icws", 0)
    assert (status, out) == (
        1,
        "",
    ) and err == "error: max-icws must be between 1 and 1024 (the SDK's ICW store), not 0\n"
