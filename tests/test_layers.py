"""The import rule of the house: model <- dialects <- {frontend, backend <- search} <- passes <- cli.

Every module of Cain belongs to one layer (its folder) and imports only from its own layer and those its
layer builds on; imports of Cain's modules sit at the top of the file, never inside a function."""

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent

LAYER_OF_PATH = {
    "cain/model": "model",
    "cain/diagnostics.py": "model",
    "dialects": "dialects",
    "cain/frontend": "frontend",
    "cain/backend": "backend",
    "cain/search": "search",
    "passes": "passes",
    "cain": "top",
}
"""Source path prefix -> layer (the longest prefix wins)."""

LAYER_OF_MODULE = {
    "cain.model": "model",
    "cain.diagnostics": "model",
    "cain.dialects": "dialects",
    "cain.frontend": "frontend",
    "cain.backend": "backend",
    "cain.search": "search",
    "cain.passes": "passes",
    "cain": "top",
}

BELOW = {
    "model": {"model"},
    "dialects": {"model", "dialects"},
    "frontend": {"model", "dialects", "frontend"},
    "backend": {"model", "dialects", "backend"},
    "search": {"model", "dialects", "backend", "search"},
    "passes": {"model", "dialects", "frontend", "backend", "search", "passes"},
    "top": {"model", "dialects", "frontend", "backend", "search", "passes", "top"},
}
"""Layer -> the layers it may import from."""


def _longest(table: dict[str, str], key: str, sep: str) -> str:
    matches = [p for p in table if key == p or key.startswith(p + sep)]
    return table[max(matches, key=len)]


def cain_imports(tree: ast.Module):
    """(module imported, line, at top level) for every import of a `cain` module."""
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name == "cain" or name.startswith("cain."):
                yield name, node.lineno, id(node) in top


def sources():
    for folder in ("cain", "dialects", "passes"):
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_every_import_points_down_and_sits_at_the_top():
    problems = []
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        layer = _longest(LAYER_OF_PATH, rel, "/")
        for module, line, at_top in cain_imports(ast.parse(path.read_text())):
            target = _longest(LAYER_OF_MODULE, module, ".")
            if target not in BELOW[layer]:
                problems.append(f"{rel}:{line}: {layer} imports {module} ({target})")
            if not at_top:
                problems.append(f"{rel}:{line}: import of {module} inside a function or block")
    assert not problems, "\n".join(problems)


def test_the_rule_catches_an_upward_import():
    tree = ast.parse("def f():\n    from cain.passes.emit import EmitPass\n")
    ((module, line, at_top),) = cain_imports(tree)
    assert module == "cain.passes.emit" and line == 2 and not at_top
    assert _longest(LAYER_OF_MODULE, module, ".") not in BELOW["backend"]
