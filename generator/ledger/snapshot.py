"""A publication as it stood at a git revision, for `benchledger review` to judge both sides
of a change. Nothing of the revision is executed, and nothing of it decides where a byte is
written: the tree is listed with `git ls-tree` (no `.gitattributes` of the revision applies,
so `export-ignore` cannot hide a file from the review) and each blob is written as a fresh
regular file under the scratch folder, every folder on its way made here and checked not to be
a link. Symlinks are made as the revision holds them, after every file, so no write passes
through one; the review then judges them as `check` judges a checkout (a link under runs/ is
a problem naming it), except that one leading out of the revision at mkdocs.yml or in the docs
folder is refused before anything is read through it (`refuse_links_out`). A submodule is an empty folder, as a
checkout without `--recurse-submodules` has it. File names are the revision's bytes (one that
is not UTF-8 stays itself), so two such names never become one. The total size is bounded
before anything is read into memory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import BenchledgerError

TIMEOUT_S = 120
MAX_BYTES = 2 * 1024**3  # a revision holding more than this is refused, not read
REF = re.compile(r"^[A-Za-z0-9._/@^~{}:+-]{1,200}$")
PART = re.compile(r"^[^/\x00]{1,255}$")


def snapshot(repo: Path, ref: str, dest: Path) -> Path:
    """Write the tree of `ref` (a branch, tag, commit or `HEAD~1`) of the git repository at
    `repo` into `dest`, and return the folder of the publication in it: `repo`'s own place in
    the repository (a publication in a sub-folder is found at that sub-folder)."""
    if not REF.match(ref) or ref.startswith("-"):
        raise BenchledgerError(f"--base/--head {ref!r}: not a git revision; give a branch, tag or commit")
    if shutil.which("git") is None:
        raise BenchledgerError("git is not installed; review compares git revisions")
    top = Path(_git(repo, "rev-parse", "--show-toplevel").decode().strip())
    prefix = repo.resolve().relative_to(top.resolve()).as_posix() if repo.resolve() != top.resolve() else ""
    _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", what=ref)
    listing = _git(top, "ls-tree", "-r", "-z", "--long", "--full-tree", ref, what=ref)
    inside = prefix + "/" if prefix else ""
    lines = [
        line
        for line in listing.split(b"\x00")
        if line and line.partition(b"\t")[2].decode(errors="replace").startswith(inside)
    ]
    entries = [_entry(ref, line) for line in lines]  # the publication's files only
    total = sum(size for _, _, size, _ in entries)
    if total > MAX_BYTES:
        raise BenchledgerError(f"{ref}: its files hold {total:,} bytes, over {MAX_BYTES // 1024**3} GiB; review less")
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    stored = [(mode, blob) for mode, blob, _, _ in entries if mode != GITLINK]
    blobs = iter(_blobs(top, [blob for _, blob in stored], ref))  # one git process for every file
    links = []
    for mode, _, _, path in entries:
        target = _folder(root, path, ref) / path.rsplit("/", 1)[-1]
        if mode == GITLINK:
            target.mkdir(exist_ok=True)
        elif mode == LINK:
            links.append((target, next(blobs), path))
        else:
            _write(target, next(blobs), mode, path, ref)
    for target, points_to, path in links:  # last: no file is written after a link exists
        _link(root, target, points_to, path, ref)
    return root / prefix if prefix else root


GITLINK, LINK = "160000", "120000"


def _folder(root: Path, path: str, ref: str) -> Path:
    """The folder `path` goes in, made part by part under `root`, none of them a link."""
    folder = root
    for part in path.split("/")[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise BenchledgerError(f"{ref}: {path!r} lies under {part!r}, which the revision also holds as a file")
        folder.mkdir(exist_ok=True)
    return folder


def _write(target: Path, data: bytes, mode: str, path: str, ref: str) -> None:
    try:
        with open(target, "xb") as out:  # a fresh file: never through an existing link
            out.write(data)
    except FileExistsError:
        raise BenchledgerError(f"{ref}: {path!r} is in the revision twice; the tree is damaged (git fsck)") from None
    if mode == "100755":
        target.chmod(0o755)


def _link(root: Path, target: Path, points_to: bytes, path: str, ref: str) -> None:
    if target.parent.resolve() != target.parent or not target.parent.is_relative_to(root):
        raise BenchledgerError(f"{ref}: {path!r} lies under a symlink; the tree is damaged (git fsck)")
    try:
        os.symlink(points_to, target)
    except (OSError, ValueError) as err:
        why = "it is in the revision twice" if isinstance(err, FileExistsError) else "its target cannot be a link's"
        raise BenchledgerError(f"{ref}: symlink {path!r} cannot be made: {why}") from None


def refuse_links_out(root: Path, paths: Sequence[str], ref: str) -> None:
    """Refuse, naming it, a symlink at or under any of `paths` (relative to `root`: what review
    reads through links, mkdocs.yml and the docs folder) that leads out of `root`; links to
    folders inside are walked too. `check` refuses such a link under the docs folder as well;
    review refuses it before anything is read through it, so no file of the machine that
    reviews (a CI runner's) can reach the comment."""
    root = root.resolve()
    stack, seen = [root / rel for rel in paths], set()
    while stack:
        path = stack.pop()
        if path.is_symlink():
            real = Path(os.path.realpath(path))
            if not real.is_relative_to(root):
                shown = path.relative_to(root).as_posix()
                raise BenchledgerError(
                    f"{ref}: {shown!r} is a symlink to {os.readlink(path)!r}, out of the revision; "
                    "check refuses it too, and review does not follow it"
                )
            path = real
        if path.is_dir() and path not in seen:
            seen.add(path)
            stack += sorted(path.iterdir())


def merge_base(repo: Path, base: str, head: str) -> str:
    """The commit where `head` forked from `base` (`git merge-base`), as a full hash: the side a
    change is reviewed against, so what `base` gained since is not read as removed by it."""
    for ref in (base, head):
        if not REF.match(ref) or ref.startswith("-"):
            raise BenchledgerError(f"--base/--head {ref!r}: not a git revision; give a branch, tag or commit")
    if shutil.which("git") is None:
        raise BenchledgerError("git is not installed; review compares git revisions")
    for ref in (base, head):
        _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", what=ref)
    try:
        return _git(repo, "merge-base", f"{base}^{{commit}}", f"{head}^{{commit}}", what=base).decode().strip()
    except BenchledgerError:
        raise BenchledgerError(
            f"--base {base!r} and {head!r} share no history (no merge base); "
            "review compares a change with where it started"
        ) from None


GUARDED = (":(top).github/workflows", "mkdocs.yml", "allowed_signers")  # what decides how a change is judged
STATUS = {"A": "added", "M": "changed", "D": "removed", "T": "changed"}


def guarded_changes(
    repo: Path, start: str, head: str | None, paths: Sequence[str] = GUARDED
) -> tuple[tuple[str, str], ...]:
    """The workflow files, mkdocs.yml and allowed_signers (or the files `paths` names, as git
    pathspecs from `repo`) that `head` (default: the working tree) adds, changes or removes
    since `start`, as (path from the repository's top, what happened)."""
    if not paths:
        return ()
    revs = (start,) if head is None else (start, head)
    out = _git(repo, "diff", "--name-status", "--no-renames", "-z", *revs, "--", *paths, what=start)
    parts = [p.decode("utf-8", "backslashreplace") for p in out.split(b"\0") if p]
    return tuple((path, STATUS.get(code[:1], "changed")) for code, path in zip(parts[::2], parts[1::2], strict=True))


MAX_WORKFLOW = 1024**2  # a workflow file over 1 MiB is named, not read


def file_at(repo: Path, ref: str | None, path: str) -> bytes | None:
    """The bytes of `path` (from the repository's top) at `ref`, or in the working tree when
    `ref` is None (a regular file only, never through a link); None when there is none, or it
    is over 1 MiB."""
    try:
        top = Path(_git(repo, "rev-parse", "--show-toplevel").decode().strip())
        if ref is None:
            found = top / path
            if found.is_symlink() or not found.is_file() or found.stat().st_size > MAX_WORKFLOW:
                return None
            return found.read_bytes()
        size = _git(top, "cat-file", "-s", f"{ref}:{path}", what=ref)
        if int(size) > MAX_WORKFLOW:
            return None
        return _git(top, "cat-file", "blob", f"{ref}:{path}", what=ref)
    except (BenchledgerError, OSError, ValueError):
        return None


def _blobs(top: Path, ids: list[str], ref: str) -> list[bytes]:
    """The bytes of each blob, in order, read by one `git cat-file --batch`."""
    if not ids:
        return []
    out = _git(top, "cat-file", "--batch", what=ref, stdin=("\n".join(ids) + "\n").encode())
    found, at = [], 0
    for blob in ids:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].decode(errors="replace").split()
        if len(header) != 3 or header[:2] != [blob, "blob"]:
            raise BenchledgerError(f"{ref}: git cannot read blob {blob}; the repository may be damaged (git fsck)")
        size = header[2]
        start = header_end + 1
        found.append(out[start : start + int(size)])
        at = start + int(size) + 1  # the content, then a newline
    return found


