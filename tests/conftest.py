"""Runs the lit + filecheck suite (tests/filecheck) inside pytest: each lit test file is a pytest item,
run by lit on its own (so pytest-xdist spreads them over the workers), with lit's output as its
failure report. The few in SLOW_LIT are marked `slow`, like the pytest tests that the fast tier
(`pytest -m "not slow"`) leaves out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FILECHECK_DIR = Path(__file__).parent / "filecheck"
SLOW_LIT = (
    "bus-synth/gauss3x3.cain",
    "search/gauss3x3.cain",
    "emit/hypothetical.cain",
    "frontend-json/errors.mlir",
    "frontend/errors/",
    "frontend/example_",
    "search/exact_cp_sat.cain",
    "search/exact_icws.cain",
    "search/kernel_by_kernel.cain",
    # several cain-opt runs each, on modules the fast tier also tests in-process
    "search/errors.cain",
    "bus-synth/synth.mlir",
    "emit/target_c.mlir",
    "digital/neighbours.cain",
    "goal/roundtrip.mlir",
    "search/full_registers.cain",
    "emit/split.mlir",
    "scamp5/roundtrip.mlir",
    "frontend/cli.mlir",
    "convert-linalg-to-goal/",
    "regalloc/errors.mlir",
    "digital/pipeline.cain",
    "digital/accumulators.cain",
    "superpixel/pipeline.cain",
    "superpixel/java.cain",
    "superpixel/errors.cain",
    "digital/from-file.mlir",
    "digital/errors.cain",
    "verify/verify.mlir",
    "frontend/options.cain",
    "frontend/scales.cain",
    "emit/emit.mlir",
    # searches and readers the fast tier also runs in-process (tests/search, tests/frontend, tests/backend)
    "search/structure.cain",
    "expand-bus/expand.mlir",
    "superpixel/adc.cain",
    "frontend-json/goal_ir.mlir",
)
"""Lit tests left to the full suite: searches of hundreds to thousands of nodes, exact proofs, the readers'
errors one file each (tests/frontend/ checks each message and place in-process) and the
examples' goal IR (tests/frontend and tests/dialects read and round-trip every example in-process)."""
LIT = [sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())"]
"""lit, run by this Python with its bin first on PATH, so that the tests run this checkout's `cain-opt` (a
`lit` script of another Python, such as a pyenv shim, puts that Python's bin first)."""
LIT_ENV = {
    **os.environ,
    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
}


class LitItem(pytest.Item):
    def runtest(self):
        done = subprocess.run(
            [*LIT, "-v", str(self.path)], capture_output=True, text=True, check=False, env=LIT_ENV
        )
        if done.returncode != 0 or "Passed: 1" not in done.stdout + done.stderr:
            raise LitFailure(done.stdout + done.stderr)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, LitFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"lit: {self.path.name}"


class LitFailure(Exception):
    pass


class LitFile(pytest.File):
    def collect(self):
        item = LitItem.from_parent(self, name=self.path.name)
        if self.path.relative_to(FILECHECK_DIR).as_posix().startswith(SLOW_LIT):
            item.add_marker(pytest.mark.slow)
        yield item


def pytest_collect_file(parent, file_path: Path):
    if (
        file_path.suffix in (".mlir", ".cain")
        and FILECHECK_DIR in file_path.parents
        and "Inputs" not in file_path.parts
        and "Output" not in file_path.parts
    ):
        return LitFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(items):
    """A `long` test is also `slow`, so that `-m "not slow"` (which replaces the default `-m 'not long'`)
    leaves it out of the fast tier too."""
    for item in items:
        if item.get_closest_marker("long") is not None:
            item.add_marker(pytest.mark.slow)
