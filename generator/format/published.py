"""The name a run file is published under: raw files are served from the site's origin, so
anything a browser or MkDocs could interpret (.html, .svg, .md, .js, ...) is published with
.txt appended. Shared by the renderer, which publishes them, and the reader, which refuses two
files that would be published under one name."""

from __future__ import annotations

from pathlib import PurePosixPath

PLAIN_SUFFIXES = {
    ".csv",
    ".tsv",
    ".yaml",
    ".yml",
    ".json",
    ".jsonl",
    ".txt",
    ".log",
    ".sig",
    ".out",
    ".err",
    ".gz",
    ".zip",
    ".png",
    ".jpg",
    ".jpeg",
}


def published_name(path: str) -> str:
    """The name a run file is published under (dangerous suffixes neutralized)."""
    return path if PurePosixPath(path).suffix.lower() in PLAIN_SUFFIXES else path + ".txt"
