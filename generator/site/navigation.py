"""The navigation of a publication whose mkdocs.yml lists no `nav`: home, the reports newest
first, the generated pages, then every other hand-written page, so that a new report appears
without editing mkdocs.yml. A `nav` the publisher wrote is never changed."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..ledger.records import Ledger

GENERATED = [("Claims", "claims/index.md"), ("Runs", "runs/index.md"), ("Compare", "compare/index.md")]
HISTORY = [("Series", "history/index.md"), ("Changes", "history/changes.md")]
SKIPPED = {"reports", "runs", "claims", "compare", "assets", "ledger", "history"}  # folders placed above or not pages


def auto_nav(ledger: Ledger, docs: Path, docs_rel: str) -> list[Any]:
    """The nav as mkdocs.yml would write it (a list of `{title: path}` and plain paths)."""
    nav: list[Any] = [{"Home": "index.md"}] if (docs / "index.md").is_file() else []
    reports = sorted(ledger.reports, key=lambda r: (str(r.meta.date or ""), r.slug), reverse=True)
    if reports:
        nav.append({"Reports": [r.path.removeprefix(docs_rel + "/") for r in reports]})
    nav += [{title: path} for title, path in GENERATED if (docs / path).is_file()]
    if (docs / HISTORY[0][1]).is_file():  # off with `history: false`
        nav.append({"History": [{title: path} for title, path in HISTORY]})
    if (docs / "methods.md").is_file():
        nav.append({"Methods": "methods.md"})
    nav += [p.name for p in sorted(docs.glob("*.md")) if p.name not in ("index.md", "methods.md") and _shown(p.name)]
    for folder in sorted(p for p in docs.iterdir() if p.is_dir() and not p.is_symlink()):
        found = (p.relative_to(docs).as_posix() for p in folder.rglob("*.md") if p.is_file() and not p.is_symlink())
        pages = sorted(rel for rel in found if all(_shown(part) for part in rel.split("/")))
        if folder.name not in SKIPPED and _shown(folder.name) and pages:
            # MkDocs' theme prints a section title as HTML: a folder name is text, escaped
            nav.append({html.escape(folder.name.replace("-", " ").replace("_", " ").capitalize()): pages})
    return nav


def _shown(name: str) -> bool:
    """MkDocs leaves out files and folders whose names start with a dot; so does benchledger's
    nav, and `_` (its own pagination folders), so that no nav entry names a page never built."""
    return not name.startswith((".", "_"))
