"""When each receipt signature was committed, from git: the time a signature is judged at,
so that a signer cannot pick it by writing an old `date:` (an expired key would sign a
backdated receipt). A signature that is not committed, or modified since, gets no time."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

TIMEOUT_S = 20


def _git(root: Path, *args: str) -> str | None:
    if shutil.which("git") is None:
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def commit_times(root: Path, paths: Sequence[str]) -> dict[str, dt.datetime]:
    """Repository-relative path -> the committer time of the last commit that changed it, for
    each path that is committed and unchanged since; missing for the others."""
    if not paths or _git(root, "rev-parse", "--is-inside-work-tree") is None:
        return {}
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *paths)
    if status is None:
        return {}
    dirty = {line[3:].strip() for line in status.splitlines() if len(line) > 3}
    out = {}
    for path in paths:
        if path in dirty:
            continue
        stamp = _git(root, "log", "-1", "--format=%ct", "--", path)
        if stamp and stamp.strip().isdigit():
            out[path] = dt.datetime.fromtimestamp(int(stamp.strip()), dt.UTC)
    return out
