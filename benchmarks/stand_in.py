"""Emitted C compiled with the host's C++ compiler against the stand-in for the SCAMP-5d SDK (tests/c) and
run on images: what the C tests and the fuzz campaign of the default compile compare with the direct
correlation."""

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

C_DIR = Path(__file__).resolve().parents[1] / "tests" / "c"
SIZE = 24
CXX = shutil.which("g++") or shutil.which("c++")


def compile_and_run(
    c_text: str,
    function: str,
    inputs: list[str],
    outputs: list[str],
    images,
    tmp_path,
    defines: Sequence[str] = (),
    size: int = SIZE,
) -> np.ndarray:
    """`function` of `c_text` run on `images` (one per input register, `size` pixels square): one image per
    output register. `defines` (`NAME=VALUE`) set the stand-in's parameters, e.g. `SCAMP5_ICW_STACK_CAP`."""
    source = tmp_path / "kernel.cpp"
    source.write_text(c_text)
    exe = tmp_path / "driver"
    subprocess.run(
        [
            CXX,
            "-std=c++17",
            "-O1",
            f"-I{C_DIR}",
            f"-DSCAMP5_SIZE={size}",
            f'-DCAIN_SOURCE="{source}"',
            *(f"-D{d}" for d in defines),
            f"-DCAIN_KERNEL={function}",
            str(C_DIR / "driver.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    data = "\n".join(" ".join(f"{v:.17g}" for v in image.ravel()) for image in images)
    run = subprocess.run(
        [str(exe), *inputs, "--", *outputs], input=data, capture_output=True, text=True, check=True
    )
    return np.array(run.stdout.split(), dtype=np.float64).reshape(len(outputs), size, size)


def exact_margin(c_text: str) -> int:
    """The outermost rings of pixels the C's header says may be inexact (`cain.backend.emit_c.edge_line`):
    what a user reads, so a check from it inwards also checks the header."""
    if "outputs exact at every pixel" in c_text:
        return 0
    found = re.search(r"outputs exact but in the array's outermost (?:ring|(\d+) rings) of pixels", c_text)
    if found is None:
        raise ValueError("the C's header does not say which pixels are exact")
    return int(found[1] or 1)
