"""Generated files reach the site folder without a second copy: a hard link to the file
benchledger wrote into docs_dir (13,000 chart specs and downloads at 1,000 runs, which MkDocs
would otherwise copy byte by byte). Where a link cannot be made (the site folder on another
file system, a file system without links) the file is copied as MkDocs copies it.

A link is safe here because benchledger never changes a file it wrote in place: the writer
replaces a file (`site.files.write`: a new file renamed over the old), so the site keeps the
bytes it was built with, and MkDocs empties the site folder before a build by removing files.

Making or removing a link changes the file's change time, which the build cache's stamp of it
holds (`site.files.Stamp`). After the build each file linked in it is stamped again
(`restamp`), so the next build trusts it: without reading it when only its change time moved
(the generation of this same build verified or wrote it, stamp and all, moments before the
link), else only when it is read back and still holds the bytes benchledger wrote.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

from mkdocs.structure.files import File, Files

from ..render.outputs import OWNED
from .files import Stamps, stamp


class _WorkedOut:
    """One of MkDocs' cached properties of a `File`, worked out by MkDocs' own function each time
    it is read instead of kept; a value set (by another plugin) is kept, as MkDocs keeps it, and
    deleting it goes back to working it out."""

    def __init__(self, cached: functools.cached_property[Any]) -> None:
        self.work_out = cached.func

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, file: File | None, owner: type | None = None) -> Any:
        if file is None:
            return self
        held = file.__dict__
        return held[self.name] if self.name in held else self.work_out(file)

    def __set__(self, file: File, value: Any) -> None:
        file.__dict__[self.name] = value

    def __delete__(self, file: File) -> None:
        file.__dict__.pop(self.name, None)


class LinkedFile(File):
    """A static file of the site that is hard-linked from docs_dir, not copied."""

    linked = False  # linked (or copied) in this build: only such a file's stamp can have moved
    fresh = True  # written by this build's generation (`link_generated` says which were not)
    restore: dict[str, str] | None = None  # site folder -> its kept copy, "" once moved back (`restorable`)
    kept_copy: str | None = None  # the file itself, kept from the last build, when its folder is not moved back

    # Worked out when asked, not kept on each file as MkDocs' cached properties keep them: 144,000
    # such files at 10,000 runs held 120 MB of their names, paths and URLs to the end of the build.
    name = _WorkedOut(File.__dict__["name"])
    url = _WorkedOut(File.__dict__["url"])
    abs_src_path = _WorkedOut(File.__dict__["abs_src_path"])
    abs_dest_path = _WorkedOut(File.__dict__["abs_dest_path"])

    def copy_file(self, dirty: bool = False) -> None:
        if self.restore is not None and self._restored():
            return
        if dirty and not self.fresh:
            return  # a dirty build (serve --dirty): unchanged since the last build, which put it there
        if dirty and not self.is_modified():
            return
        self.linked = True
        source, target = self.abs_src_path, self.abs_dest_path
        if source is None or self._content is not None or os.path.islink(source):
            super().copy_file(dirty)
            return
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.lexists(target):
                os.unlink(target)  # a link of that name is replaced, never written through
            os.link(source, target)
        except OSError:  # another file system, or none that links: a copy
            super().copy_file(dirty)

    def _restored(self) -> bool:
        """Is the file in place because its whole folder was moved back from the kept copy?"""
        assert self.restore is not None
        folder = os.path.dirname(self.abs_dest_path)
        kept = self.restore.get(folder)
        if kept is None:
            return self._moved_back()
        if kept == "":
            return True
        try:
            os.makedirs(os.path.dirname(folder), exist_ok=True)
            os.rename(kept, folder)
        except OSError:  # the folder is there already (not empty), or the kept copy is gone
            del self.restore[folder]
            return False
        self.restore[folder] = ""
        return True

    def _moved_back(self) -> bool:
        """Is the file in place because its kept copy (the same file) was moved back?"""
        if self.kept_copy is None:
            return False
        try:
            os.makedirs(os.path.dirname(self.abs_dest_path), exist_ok=True)
            if os.path.lexists(self.abs_dest_path):
                return False
            os.rename(self.kept_copy, self.abs_dest_path)
        except OSError:
            return False
        return True


WORKED_OUT = (LinkedFile.name, LinkedFile.url, LinkedFile.abs_src_path, LinkedFile.abs_dest_path)


def link_generated(files: Files, written: Collection[str] | None = None) -> None:
    """Every generated static file (under benchledger's own folders of docs_dir) is linked into
    the site instead of copied; pages and the publisher's own files are left to MkDocs.
    `written`: the files this build's generation wrote (a dirty build links only those, and
    files missing from the site)."""
    folders = tuple(o for o in OWNED if o.endswith("/"))
    for file in files:
        if not file.is_documentation_page() and file.src_uri.startswith(folders) and type(file) is File:
            for worked in WORKED_OUT:  # a value as MkDocs works it out is worked out again when asked;
                held = file.__dict__  # one another plugin set is kept
                if worked.name in held and held[worked.name] == worked.work_out(file):
                    del held[worked.name]
            file.__class__ = LinkedFile
            if written is not None:
                cast(LinkedFile, file).fresh = file.src_uri in written


def restamp(docs: Path, files: Files, stamps: Stamps) -> None:
    """The build cache's stamps of the linked files, taken again where the file still holds the
    bytes it was written with; a file that does not is forgotten (read and compared next time)."""
    for file in files:
        if not isinstance(file, LinkedFile) or not file.linked:
            continue  # not linked in this build (serve --dirty): nothing moved
        known = stamps.get(file.src_uri)
        if known is None:
            continue
        path = docs / file.src_uri
        now = stamp(path, known[0])
        if now == known:
            continue
        if now is not None and (now[:3], now[4]) == (known[:3], known[4]):
            stamps[file.src_uri] = now  # only its change time moved: the link this build made
            continue
        try:
            same = hashlib.sha256(path.read_bytes()).digest() == known[0]
        except OSError:
            same = False
        now = stamp(path, known[0]) if same else None
        if now is None:
            del stamps[file.src_uri]
        else:
            stamps[file.src_uri] = now


KEPT = ".benchledger-kept"  # MkDocs keeps a site folder's dot-entries when it empties it


def set_aside(site: Path) -> Path | None:
    """Before MkDocs empties the site folder of a site benchledger built: the folders it owns
    there (runs/, claims/, history/, ...) are moved into `site/.benchledger-kept/`, so that the
    folders of linked files that did not change can be moved back whole (`restorable`) instead
    of 13,000 files unlinked and linked again. The kept folder, whatever was not moved back, is
    removed after the build (`drop`); one left by a build cut short, before the next."""
    kept = site / KEPT
    drop(kept)
    owned = sorted({o.split("/")[0] for o in OWNED if o.endswith("/")})
    moved = False
    for name in owned:
        path = site / name
        if path.is_dir() and not path.is_symlink():
            kept.mkdir(mode=0o700, exist_ok=True)
            os.rename(path, kept / name)
            moved = True
    return kept if moved else None


def restorable(kept: Path, site: Path, files: Files) -> None:
    """Each folder of the site whose kept copy holds exactly the linked files MkDocs would put
    there, each the very file (inode) it would link, is moved back whole when its first file is
    copied (`LinkedFile.copy_file`); every other file is linked as before. Inodes are read from
    the folders' listings (`os.scandir`), not by a stat of each of 13,000 files."""
    groups: dict[str, list[LinkedFile]] = {}
    for file in files:
        if isinstance(file, LinkedFile) and file.abs_src_path is not None and file._content is None:
            groups.setdefault(os.path.dirname(file.abs_dest_path), []).append(file)
    listed = _Listings()
    restore: dict[str, str] = {}
    for folder, group in groups.items():
        rel = os.path.relpath(folder, site)
        copy = kept / rel
        if rel.startswith("..") or not copy.is_dir() or copy.is_symlink():
            continue
        held = listed.of(str(copy))
        if held is None:
            continue
        same = [listed.same(held, os.path.basename(f.abs_dest_path), cast(str, f.abs_src_path)) for f in group]
        if all(same) and len(held[1]) == len(group):  # nothing else in the folder
            restore[folder] = str(copy)
            continue
        for file, one in zip(group, same, strict=True):  # a folder that holds more (a page): each unchanged file alone
            if one:
                file.kept_copy = str(copy / os.path.basename(file.abs_dest_path))
    for group in groups.values():
        for file in group:
            file.restore = restore


