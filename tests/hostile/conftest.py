"""Shared by the hostile-input tests: a sentinel folder outside the publication whose bytes
must never change, and the CLI run as a user would (exit code, output, no traceback)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))


def tree_digest(folder: Path) -> str:
    """sha256 over every path, kind and byte below `folder` (symlinks by their target text)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        if path.is_symlink():
            digest.update(b"L" + str(path.readlink()).encode())
        elif path.is_file():
            digest.update(b"F" + path.read_bytes())
        else:
            digest.update(b"D")
    return digest.hexdigest()


@pytest.fixture
def sentinel(tmp_path: Path) -> Path:
    """A folder beside the publication holding files an attacker would like deleted."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text("do not delete\n")
    (folder / "mkdocs.yml").write_text("site_name: not yours\n")
    return folder
