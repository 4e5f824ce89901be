"""The build cache: what one build can reuse from the last, in this process (`serve`
keeps it across rebuilds) and across processes (`benchledger build` after a change).

It holds eleven things on disk, all but the chart templates keyed so that each is used only when it can be re-verified:

- parsed runs, by the run folder's name and the sha256 of every file in it (the files
  are read and hashed on every build; only the YAML and CSV parsing is saved);
- which files each run's pages were rendered to, by the run's digest, its receipts'
  state, the confidence level and the code that rendered them;
- what each generated file was written with: the sha256 of its bytes and its size,
  modification time, change time and inode. A run's pages are kept only while every
  one of its files still has exactly that stat; a file edited, touched, replaced or
  removed since is rendered again;
- each claim's evaluation, by everything it was evaluated from (`claims.evaluation_key`: the
  claim, the verdict settings, its corrections and its runs' digests and receipt states);
- the links and anchors of each built page, by the sha256 of the page's bytes (the link crawl
  reads every page again, and parses only those whose bytes changed);
- the HTML of each generated page (`site.page_html`), by its Markdown, its URL, the site's files
  and the Markdown settings, so an unchanged page is not converted again, and the page the theme
  made of it: both as digests of files in the page store (`site.page_store`), a folder beside
  the cache file (`benchledger-build-<hash>.pages/`);
- history, by everything it was followed from (`site.pipeline.history_key`: each run's id and
  digest, the verdict settings, the along-keys and the history files), and the History pages,
  by that and everything else they show (the claims on each run, the site's address and name);
- the chart templates (`render.chart_templates.ChartTemplates`), which depend only on the code;
- each run's summary (`analysis.summaries.RunSummary`), by the run's digest and the confidence
  level: history reads every run's, and a rebuild after one change summarizes one run;
- the theme's templates compiled (Jinja's bytecode, which Jinja checks against the source of
  its template before using it);
- each History series' page and chart, by everything they are rendered from
  (`render.history_pages.series_key`, kept in `history`), and, under `serve` only (in memory,
  never saved), each claim's page and charts likewise (`render.outputs.claim_key`);
- under `serve` only, in memory: where each internal link of the built site led, by the
  site's files and folders (`site.links.broken_links`); what history read of each run, by its
  digest, the along-keys and its summary (`analysis.series.build_series`); and each run folder's
  files' signatures when it was last read, and the run they made (`ledger.runs.load_run`).

It is an object its owner passes to what uses it: the plugin holds one across `serve`
rebuilds, a command loads one per build. Nothing here is module state.

On disk it is one file per publication in the user's cache folder ($BENCHLEDGER_BUILD_CACHE,
else `builds/` under $BENCHLEDGER_CACHE, $XDG_CACHE_HOME/benchledger or ~/.cache/benchledger),
named `benchledger-build-<hash of the publication's absolute path>.pickle`: never in the
repository, so a cloned repository cannot bring one. It holds one pickle of the code's version,
then one per part, each with its own memo (one memo of every object would add 100 MB to the
peak of a 10,000-run build); the parts are read only when the version is this code's. Loading a pickle runs
code, so it is read (and written) only when the folder is the user's own and writable by
nobody else, and the file too (not a link, owned by the user, not group- or world-writable);
otherwise the build runs without a cache and says why. Old cache files (not built for 30 days) are removed, and only
files with benchledger's own name: the folder may be shared with other files. It is
tagged with a hash of benchledger's own code, so any other version (or an edited
template) starts empty. A cache file that cannot be read is ignored and replaced.
Deleting it, or `benchledger build --no-cache`, only costs time. `prune()` keeps it to
one copy of the current publication.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import itertools
import logging
import os
import pickle
import re
import shutil
import stat
import sys
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, BinaryIO

from ..analysis.claims import Remembered
from ..analysis.receipts import RunReceipts
from ..analysis.series import KnownRows
from ..analysis.summaries import RunSummary
from ..forked import reduce_read_only
from ..ledger.runs import ParsedRuns
from ..ledger.seen_runs import SeenRuns
from ..render.chart_templates import ChartTemplates
from ..render.ledger_files import Fragments
from ..render.outputs import ClaimPages
from .collector import paused
from .files import stamp
from .links import Crawled
from .packed_stamps import PackedStamps
from .page_store import PageStore

if TYPE_CHECKING:  # MkDocs and Markdown are imported only by a build that converts pages
    from .page_html import Remembered as RememberedPages
from .vega import cache_dir

RenderKey = tuple[str, RunReceipts | None, float]  # run digest, receipt state, confidence
PACKAGE = Path(__file__).resolve().parents[1]
# Libraries whose version can change a cached value: statistics, charts, templates, parsing.
OUTPUT_LIBRARIES = ("numpy", "scipy", "statsmodels", "altair", "jinja2", "markupsafe", "pydantic", "pyyaml")
NO_CACHE = "BENCHLEDGER_NO_CACHE"
FORGET_AFTER_S = 30 * 86400
PREFIX = "benchledger-build-"
OURS = re.compile(rf"^{PREFIX}[0-9a-f]{{24}}\.pickle$")
log = logging.getLogger("benchledger")


def cache_file(root: Path) -> Path:
    """Where the cache of the publication at `root` is kept."""
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
    return builds_dir() / f"{PREFIX}{name}.pickle"


def untrusted(path: Path, folder: bool) -> str | None:
    """Why code may not be loaded from `path` (None: it is the user's own): a folder (links
    followed) or a file (never a link) must be owned by the user and writable by nobody else."""
    try:
        info = os.stat(path) if folder else os.lstat(path)
    except OSError:
        return "it cannot be read"
    if not (stat.S_ISDIR if folder else stat.S_ISREG)(info.st_mode):
        return "it is not a folder" if folder else "it is not a regular file"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return "it is not owned by you"
    if info.st_mode & 0o022:
        return "other users can write to it"
    return None


def builds_dir() -> Path:
    """Where build caches are kept: $BENCHLEDGER_BUILD_CACHE, else builds/ in the cache folder."""
    chosen = os.environ.get("BENCHLEDGER_BUILD_CACHE")
    return Path(chosen) if chosen else cache_dir() / "builds"


def _distrusted(path: Path) -> tuple[Path, str] | None:
    """The cache folder, or else the cache file, that is not the user's own, and why."""
    if not path.parent.exists():
        return None  # nothing to load; saving creates it privately
    why = untrusted(path.parent, folder=True)
    if why is not None:
        return path.parent, why
    why = untrusted(path, folder=False) if path.exists() or path.is_symlink() else None
    return (path, why) if why is not None else None


