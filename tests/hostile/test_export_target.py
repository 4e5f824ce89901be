"""`benchledger export --out` at a file, under a file, or over a link: a clear error, never a
traceback, and never a write through a link (not even with --force)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tree_digest

from helpers import cli


def test_out_at_a_file(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("mine\n")
    code, out = cli("export", "--repo", str(repo), "--out", str(target))
    assert (code, out) == (1, f"Error: --out: {target} is a file; give a folder for the tables\n")
    assert target.read_text() == "mine\n"


def test_out_under_a_file(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("mine\n")
    target = tmp_path / "a-file" / "tables"
    code, out = cli("export", "--repo", str(repo), "--out", str(target))
    assert code == 1
    assert out == f"Error: --out: {target} cannot be created (Not a directory); give a folder you can write to\n"


@pytest.mark.parametrize("force", [False, True])
def test_force_never_writes_through_a_link(repo: Path, tmp_path: Path, sentinel: Path, force: bool) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "trials.csv").symlink_to(sentinel / "precious.txt")
    before = tree_digest(sentinel)
    code, out = cli("export", "--repo", str(repo), "--out", str(folder), *(["--force"] if force else []))
    assert code == 1
    assert (
        out == f"Error: {folder / 'trials.csv'}: is a link or not a regular file; remove it, or choose another --out\n"
    )
    assert tree_digest(sentinel) == before