def _entry(ref: str, line: bytes) -> tuple[str, str, int, str]:
    """(mode, object id, size, path) of one `ls-tree --long -z` line: a file, a symlink or a
    submodule (size 0); the path as its bytes (os.fsdecode), checked part by part."""
    meta, _, raw = line.partition(b"\t")
    mode, kind, blob, size = meta.decode().split()
    path = os.fsdecode(raw)
    if mode not in ("100644", "100755", LINK, GITLINK) or kind not in ("blob", "commit"):
        raise BenchledgerError(f"{ref}: {path!r} is a {kind} of mode {mode}; git checks out no such entry")
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..", ".git") or not PART.match(p) for p in parts):
        raise BenchledgerError(f"{ref}: {path!r} is not a plain relative path; it cannot be reviewed safely")
    return mode, blob, 0 if mode == GITLINK else int(size), path


def _git(repo: Path, *args: str, what: str | None = None, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], input=stdin, capture_output=True, timeout=TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as err:
        raise BenchledgerError(f"git {args[0]} failed in {repo}: {err}") from None
    if done.returncode != 0:
        if what is not None:
            raise BenchledgerError(f"{what!r} is not a revision of the repository at {repo}; try `git log` to find one")
        raise BenchledgerError(f"{repo}: not inside a git repository; review compares git revisions")
    return done.stdout
