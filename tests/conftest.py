"""Runs the lit + filecheck suite (tests/filecheck) inside pytest: lit runs once, in parallel, and each
lit test file becomes a pytest item with lit's output as its failure report."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

FILECHECK_DIR = Path(__file__).parent / "filecheck"
_lit_results: dict[str, tuple[bool, str]] | None = None


def _run_lit() -> dict[str, tuple[bool, str]]:
    """Run lit over the whole directory once; map each test file's path to (passed, output)."""
    global _lit_results
    if _lit_results is None:
        lit = shutil.which("lit") or str(Path(sys.executable).parent / "lit")
        with tempfile.TemporaryDirectory() as tmp:
            xml = Path(tmp) / "lit.xml"
            subprocess.run(
                [lit, "-q", "-j2", f"--xunit-xml-output={xml}", str(FILECHECK_DIR)],
                capture_output=True,
                text=True,
                check=False,  # failures are read from the report, per test file
            )
            _lit_results = {}
            for case in ET.parse(xml).getroot().iter("testcase"):
                path = case.get("classname", "").split(".", 1)[-1].replace(".", "/") + "/" + case.get("name", "")
                failure = case.find("failure")
                text = failure.text if failure is not None and failure.text else ""
                _lit_results[path.lstrip("/")] = (failure is None, text)
    return _lit_results


class LitItem(pytest.Item):
    def runtest(self):
        results = _run_lit()
        rel = self.path.relative_to(FILECHECK_DIR).as_posix()
        match = [v for k, v in results.items() if k.endswith(rel)]
        if not match:
            raise LitFailure(f"lit did not run {rel}")
        passed, output = match[0]
        if not passed:
            raise LitFailure(output)

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
