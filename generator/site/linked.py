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

import hashlib
import os
from collections.abc import Collection
from pathlib import Path
from typing import cast

from mkdocs.structure.files import File, Files

from ..render.outputs import OWNED
from .files import Stamps, stamp


class LinkedFile(File):
    """A static file of the site that is hard-linked from docs_dir, not copied."""

    linked = False  # linked (or copied) in this build: only such a file's stamp can have moved
    fresh = True  # written by this build's generation (`link_generated` says which were not)

    def copy_file(self, dirty: bool = False) -> None:
        if dirty and not self.fresh and os.path.lexists(self.abs_dest_path):
            return  # a dirty build (serve --dirty): the site holds it since the last build
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


def link_generated(files: Files, written: Collection[str] | None = None) -> None:
    """Every generated static file (under benchledger's own folders of docs_dir) is linked into
    the site instead of copied; pages and the publisher's own files are left to MkDocs.
    `written`: the files this build's generation wrote (a dirty build links only those, and
    files missing from the site)."""
    folders = tuple(o for o in OWNED if o.endswith("/"))
    for file in files:
        if not file.is_documentation_page() and file.src_uri.startswith(folders) and type(file) is File:
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
