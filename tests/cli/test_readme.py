"""The README's set-up commands are the ones CI runs, and docs/language.md shows the real grammar."""

import re
import tomllib
from pathlib import Path

from cain.frontend.kernel import parse_filter

ROOT = Path(__file__).parents[2]


def code_blocks(path: Path, language: str = "") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_ci_runs_the_readme_commands():
    (setup,) = [b for b in code_blocks(ROOT / "README.md", "sh") if "pip install" in b]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = setup.strip().splitlines()
    assert commands == ["pip install -e '.[test]' && cain examples/gauss3x3.cain", "pytest"]
    assert ci[-2:] == commands
    assert "## Results" in (ROOT / "README.md").read_text()


def test_language_doc_shows_the_grammar_and_parsing_examples():
    doc = ROOT / "docs" / "language.md"
    (grammar,) = code_blocks(doc, "lark")
    assert grammar == (ROOT / "cain" / "frontend" / "kernel.lark").read_text()
    first = code_blocks(doc)[0]
    f = parse_filter(first, "doc.cain")
    assert f.name == "gauss3x3" and f.depth == 4
    two_channels = next(b for b in code_blocks(doc) if "input  green" in b)
    assert parse_filter(two_channels, "doc.cain").inputs == (("green", "A"), ("red", "B"))


def test_language_doc_shows_real_goal_ir():
    from io import StringIO

    from xdsl.printer import Printer

    from cain.frontend.kernel import lower_source

    doc = ROOT / "docs" / "language.md"
    (shown,) = [b for b in code_blocks(doc) if b.startswith("goal.filter @rgb_luma_edge")]
    example = ROOT / "examples" / "rgb_luma_edge.cain"
    (op,) = lower_source(example.read_text(), str(example)).ops
    out = StringIO()
    Printer(stream=out).print_op(op)
    assert out.getvalue().strip() == shown.strip()


def test_the_package_list_names_every_source_package():
    """A wheel (`pip install .`, not `-e`) holds only the packages pyproject.toml lists: each directory of
    the source with an `__init__.py`, under its installed name."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {folder: name for name, folder in setuptools["package-dir"].items()}
    found = set()
    for folder, name in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join((name, *init.parent.relative_to(ROOT / folder).parts)))
    assert sorted(setuptools["packages"]) == sorted(found)
