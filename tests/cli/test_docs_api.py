"""docs/api.md's Python examples run, in order, in one namespace (a block headed `# needs: MODULE ...` is
skipped when a module of an optional extra is absent), and its commands name real options."""

import importlib.util
import os
import re
from pathlib import Path

import pytest

from cain import driver

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "api.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


@pytest.mark.slow
def test_the_python_examples_run(tmp_path, monkeypatch, capsys):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    ran = 0
    for block in blocks("python"):
        needs = re.match(r"# needs: (.*)\n", block)
        if needs and any(importlib.util.find_spec(m) is None for m in needs[1].split()):
            continue
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 (the documentation's own examples)
        ran += 1
    assert ran >= 5
    assert os.path.exists("filters.c") and os.path.exists("summary.csv")
    assert "| sobel |" in capsys.readouterr().out


def test_the_commands_shown_parse():
    """Every `cain ...` command line in the doc is accepted by the command's argument parser."""
    parsers = {"batch": driver._batch_parser, "picture": driver._picture_parser}
    for line in "\n".join(blocks("sh")).splitlines():
        words = line.split("#")[0].split()
        if not words or words[0] != "cain":
            continue
        parse = parsers.get(words[1], driver._compile_parser)
        args = words[2:] if words[1] in parsers else words[1:]
        parse().parse_args(args)
