"""The rooms of ARCHITECTURE.md hold: each folder exists, imports only what its row allows,
and the package has no import cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "generator"
ALLOWED = {
    "format": set(),
    "ledger": {"format"},
    "analysis": {"format", "ledger"},
    "render": {"format", "ledger", "analysis"},
    "site": {"format", "ledger", "analysis", "render"},
    "authoring": {"format", "ledger", "analysis"},
    "runner": {"format", "ledger"},
    "importers": {"format", "ledger", "runner"},
    "cli": {"format", "ledger", "analysis", "render", "site", "authoring", "runner", "importers"},
}
SHARED = {
    "errors",
    "forked",
    "__version__",
}  # generator/errors.py, generator/forked.py and the version: every room may use them


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every generator.* module this file imports, at any depth, resolved to absolute names."""
    tree = ast.parse(path.read_text())
    package = _module(path) if path.name == "__init__.py" else _module(path).rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
            found |= {n for n in [target, *names] if n.startswith("generator")}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("generator")}
    return found


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_room_named_in_architecture_md_exists() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"`generator/([a-z_]+)/`", text))
    assert named == set(ALLOWED)
    for room in named:
        assert (PACKAGE / room / "__init__.py").is_file(), room


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_room_imports_only_what_it_may(room: str) -> None:
    wrong = []
    for path in sorted((PACKAGE / room).rglob("*.py")):
        for target in _imports(path):
            other = _room(target)
            if other in (None, room) or other in SHARED or other in ALLOWED[room]:
                continue
            wrong.append(f"{path.relative_to(ROOT)} imports {target}")
    assert wrong == []


def test_no_import_cycles() -> None:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph = {m: {t for t in _imports(p) if t in modules and t != m} for m, p in modules.items()}
    # A package's __init__ importing its own submodules is how Python exposes them, not a cycle.
    for m in graph:
        if modules[m].name == "__init__.py":
            graph[m] = {t for t in graph[m] if not t.startswith(m + ".")}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*path, node])):
                return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            assert visit(start, []) is None


def test_the_top_level_holds_only_the_rooms_and_the_shared_modules() -> None:
    files = {p.name for p in PACKAGE.glob("*.py")}
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert files == {"__init__.py", "errors.py", "forked.py"}
    assert folders == set(ALLOWED)
