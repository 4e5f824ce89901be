"""What `serve` remembers of each run folder it read, so that a rebuild does not read an unchanged
folder again (`runs.load_run`): each file's and folder's signature, when they were read, and the
run they made; and whether the file system's change times can prove a file unchanged."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..errors import Problem
    from .records import Run

# a file's run-relative name, size, mtime, ctime, inode and device; a folder's likewise, its name
# ending in "/" and its size 0 (the run folder's own is "./")
Signature = tuple[str, int, int, int, int, int]
# (a folder's signatures, when they were read (ns), the run and its problems)
Held = tuple[tuple[Signature, ...], int, "Run", list["Problem"]]
SeenRuns = MutableMapping[str, Held]  # folder name -> what was held of it
# A file changed within this long before it was read may change again with the same signature (a
# file system's timestamps can be as coarse as 2 s: FAT): its folder is read again next time.
RACY_NS = 3_000_000_000


def unchanged(held: Held, signature: tuple[Signature, ...]) -> bool:
    """Is a folder whose entries now have `signature` the one `held` was read from? Every
    signature equal, and every change time over RACY_NS older than that read (as git trusts its
    index: a write in the same tick as the read could leave a signature as it was)."""
    return held[0] == signature and all(s[3] < held[1] - RACY_NS for s in signature)


# File systems that keep a file's change time apart from its modification time, so `touch -d`
# cannot put back what a write changed. Not FUSE (sshfs mirrors mtime), not NFS (attributes are
# cached up to a minute), not FAT (no change time at all).
CHANGE_TIMES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "bcachefs"})


def keeps_change_times(folder: Path, mountinfo: Path = Path("/proc/self/mountinfo")) -> bool:
    """Does the file system holding `folder` keep change times (`CHANGE_TIMES`)? On Linux, from the
    longest mount point over it in `mountinfo`; on macOS, yes (APFS and HFS+ do); on any other
    system, or if the mounts cannot be read, no."""
    if sys.platform == "darwin":
        return True
    try:
        mounts = mountinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    real, best, kind = os.path.realpath(folder), "", ""
    for line in mounts.splitlines():
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        point = parts[4].replace("\\040", " ")
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, rest.split()[0]
    return kind in CHANGE_TIMES
