"""Write generated files into docs_dir: only when their bytes change, only files
benchledger generated itself, and never anything outside docs_dir.

`.benchledger-generated.json` in docs_dir lists what benchledger wrote. A file is
overwritten or removed only when it is on that list, lies under one of the generated
folders (`render.outputs.OWNED`), is not a symlink, and, for a page, still starts with
the generated mark: a page a person wrote, or took over, is never touched. A file missing
from the list (the list was lost) is taken back only when it is a page with the generated
mark or holds exactly the bytes about to be written. The list is
untrusted input (it is a file in the repository): an entry that is not a path inside
docs_dir is an error naming the file. The list is rewritten atomically before any
output is written (naming both the old and the new files) and again at the end, so an
interrupted generation never leaves a file that a later build would refuse. MkDocs
skips dot-files, so the list is never published.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BenchledgerError, Problem
from ..forked import forked_map
from ..ledger.publication import SITE_MARKER, SITE_MARKER_TEXT
from ..render.outputs import OWNED
from ..render.templating import GENERATED_PREFIX

Stamp = tuple[bytes, int, int, int, int]  # sha256 of the bytes written, size, mtime_ns, ctime_ns, inode
Stamps = MutableMapping[str, Stamp]  # docs-relative path -> how benchledger left it

LIST_FILE = ".benchledger-generated.json"
MAX_LIST_BYTES = 64 * 1024 * 1024


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)


class Confined:
    """Paths under docs_dir: each folder resolved once, and refused if it leads outside."""

    def __init__(self, docs: Path) -> None:
        self.docs = docs
        self.folders: dict[str, Path] = {"": docs}
        self.owned_folders = tuple(o for o in OWNED if o.endswith("/"))

    def __call__(self, rel: str) -> Path:
        return self.folder(rel) / rel.rpartition("/")[2]

    def folder(self, rel: str) -> Path:
        """The resolved folder of a generated path, checked (a ValueError says why not)."""
        owned = rel in OWNED or rel.startswith(self.owned_folders)
        if not owned or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in rel.split("/")):
            raise ValueError(f"{rel!r} is not a generated path inside the docs folder")
        return self._inside(rel, rel.rpartition("/")[0])

    def _inside(self, rel: str, folder_rel: str) -> Path:
        """A folder under docs_dir, each part checked once: a symlink must stay inside docs_dir."""
        folder = self.folders.get(folder_rel)
        if folder is None:
            parent_rel, _, name = folder_rel.rpartition("/")
            folder = self._inside(rel, parent_rel) / name
            if folder.is_symlink() and not (folder := folder.resolve()).is_relative_to(self.docs):
                raise ValueError(f"{rel!r} leads outside the docs folder through a symlink; remove the symlink")
            self.folders[folder_rel] = folder
        return folder


def _ours(path: Path, listed: bool) -> bool:
    """May benchledger replace or remove this existing file?"""
    if not listed or path.is_symlink() or not path.is_file():
        return False
    if path.suffix == ".md":
        with path.open("rb") as fh:
            return fh.read(len(GENERATED_PREFIX)) == GENERATED_PREFIX.encode()
    return True


def _adoptable(path: Path, data: bytes) -> bool:
    """An unlisted file benchledger may take back (the list was lost, e.g. deleted as the
    corrupt-list error advises): a page that still opens with the generated mark, or a file
    holding exactly the bytes about to be written. Never a link or anything else."""
    if path.is_symlink() or not path.is_file():
        return False
    if path.suffix == ".md":
        return True  # _ours() then requires the generated mark
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def read_list(docs: Path, inside: Confined) -> set[str]:
    """The files the last generation wrote, validated: a located error for anything else."""
    path = docs / LIST_FILE
    where = f"{docs.name}/{LIST_FILE}"
    fix = "delete the file (benchledger rebuilds it, and will then refuse to replace files it did not write)"
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise BenchledgerError(Problem(file=where, message=f"is not a regular file; {fix}"))
    if not path.exists():
        return set()
    if path.stat().st_size > MAX_LIST_BYTES:
        raise BenchledgerError(Problem(file=where, message=f"is larger than {MAX_LIST_BYTES:,} bytes; {fix}"))
    data = path.read_bytes()
    known = _saved.get(str(path))
    if known is not None and known[0] == data:
        return set(known[1])  # the very bytes this process wrote or checked (`serve`'s rebuilds)
    try:
        entries = json.loads(data)
    except (ValueError, RecursionError):
        raise BenchledgerError(Problem(file=where, message=f"is not JSON; {fix}")) from None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise BenchledgerError(Problem(file=where, message=f"must be a JSON list of paths; {fix}"))
    for entry in entries:
        try:
            inside.folder(entry)
        except ValueError as err:
            raise BenchledgerError(Problem(file=where, message=f"entry {err}; {fix}")) from None
    _saved[str(path)] = (data, frozenset(entries))
    return set(entries)


def _save_list(docs: Path, entries: Iterable[str]) -> None:
    path = docs / LIST_FILE
    tmp = path.with_name(f"{LIST_FILE}.{os.getpid()}.tmp")
    listed = sorted(entries)
    data = (json.dumps(listed, indent=0) + "\n").encode()
    tmp.write_bytes(data)
    tmp.replace(path)
    _saved[str(path)] = (data, frozenset(listed))


# The list each docs folder was last given (or found to hold) by this process, by its bytes: a
# rebuild in the same process (`serve`) that reads the very same bytes does not parse and check
# 15,000 entries again. Every write and removal still goes through `Confined`.
_saved: dict[str, tuple[bytes, frozenset[str]]] = {}


def stamp(path: Path | str, sha: bytes) -> Stamp | None:
    """What a file written with bytes of this sha256 looks like now; None if it is gone."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (sha, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def write(
    docs_dir: Path | str,
    outputs: Mapping[str, bytes],
    stamps: Stamps | None = None,
    kept: Iterable[str] = (),
) -> WriteReport:
    """Bring docs_dir in line with `outputs`, refusing to touch anything a person wrote.
    `stamps` remembers what was written, so an unchanged file is not read back next time;
    `kept` names generated files the caller verified (by their stamps) to be current."""
    writer = Writer(docs_dir, stamps)
    kept = set(kept)
    writer.add(outputs, listed=kept)
    return writer.finish(kept)


