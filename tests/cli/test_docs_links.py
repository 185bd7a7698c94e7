"""Every link of the README, docs/, benchmarks/README.md and the results' summaries resolves: relative
links to a file or folder of the repository (and an anchor to a heading of the page), and every repository
path the README and docs/ name, in backticks or not, exists."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]
SUMMARIES = sorted((ROOT / "benchmarks" / "results").rglob("*.md"))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
OUTPUT = re.compile(r"--out \S+")
"""A command's output directory, which exists once the command has run."""
PATH = re.compile(r"(?<![\w/.<-])((?:benchmarks|tests|docs|examples|cain|dialects|passes)/[\w./-]*[\w/])(?![\w*<{])")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        dest = page.parent / path if path else page
        if not dest.exists():
            broken.append(target)
        elif fragment and dest.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", dest.read_text(), flags=re.MULTILINE)
            if fragment not in {anchor(h) for h in headings}:
                broken.append(target)
    return broken


@pytest.mark.parametrize("page", DOCS + SUMMARIES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_resolves(page):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_named_exists(page):
    text = OUTPUT.sub("", page.read_text())
    assert [p for p in PATH.findall(text) if not (ROOT / p).exists()] == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "there.md").write_text("# A heading, here\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md) [ok](there.md#a-heading-here) [no](gone.md) [no](there.md#elsewhere)\n")
    assert broken_links(page) == ["gone.md", "there.md#elsewhere"]