Listing = tuple[int, dict[str, int | None]]  # a folder's device, and each entry's inode (None: not a regular file)


class _Listings:
    """Folders' listings, each read once: the inode of each regular file in them, from the
    directory entries themselves (no stat per file)."""

    def __init__(self) -> None:
        self.known: dict[str, Listing | None] = {}

    def of(self, folder: str) -> Listing | None:
        """The folder's listing; None when it cannot be read, or when its files do not lie on the
        folder's own device (overlayfs reports each layer's for a file, its own for a folder:
        an inode there names a file only with the file's device, so nothing is moved back)."""
        if folder not in self.known:
            try:
                with os.scandir(folder) as listing:
                    entries = [(e, e.is_file(follow_symlinks=False)) for e in listing]
                device = os.stat(folder).st_dev
                first = next((e for e, regular in entries if regular), None)
                same = first is None or first.stat(follow_symlinks=False).st_dev == device
                inodes = {e.name: e.inode() if regular else None for e, regular in entries}
                self.known[folder] = (device, inodes) if same else None
            except OSError:
                self.known[folder] = None
        return self.known[folder]

    def same(self, held: Listing, name: str, source: str) -> bool:
        """Is `name` in the kept folder the very file `source` is (same device and inode)?"""
        origin = self.of(os.path.dirname(source))
        if origin is None or origin[0] != held[0]:
            return False
        inode = held[1].get(name)
        return inode is not None and origin[1].get(os.path.basename(source)) == inode


def drop(kept: Path) -> None:
    """Remove the kept folder and whatever it still holds; anything else of that name (a link,
    which is never followed, or a file) is removed too, so nothing is set aside through it."""
    if kept.is_symlink() or kept.is_file():
        kept.unlink()
    elif kept.is_dir():
        shutil.rmtree(kept, ignore_errors=True)
