"""The search plugin's index completed with benchledger's own entries (`render.search_entries`):
one per run, claim, grid and History series page and per page of the runs index, pages the
search plugin was told not to parse."""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.structure.files import Files

from ..render.search_entries import SearchEntry


def add_search_entries(site: Path, entries: dict[str, SearchEntry], files: Files) -> None:
    """The search plugin's index (search/search_index.json, when it wrote one) with one entry per
    page in `entries` that MkDocs built, in the order of MkDocs' files."""
    index = site / "search" / "search_index.json"
    if not entries or not index.is_file():
        return
    data = json.loads(index.read_bytes())
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        return
    for file in files.documentation_pages():
        entry = entries.get(file.src_uri)
        if entry is not None:
            docs.append({"location": file.url, "title": entry.title, "text": entry.text, "tags": [entry.tag]})
    index.write_text(json.dumps(data, separators=(",", ":"), default=str), encoding="utf-8")