@functools.cache
def code_version() -> str:
    """A hash of every file of the benchledger package, of Python's version and of the versions
    of the libraries that compute or write what the cache holds: a cache from other code is not used."""
    digest = hashlib.sha256(sys.version.encode())
    for library in OUTPUT_LIBRARIES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            digest.update(f"{library} {importlib.metadata.version(library)}\0".encode())
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


CHUNK = 500  # entries of a part pickled at a time


def _dump_part(pickler: pickle.Pickler, part: dict[Any, Any]) -> None:
    """A part as its number of chunks, then each chunk (a dict of up to `CHUNK` entries) with a
    memo of its own: the pickler's memo of every object it wrote lasts one chunk, not the part
    (at 10,000 runs a build's cache save grew the process by 80 MB), and loading one holds as little."""
    items = iter(part.items())
    pickler.dump(-(-len(part) // CHUNK))
    pickler.clear_memo()
    while chunk := dict(itertools.islice(items, CHUNK)):
        pickler.dump(chunk)
        pickler.clear_memo()


def _load_part(fh: BinaryIO) -> dict[Any, Any]:
    """A part as `_dump_part` wrote it."""
    count = pickle.load(fh)
    if not isinstance(count, int):
        raise ValueError("not a part")
    part: dict[Any, Any] = {}
    for _ in range(count):
        chunk = pickle.load(fh)
        if not isinstance(chunk, dict):
            raise ValueError("not a part")
        part.update(chunk)
    return part


def _holds(path: str, sha: bytes) -> bool:
    """Does the file hold bytes of this sha256?"""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).digest() == sha
    except OSError:
        return False


PARTS = (
    "parsed", "rendered", "written", "trial_lines", "charts", "evaluations", "crawled", "pages", "history", "summaries",
    "templates",
)  # fmt: skip


@dataclass
class BuildCache:
    parsed: ParsedRuns = field(default_factory=dict)
    rendered: dict[str, tuple[RenderKey, tuple[str, ...]]] = field(default_factory=dict)  # run id -> its files
    written: PackedStamps = field(default_factory=PackedStamps)  # docs-relative path -> how it was left
    trial_lines: Fragments = field(default_factory=dict)  # each run's lines of ledger/trials.csv
    charts: ChartTemplates = field(default_factory=ChartTemplates)
    evaluations: Remembered = field(default_factory=dict)  # claim id -> (what it was evaluated from, its evaluation)
    crawled: Crawled = field(default_factory=dict)  # built page -> (sha256 of its bytes, its links and anchors)
    pages: RememberedPages = field(default_factory=dict)  # generated page -> (what it was converted from, its HTML)
    # "followed" -> (what history was followed from, every series followed); "pages" -> (what the History
    # files were rendered from, those files): `site.pipeline.follow` and `site.pipeline.history_outputs`
    history: dict[str, Any] = field(default_factory=dict)
    # run id -> ((its digest, the confidence level), its summary at that level)
    summaries: dict[str, tuple[tuple[str, float], RunSummary]] = field(default_factory=dict)
    templates: dict[str, bytes] = field(default_factory=dict)  # the theme's templates compiled (Jinja's bytecode)
    # claim id -> (what its files were rendered from, its files): kept by `serve` between rebuilds, never saved
    # (`render.outputs.claim_key` is a pickle, the same only within one process)
    claim_pages: ClaimPages = field(default_factory=dict)
    # what history read of each run (`analysis.series.build_series`): kept by `serve`, never saved
    series_rows: KnownRows = field(default_factory=dict)
    # each run folder's files' signatures when last read, and what they made (`ledger.runs.load_run`):
    # kept by `serve`, never saved
    seen_runs: SeenRuns = field(default_factory=dict)
    serving: bool = False  # held by `serve` across rebuilds: what is kept only in memory is worth keeping
    links: dict[str, object] = field(
        default_factory=dict
    )  # where each link of the site led (`site.links.broken_links`)
    path: Path | None = None  # where it is saved, for one that persists

    @functools.cached_property
    def store(self) -> PageStore:
        """Generated pages' HTML (`site.page_store`): a folder beside the cache file, or a
        temporary one for a cache that is not saved."""
        return PageStore(self.path.with_suffix(".pages") if self.path is not None else None)

    def current(self, run_id: str, key: RenderKey, docs: Path) -> bool:
        """Are the run's files in docs the ones this key (its digest, receipts' state and the
        confidence level) renders to, each exactly as benchledger left it?"""
        cached = self.rendered.get(run_id)
        return cached is not None and cached[0] == key and self.intact(docs, cached[1])

    def remember(self, run_id: str, key: RenderKey, files: Iterable[str]) -> None:
        """The files the run was just rendered to, under the key it was rendered with."""
        self.rendered[run_id] = (key, tuple(files))

    def intact(self, docs: Path, files: tuple[str, ...]) -> bool:
        """Is every one of these files still exactly as benchledger wrote it? A file whose stamp
        differs in its change time alone (a hard link to it was made or removed: the site's,
        `site.linked`) is read, and trusted again when it holds the bytes written."""
        folder = str(docs)
        for rel in files:
            known = self.written.get(rel)
            now = stamp(f"{folder}/{rel}", known[0]) if known is not None else None
            if known is None or now is None:
                return False
            if now != known:
                if now[:3] != known[:3] or now[4] != known[4] or not _holds(f"{folder}/{rel}", known[0]):
                    return False
                self.written[rel] = now
        return True

    def kept(self, outputs: Collection[str]) -> set[str]:
        """The files of runs whose pages were reused, not rendered, in this generation."""
        return {rel for _, files in self.rendered.values() for rel in files if rel not in outputs}

    def prune(self, run_ids: set[str]) -> None:
        """Forget runs that are not part of the publication any more (the writer forgets
        the files it no longer writes)."""
        for gone in set(self.rendered) - run_ids:
            del self.rendered[gone]

    def kept_pages(self) -> set[str]:
        """The digests of every page the cache names (the rest of the page store can go)."""
        kept = set()
        for _, converted in self.pages.values():
            kept.add(converted.html)
            if converted.built is not None:
                kept.add(converted.built[1])
        return kept

    @classmethod
    def for_publication(cls, root: Path) -> BuildCache:
        """The last build's cache of the publication from disk, else an empty one that will be
        saved. With BENCHLEDGER_NO_CACHE=1 (`build --no-cache`), an empty one that is never saved."""
        if os.environ.get(NO_CACHE, "") not in ("", "0"):
            return cls()
        path = cache_file(root.resolve())
        with contextlib.suppress(OSError):
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        distrusted = _distrusted(path)
        if distrusted is not None:
            log.warning(
                "benchledger: build cache %s not used: %s, and loading it would run its code; "
                "set BENCHLEDGER_BUILD_CACHE to a folder of your own",
                *distrusted,
            )
            return cls()
        try:
            with path.open("rb") as fh, paused():
                version = pickle.load(fh)  # our own file: the code's version, then each part (`save`)
                parts: list[Any] = [_load_part(fh) for _ in PARTS] if version == code_version() else []
            if len(parts) == len(PARTS) and all(isinstance(p, dict) for p in parts):
                saved = dict(zip(PARTS, parts, strict=True))
                templates, written = ChartTemplates(saved.pop("charts")), PackedStamps(saved.pop("written"))
                return cls(**saved, charts=templates, written=written, path=path)
        except Exception:  # an unreadable cache only makes this build slower
            pass
        return cls(path=path)

    def save(self) -> None:
        """Write the cache for the next process (atomically); a failure only costs time."""
        if self.path is None:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if untrusted(self.path.parent, folder=True):
                return  # checked when loading; a folder changed since is not written to
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
                held: dict[str, dict[Any, Any]] = {"charts": self.charts.known, "written": self.written.packed}
                parts = [held.get(name, getattr(self, name)) for name in PARTS]
                pickler = pickle.Pickler(fh, protocol=5)
                pickler.dispatch_table = {MappingProxyType: reduce_read_only}  # a report's lines, inside evaluations
                pickler.dump(code_version())
                pickler.clear_memo()  # each pickle.load starts with a memo of its own
                for part in parts:
                    _dump_part(pickler, part)
            tmp.replace(self.path)
            self.store.keep_only(self.kept_pages())
            for old in self.path.parent.iterdir():
                if OURS.match(old.name) and old.stat().st_mtime < time.time() - FORGET_AFTER_S:
                    old.unlink()  # benchledger's own cache of a publication not built for a month
                    shutil.rmtree(old.with_suffix(".pages"), ignore_errors=True)
        except Exception:  # a full disk, a read-only folder: the next build is only slower
            with contextlib.suppress(OSError):
                tmp.unlink()
