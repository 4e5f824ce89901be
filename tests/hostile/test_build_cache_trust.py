"""The build cache touches only its own files and loads code only from the user's own folder:
a cache folder shared with the user's files keeps them, and a pickle or compiled template in a
folder (or file) others can write is never loaded."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.site.cache import cache_file
from helpers import measured_run, publication, write_tree

OLD = time.time() - 60 * 86400


class Planted:
    """What an attacker leaves in a shared cache folder: unpickling it creates a folder."""

    def __init__(self, mark: Path) -> None:
        self.mark = mark

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.mark),))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "pub", publication(measured_run()))


def check(repo: Path, cache: Path, what: str = "check") -> subprocess.CompletedProcess[str]:
    """`check` reads the cache; `generate` reads and saves it."""
    command = [sys.executable, "-m", "generator.cli", what, "--repo", str(repo)]
    env = {**os.environ, "BENCHLEDGER_BUILD_CACHE": str(cache)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def named(repo: Path, folder: Path) -> Path:
    """The cache file benchledger would read for `repo` in `folder`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHLEDGER_BUILD_CACHE", str(folder))
        return cache_file(repo)


def plant(repo: Path, folder: Path, mark: Path) -> Path:
    target = named(repo, folder)
    target.write_bytes(pickle.dumps(Planted(mark)))
    return target


def test_only_benchledgers_own_old_files_are_removed(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o700)
    theirs = [folder / "notes.pickle", folder / "model.pickle", folder / "benchledger-build-notes.pickle"]
    ours = folder / ("benchledger-build-" + "0" * 24 + ".pickle")
    for path in [*theirs, ours]:
        path.write_bytes(b"x")
        os.utime(path, (OLD, OLD))
    done = check(repo, folder, "generate")
    assert done.returncode == 0, done.stderr
    assert all(p.exists() for p in theirs)
    assert not ours.exists()
    assert sorted(folder.glob("*.pickle")) == sorted([*theirs, named(repo, folder)])


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777])
def test_a_pickle_in_a_folder_others_can_write_is_never_loaded(repo: Path, tmp_path: Path, mode: int) -> None:
    folder, mark = tmp_path / "shared", tmp_path / "code-ran"
    folder.mkdir()
    folder.chmod(mode)
    planted = plant(repo, folder, mark)
    done = check(repo, folder, "generate")
    assert done.returncode == 0, done.stderr
    assert not mark.exists()
    assert (
        f"benchledger: build cache {folder} not used: other users can write to it, and loading it would run its "
        "code; set BENCHLEDGER_BUILD_CACHE to a folder of your own\n"
    ) in done.stderr
    assert planted.read_bytes() == pickle.dumps(Planted(mark))  # not replaced either


def test_a_pickle_others_can_write_is_never_loaded(repo: Path, tmp_path: Path) -> None:
    folder, mark = tmp_path / "mine", tmp_path / "code-ran"
    folder.mkdir(mode=0o700)
    planted = plant(repo, folder, mark)
    planted.chmod(0o666)
    done = check(repo, folder)
    assert done.returncode == 0 and not mark.exists()
    assert f"benchledger: build cache {planted} not used: other users can write to it" in done.stderr


def test_a_pickle_linked_from_elsewhere_is_never_loaded(repo: Path, tmp_path: Path) -> None:
    folder, mark = tmp_path / "mine", tmp_path / "code-ran"
    folder.mkdir(mode=0o700)
    planted = plant(repo, folder, mark)
    elsewhere = tmp_path / "elsewhere.pickle"
    planted.rename(elsewhere)
    planted.symlink_to(elsewhere)
    done = check(repo, folder)
    assert done.returncode == 0 and not mark.exists()
    assert f"benchledger: build cache {planted} not used: it is not a regular file" in done.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_cache_folder_owned_by_someone_else_is_never_loaded(repo: Path, tmp_path: Path) -> None:
    folder, mark = tmp_path / "theirs", tmp_path / "code-ran"
    folder.mkdir(mode=0o755)
    plant(repo, folder, mark)
    os.chown(folder, 4242, 4242)
    done = check(repo, folder)
    assert done.returncode == 0 and not mark.exists()
    assert f"benchledger: build cache {folder} not used: it is not owned by you" in done.stderr


def test_the_cache_it_writes_is_private(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "new" / "builds"
    assert check(repo, folder, "generate").returncode == 0
    assert folder.stat().st_mode & 0o777 == 0o700
    (saved,) = folder.glob("benchledger-build-*.pickle")
    assert saved.stat().st_mode & 0o777 == 0o600
