"""The import rule of the house: model <- dialects <- {frontend, backend <- search} <- passes <- cli.

Every module of Cain belongs to one layer (its folder) and imports only from its own layer and those its
layer builds on; imports of Cain's modules sit at the top of the file, never inside a function. No module
reaches into another's private (`_x`) names, and inside the search, its parts import downwards only."""

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


def module_file(module: str) -> Path | None:
    """The source file of Cain module `module` (None if it is not one)."""
    parts = module.split(".")
    if parts[0] != "cain":
        return None
    folder = {"dialects": ROOT / "dialects", "passes": ROOT / "passes"}.get(parts[1] if len(parts) > 1 else "")
    base = folder.joinpath(*parts[2:]) if folder else ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(tree: ast.Module):
    """(line, what) for every private name of another Cain module this module imports or reads:
    `from cain.x import _y`, or `m._y` where `m` names a Cain module."""
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "cain" or node.module.startswith("cain."):
                for a in node.names:
                    if private(a.name):
                        yield node.lineno, f"{node.module}.{a.name}"
                    elif module_file(f"{node.module}.{a.name}") is not None:
                        modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.asname and a.name.startswith("cain."))
    for node in ast.walk(tree):
        named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        if named and node.value.id in modules and private(node.attr):
            yield node.lineno, f"{node.value.id}.{node.attr}"


def test_no_module_uses_another_modules_private_names():
    problems = []
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        for line, what in private_uses(ast.parse(path.read_text())):
            problems.append(f"{rel}:{line}: uses the private name {what}")
    assert not problems, "\n".join(problems)


def test_the_rule_catches_a_private_name():
    tree = ast.parse(
        "from cain.search.constructive.program import _ranked, candidates\n"
        "from cain.search.goals import atoms\n"
        "atoms._hidden(1)\n"
        "atoms.__name__\n"
    )
    assert list(private_uses(tree)) == [
        (1, "cain.search.constructive.program._ranked"),
        (3, "atoms._hidden"),
    ]


SEARCH_BASE = ("config", "budget", "allocate")
"""The search's modules every part of it may import: what to search, its budget, plans allocated and
verified."""

SEARCH_BELOW = {
    "base": {"base"},
    "goals": {"base", "goals"},
    "constructive": {"base", "goals", "constructive"},
    "heuristic": {"base", "goals", "constructive", "heuristic"},
    "exact": {"base", "goals", "exact"},
    "top": {"base", "goals", "constructive", "heuristic", "exact", "top"},
}
"""Part of the search -> the parts it may import from: the goal model below everything, the searches
above it, and the engine (`top`: engine, portfolio, progress, the package) over them all."""


def search_part(module: str) -> str | None:
    """The part of the search `module` (`cain.search...`) belongs to; None outside the search."""
    parts = module.split(".")
    if parts[:2] != ["cain", "search"]:
        return None
    if len(parts) == 2:
        return "top"
    if parts[2] in SEARCH_BELOW:
        return parts[2]
    return "base" if parts[2] in SEARCH_BASE else "top"


def test_the_search_parts_import_downwards():
    problems = []
    for path in sorted((ROOT / "cain" / "search").rglob("*.py")):
        rel = path.relative_to(ROOT)
        own = search_part(".".join(rel.with_suffix("").parts).removesuffix(".__init__"))
        for module, line, _ in cain_imports(ast.parse(path.read_text())):
            target = search_part(module)
            if target is not None and target not in SEARCH_BELOW[own]:
                problems.append(f"{rel.as_posix()}:{line}: the search's {own} imports {module} ({target})")
    assert not problems, "\n".join(problems)


def test_the_search_rule_catches_an_upward_import():
    assert search_part("cain.search.goals.space") == "goals"
    assert search_part("cain.search.engine") == "top"
    assert search_part("cain.search.config") == "base"
    assert search_part("cain.search") == "top"
    assert search_part("cain.backend.regalloc") is None
    assert "heuristic" not in SEARCH_BELOW["goals"] and "top" not in SEARCH_BELOW["exact"]