class Writer:
    """`write` in batches: `add` writes one batch of outputs (a generation of 10,000 runs hands
    its runs' files over 1,000 runs at a time, so it never holds them all), `finish` removes what
    the last generation wrote and this one did not. Each batch is checked whole before any of
    its files is written, and the list names every file of a batch before the batch is written,
    so an interruption leaves only listed files."""

    def __init__(self, docs_dir: Path | str, stamps: Stamps | None = None) -> None:
        self.stamps: Stamps = {} if stamps is None else stamps
        self.docs = Path(docs_dir).resolve()
        self.inside = Confined(self.docs)
        self.previous = read_list(self.docs, self.inside)
        self.listed = set(self.previous)  # what the list on disk names now
        self.current: set[str] = set()  # every output added
        self.report = WriteReport()
        self.folders: set[Path] = set()  # made (or found) by this process: one mkdir per folder, not per file

    def add(self, outputs: Mapping[str, bytes], *, listed: Iterable[str] = ()) -> None:
        """Write one batch (paths not added before) unless unchanged; `listed`: other paths to
        name in the list from now on (the files a `write` keeps)."""
        stamps, docs = self.stamps, self.docs
        targets, absent = _targets(docs, outputs, self.inside, self.previous, stamps)
        self.current |= set(outputs)
        wanted = self.current | set(listed)
        if not self.listed >= wanted:
            self.listed |= wanted
            _save_list(docs, self.listed)  # before writing: an interruption leaves only listed files
        folders = self.folders

        def one(item: tuple[str, Path]) -> tuple[bool, Stamp | None]:
            """Write one output unless it is unchanged: (written, its stamp now)."""
            rel, target = item
            data = outputs[rel]
            sha = hashlib.sha256(data).digest()
            known = {rel: stamps[rel]} if rel in stamps else {}  # `_unchanged` restamps a file read back
            if rel not in absent and _unchanged(target, rel, data, sha, known):
                return False, known.get(rel)
            if target.parent not in folders:
                target.parent.mkdir(parents=True, exist_ok=True)
                folders.add(target.parent)
            if rel in absent and not rel.endswith(".md"):
                made = _created(target, data, sha)
                if made is not None:
                    return True, made
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
            return True, stamp(target, sha)

        items = list(targets.items())
        before = {rel: stamps[rel] for rel, _ in items if rel in stamps}
        for (rel, _), (wrote, now) in zip(items, forked_map(one, items, least=512, what="files written"), strict=True):
            if now is not None:
                stamps[rel] = now
            # a file a failed map's worker wrote is found unchanged when the map runs again here:
            # it is a new file, or one with a new inode (nothing is rewritten in place)
            known = before.get(rel)
            if wrote or rel in absent or (now is not None and known is not None and known[4] != now[4]):
                self.report.written.append(rel)
            else:
                self.report.unchanged += 1

    def finish(self, kept: Iterable[str] = ()) -> WriteReport:
        """Remove the files the last generation wrote that this one did not add or keep (`kept`:
        generated files the caller verified, by their stamps, to be current), and list the rest."""
        docs, report = self.docs, self.report
        kept = set(kept) - self.current
        report.unchanged += len(kept)
        current = self.current | kept
        for rel in sorted(self.previous - current):
            try:
                target = self.inside(rel)
            except ValueError as err:  # a listed folder became a link leading outside docs_dir
                raise BenchledgerError(Problem(file=f"{docs.name}/{LIST_FILE}", message=f"entry {err}")) from None
            if _ours(target, True):
                target.unlink()
                report.removed.append(rel)
                _prune(target.parent, docs)
        if self.listed != current or not (docs / LIST_FILE).is_file():
            _save_list(docs, current)
        for gone in set(self.stamps) - current:
            del self.stamps[gone]
        return report


