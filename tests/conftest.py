"""Runs the lit + filecheck suite (tests/filecheck) inside pytest: each lit test file is a pytest item,
run by lit on its own (so pytest-xdist spreads them over the workers), with lit's output as its
failure report."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FILECHECK_DIR = Path(__file__).parent / "filecheck"
LIT = shutil.which("lit") or str(Path(sys.executable).parent / "lit")


class LitItem(pytest.Item):
    def runtest(self):
        done = subprocess.run([LIT, "-v", str(self.path)], capture_output=True, text=True, check=False)
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
        yield LitItem.from_parent(self, name=self.path.name)


def pytest_collect_file(parent, file_path: Path):
    if (
        file_path.suffix in (".mlir", ".cain")
        and FILECHECK_DIR in file_path.parents
        and "Inputs" not in file_path.parts
        and "Output" not in file_path.parts
    ):
        return LitFile.from_parent(parent, path=file_path)
    return None
