"""A publication as it stood at a git revision: `git archive` unpacked into a folder, for
`benchledger review` to judge both sides of a change. Nothing of the revision is executed;
the archive is unpacked with tarfile's `data` filter (no links out, no device files, no
absolute paths), so a hostile branch cannot write outside the folder."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from ..errors import BenchledgerError

TIMEOUT_S = 120
MAX_BYTES = 2 * 1024**3  # an archive past this is refused, not unpacked
REF = re.compile(r"^[A-Za-z0-9._/@^~{}:+-]{1,200}$")


def snapshot(repo: Path, ref: str, dest: Path) -> Path:
    """Unpack the tree of `ref` (a branch, tag, commit or `HEAD~1`) of the git repository at
    `repo` into `dest` and return it. The publication's own folder inside the repository is
    kept: a publication in a sub-folder of its repository is unpacked at that sub-folder."""
    if not REF.match(ref) or ref.startswith("-"):
        raise BenchledgerError(f"--base/--head {ref!r}: not a git revision; give a branch, tag or commit")
    if shutil.which("git") is None:
        raise BenchledgerError("git is not installed; review compares git revisions")
    prefix = _git(repo, "rev-parse", "--show-prefix").decode().strip()
    _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", what=ref)
    data = _git(repo, "archive", "--format=tar", ref, what=ref)
    if len(data) > MAX_BYTES:
        raise BenchledgerError(f"{ref}: its archive is over {MAX_BYTES // 1024**3} GiB; review a smaller change")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        try:
            archive.extractall(dest, filter="data")
        except tarfile.FilterError as err:
            raise BenchledgerError(f"{ref}: the tree holds {err}; it cannot be reviewed safely") from None
    return dest / prefix if prefix else dest


def _git(repo: Path, *args: str, what: str | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        raise BenchledgerError(f"git {args[0]} failed in {repo}: {err}") from None
    if done.returncode != 0:
        if what is not None:
            raise BenchledgerError(f"{what!r} is not a revision of the repository at {repo}; try `git log` to find one")
        raise BenchledgerError(f"{repo}: not inside a git repository; review compares git revisions")
    return done.stdout
