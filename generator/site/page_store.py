"""Pages' HTML kept on disk, by the sha256 of its bytes, beside the build cache.

A build of 10,000 runs makes 11,000 generated pages: their converted HTML (40 KB each) and the
page the theme made of each (60 KB), which the next build reuses. Held in the build cache's
pickle they were 1.1 GB in memory and a pickle as large, loaded and saved on every build. Here
each is one file, `<sha256>.html` in the folder `benchledger-build-<hash>.pages/` beside the
cache file, and the cache holds its digest: a build reads the pages it reuses, when MkDocs
writes them, and a forked worker (`generator.forked`) writes the pages it made itself,
so they never travel back to the build's process.

A file is written once (under a temporary name, then renamed), never changed, and removed when
no page of the saved cache names it (`keep_only`). The folder has the cache's trust: it is the
user's own (`site.cache`), and its files only ever become pages of the site they were built for.
A cache that is not saved (`build --no-cache`, tests) keeps its store in a temporary folder,
removed when the store is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterable
from pathlib import Path

SUFFIX = ".html"


def encoded(text: str) -> bytes:
    """The bytes of a page as MkDocs writes them (`mkdocs.commands.build._build_page`)."""
    return text.encode("utf-8", errors="xmlcharrefreplace")


class PageStore:
    """Page HTML by the sha256 of its bytes, in `folder` (a temporary one when None)."""

    def __init__(self, folder: Path | None = None) -> None:
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="benchledger-pages-"))
            weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        self.folder = folder

    def put(self, text: str) -> str:
        """Keep a page (once); its digest."""
        data = encoded(text)
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / f"{digest}{SUFFIX}"
        if not path.exists():
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = self.folder / f".{digest}.{os.getpid()}.tmp"
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
                fh.write(data)
            tmp.replace(path)
        return digest

    def get(self, digest: str) -> str | None:
        """A kept page's HTML; None when it is not kept (removed since: the page is made again)."""
        try:
            return (self.folder / f"{digest}{SUFFIX}").read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def has(self, digest: str) -> bool:
        return (self.folder / f"{digest}{SUFFIX}").is_file()

    def keep_only(self, digests: Iterable[str]) -> None:
        """Remove every kept page but these (and any file of a write cut short)."""
        keep = {f"{d}{SUFFIX}" for d in digests}
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.name not in keep and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