def _targets(
    docs: Path, outputs: Mapping[str, bytes], inside: Confined, previous: set[str], stamps: Stamps
) -> tuple[dict[str, Path], set[str]]:
    """Where each output goes, and which of them hold nothing yet; every conflict with a file
    benchledger did not write, at once. A file is benchledger's when listed, when the build
    cache's stamp of its own write still matches it exactly, or when `_adoptable`."""
    targets, conflicts, absent = {}, [], set()
    for rel in sorted(outputs):
        try:
            target = targets[rel] = inside(rel)
        except ValueError as err:
            conflicts.append(Problem(file=f"{docs.name}/{rel}", message=f"cannot be written: {err}"))
            continue
        try:
            os.lstat(target)
        except FileNotFoundError:  # nothing there, not even a link: nothing to protect (a first build)
            absent.add(rel)
            continue
        except OSError:
            pass  # asked again below, where a file that cannot be read is refused
        known = stamps.get(rel)
        ours = known is not None and stamp(target, known[0]) == known and not target.is_symlink()
        listed = rel in previous or ours or _adoptable(target, outputs[rel])
        if (target.exists() or target.is_symlink()) and not _ours(target, listed):
            conflicts.append(
                Problem(
                    file=f"{docs.name}/{rel}",
                    message="exists and was not generated by benchledger, which generates this path; "
                    "move your file elsewhere (it is left untouched)",
                )
            )
    if conflicts:
        raise BenchledgerError(conflicts)
    return targets, absent


def _created(target: Path, data: bytes, sha: bytes) -> Stamp | None:
    """A file where nothing was (a first build's 13,000 chart specs and downloads), written in
    place: one file made, not a temporary one renamed over it. Nothing of that name may appear
    meanwhile, not even a link (O_EXCL, O_NOFOLLOW): then None, and the caller replaces it as
    usual. A write that fails or is interrupted removes the file; one killed outright leaves a
    listed file whose bytes differ from its stamp, which the next build writes again. Pages are
    never written so (a cut one could lose its generated mark, and be refused as a person's)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        return None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            info = os.fstat(fd)
    except BaseException:  # an error, Ctrl-C: no file cut short is left behind
        with contextlib.suppress(OSError):
            target.unlink()
        raise
    return (sha, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def _remember(path: Path, rel: str, sha: bytes, stamps: Stamps) -> None:
    now = stamp(path, sha)
    if now is not None:
        stamps[rel] = now


def _unchanged(path: Path, rel: str, data: bytes, sha: bytes, stamps: Stamps) -> bool:
    """Does the file hold `data` (whose sha256 is `sha`)? Trusts our own last write while the
    file's stat is untouched."""
    now = stamp(path, sha)
    if now is None or now[1] != len(data):
        return False
    if stamps.get(rel) == now:
        return True
    same = path.read_bytes() == data
    if same:
        _remember(path, rel, sha, stamps)
    return same


def _prune(folder: Path, docs: Path) -> None:
    """Remove folders left empty by removed generated files, up to docs_dir."""
    while folder != docs and folder.is_relative_to(docs):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def mark_site(site: Path) -> None:
    """Write SITE_MARKER into a built site, so a later `build --site-dir` knows the folder
    holds a site benchledger built (and may empty it without --force). Replaced atomically:
    a link of that name is replaced, never written through."""
    tmp = site / f"{SITE_MARKER}.{os.getpid()}.tmp"
    tmp.write_text(SITE_MARKER_TEXT, encoding="utf-8")
    os.replace(tmp, site / SITE_MARKER)
