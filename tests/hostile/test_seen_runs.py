"""`serve` does not read a run folder again while its files' signatures are the ones it read
them with (`ledger.runs.load_run`'s `seen`). An edit that keeps a file's size and puts its
modification time back (`touch -d`), a file added or removed, a write within the racy window
after a read: each makes the folder read again, and the ledger is the one a fresh load gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.ledger import runs as runs_module
from generator.ledger import seen_runs
from generator.ledger.load import load
from helpers import measured_run, publication, write_tree

RUN = "2026-09-01-measured"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run folders read (their files hashed), in order; on any file system (this machine's
    is taken to keep change times: `keeps_change_times` is tested on its own below)."""
    from generator.ledger import load as load_module

    monkeypatch.setattr(load_module, "keeps_change_times", lambda folder: True)
    read: list[str] = []
    real = runs_module.run_digest
    monkeypatch.setattr(runs_module, "run_digest", lambda blobs: read.append("read") or real(blobs))
    return read


def _root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "pub", publication(measured_run(RUN)))


@pytest.fixture
def settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict]:
    """A publication whose files count as written long before they are read (no racy window),
    and an empty memory of the folders read."""
    monkeypatch.setattr(seen_runs, "RACY_NS", 0)
    return _root(tmp_path), {}


def test_an_unchanged_folder_is_not_read_again_once_out_of_the_racy_window(
    tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, seen = _root(tmp_path), {}
    first = load(root, seen=seen)
    assert reads == ["read"] and RUN in seen
    again = load(root, seen=seen)  # its files were written just now: read again, as git does
    assert reads == ["read", "read"] and again.runs[RUN] == first.runs[RUN]
    monkeypatch.setattr(seen_runs, "RACY_NS", 0)  # as if the files were written long before
    load(root, seen=seen)
    reads.clear()
    kept = load(root, seen=seen)
    assert reads == [] and kept.runs[RUN] is not None and kept.runs[RUN] == load(root).runs[RUN]


def test_an_unchanged_folder_is_handed_out_as_the_run_serve_holds(settled: tuple[Path, dict], reads: list[str]) -> None:
    """With the build cache too, as `serve` loads: the run kept in `seen` is the ledger's, not one
    put together again from the cache on every rebuild."""
    root, seen = settled
    cache: dict = {}
    load(root, cache=cache, seen=seen)
    reads.clear()
    kept = load(root, cache=cache, seen=seen)
    assert reads == [] and kept.runs[RUN] is seen[RUN][2]
    assert kept.runs[RUN].meta is cache[(RUN, kept.runs[RUN].digest)][0]


def test_an_edit_that_keeps_size_and_modification_time_is_read(settled: tuple[Path, dict], reads: list[str]) -> None:
    root, seen = settled
    load(root, seen=seen)
    results = root / "runs" / RUN / "results.csv"
    before = results.stat()
    text = results.read_text()
    first_value = text.splitlines()[1].split(",")[2]
    changed = first_value[:-1] + ("1" if first_value[-1] != "1" else "2")  # same length, another value
    edited = text.replace(first_value, changed, 1)
    assert len(edited) == len(text) and edited != text
    results.write_text(edited)
    os.utime(results, ns=(before.st_atime_ns, before.st_mtime_ns))  # touch -d: the old mtime back
    reads.clear()
    ledger = load(root, seen=seen)
    assert reads == ["read"]
    assert ledger.runs[RUN] == load(root).runs[RUN] and ledger.runs[RUN].digest != ""


def test_a_file_added_or_removed_makes_the_folder_read_again(settled: tuple[Path, dict], reads: list[str]) -> None:
    root, seen = settled
    first = load(root, seen=seen)
    extra = root / "runs" / RUN / "notes.txt"
    extra.write_text("warm machine\n")
    reads.clear()
    added = load(root, seen=seen)
    assert reads == ["read"] and added.runs[RUN].digest != first.runs[RUN].digest
    extra.unlink()
    reads.clear()
    removed = load(root, seen=seen)
    assert reads == ["read"] and removed.runs[RUN].digest == first.runs[RUN].digest


def test_a_folder_that_stops_loading_or_goes_is_forgotten(settled: tuple[Path, dict], reads: list[str]) -> None:
    root, seen = settled
    load(root, seen=seen)
    (root / "runs" / RUN / "run.yaml").write_text("not: [valid\n")
    broken = load(root, seen=seen)
    assert RUN not in broken.runs and RUN not in seen and broken.problems
    (root / "runs" / RUN / "run.yaml").unlink()
    for name in os.listdir(root / "runs" / RUN):
        (root / "runs" / RUN / name).unlink()
    (root / "runs" / RUN).rmdir()
    assert load(root, seen=seen).runs == {} and seen == {}


def test_an_empty_folder_added_makes_the_run_read_and_refused(settled: tuple[Path, dict], reads: list[str]) -> None:
    """An entry that holds no file (a folder named requests.csv, which `check` refuses) changes
    the run folder's own times: the folder is read again and refused as a fresh load refuses it."""
    root, seen = settled
    (root / "runs" / RUN / "requests.csv").unlink()  # a run without per-request rows
    assert RUN in load(root, seen=seen).runs
    (root / "runs" / RUN / "requests.csv").mkdir()
    reads.clear()
    served, fresh = load(root, seen=seen), load(root)
    assert reads[0] == "read" and RUN not in served.runs and RUN not in fresh.runs
    assert served.problems == fresh.problems and any("requests.csv" in p.file for p in served.problems)


def test_where_change_times_cannot_prove_a_file_unchanged_every_folder_is_read(tmp_path: Path) -> None:
    """sshfs mirrors mtime into the change time and NFS caches attributes: only file systems that
    keep change times (ext4, xfs, btrfs, tmpfs, overlay, ...) skip unchanged folders."""
    from generator.ledger.seen_runs import keeps_change_times

    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
        "40 22 0:45 / /home/me/remote rw,nosuid shared:20 - fuse.sshfs me@host:/pub rw\n"
        "41 22 0:46 / /mnt/nfs rw shared:21 - nfs4 server:/export rw\n"
        "42 22 0:47 / /mnt/my\\040disk rw shared:22 - xfs /dev/sdb1 rw\n"
    )
    assert keeps_change_times(Path("/srv/pub/runs"), info)
    assert not keeps_change_times(Path("/home/me/remote/pub/runs"), info)
    assert not keeps_change_times(Path("/mnt/nfs/pub/runs"), info)
    assert keeps_change_times(Path("/mnt/my disk/runs"), info)
    assert not keeps_change_times(Path("/srv/pub/runs"), tmp_path / "no-such-file")
