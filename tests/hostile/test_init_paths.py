"""`init` into a path it cannot make: a link to nowhere on the way, a file on the way, or a
folder it may not write. Each is a clear error naming the path, exit 1, no traceback."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from helpers import cli


def test_a_dangling_link_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    code, out = cli("init", str(tmp_path / "gone" / "pub"))
    assert code == 1
    assert out == (
        f"Error: {tmp_path / 'gone'}: is a symlink to {str(tmp_path / 'nowhere')!r}, which does not exist; "
        "give a path through real folders\n"
    )


def test_a_dangling_link_as_the_folder(tmp_path: Path) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    code, out = cli("init", str(tmp_path / "gone"))
    assert code == 1
    assert out == f"Error: {tmp_path / 'gone'}: is a symlink; give a real folder, or a path that does not exist yet\n"


def test_a_file_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out = cli("init", str(tmp_path / "notes.txt" / "pub"))
    assert code == 1
    assert out == (
        f"Error: {tmp_path / 'notes.txt'}: is a file, so {tmp_path / 'notes.txt' / 'pub'} cannot be made in it; "
        "give a path through folders\n"
    )
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_a_folder_it_may_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same answer as a read-only folder gives a user who is not root (root may write anywhere)."""
    real_mkdir = Path.mkdir

    def refused(self: Path, *args: object, **kwargs: object) -> None:
        if self == tmp_path / "locked" / "pub":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    (tmp_path / "locked").mkdir()
    monkeypatch.setattr(Path, "mkdir", refused)
    code, out = cli("init", str(tmp_path / "locked" / "pub"))
    assert code == 1
    assert out == (
        f"Error: {tmp_path / 'locked' / 'pub'}: cannot be written (Permission denied); give a folder you can write to\n"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, out = cli("init", str(locked / "pub"))
    finally:
        locked.chmod(0o755)
    assert code == 1
    assert out == f"Error: {locked / 'pub'}: cannot be written (Permission denied); give a folder you can write to\n"
