"""Every internal link of a built site, checked: each href, src and chart spec (data-bl-spec)
of each HTML page that points into the site must name a file that exists there, and its
#fragment an id on the target page. MkDocs checks the Markdown links it rewrites; this
crawl of the built site also catches links written as HTML, which MkDocs never sees."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..forked import forked_map, interned

# The contents of scripts and styles are not markup; comments are not links.
_INERT = re.compile(r"<script\b[^>]*>.*?</script\s*>|<style\b[^>]*>.*?</style\s*>|<!--.*?-->", re.S | re.I)
_MAYBE_INERT = re.compile("<(?:[sS\u017f]|!--)")  # before any of those (ſ: re.I reads it as s)
# A tag with an attribute that is a link or an anchor; the rest (most of a page) are skipped whole.
_TAG = re.compile(r"<[a-zA-Z][^>]*\s(?:href|src|data-bl-spec|id|name)\s*=[^>]*>", re.I)
_ANCHOR_TAG = re.compile(r"<[a-zA-Z][^>]*\s(?:id|name)\s*=[^>]*>", re.I)  # the same tags, with an anchor
_ATTR = re.compile(r"""\s([a-zA-Z][\w:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_LINKS = ("href", "src", "data-bl-spec")
_ENTITY = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|amp|quot|apos|lt|gt);")
_NAMED = {"amp": "&", "quot": '"', "apos": "'", "lt": "<", "gt": ">"}


@dataclass(frozen=True)
class Broken:
    """A link on `page` (a path under the site) to `target` (as written), and why it fails."""

    page: str
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: broken link to {self.target} ({self.reason})"


@dataclass
class Page:
    """A built page's anchors (id, and name on <a>) and links, in page order."""

    ids: set[str]
    links: list[str]


_UNPARSED = Page(set(), [])  # holds a page's place, in path order, until it is parsed
Crawled = dict[str, tuple[str, Page]]  # page under the site -> (sha256 of its bytes, what they parse to)


def _unentity(value: str) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.startswith("#x"):
            return chr(int(name[2:], 16))
        if name.startswith("#"):
            return chr(int(name[1:]))
        return _NAMED[name]

    return _ENTITY.sub(one, value)


def _active(html: str) -> str:
    """The page with its scripts, styles and comments blanked (`_INERT`)."""
    return _INERT.sub(" ", html) if _MAYBE_INERT.search(html) else html


def _read(tags: re.Pattern[str], html: str, *, links: bool) -> Iterator[tuple[bool, str]]:
    """(is it an anchor, its value) for each anchor (id, and name on <a>) and, with `links`, each
    link of the tags `tags` finds, in page order."""
    for tag in tags.finditer(_active(html)):
        for m in _ATTR.finditer(tag.group()):
            name = m.group(1).lower()
            anchor = name == "id" or (name == "name" and tag.group().lower().startswith("<a"))
            if anchor or (links and name in _LINKS):
                value = next(v for v in m.groups()[1:] if v is not None)
                yield anchor, _unentity(value) if "&" in value else value


def _parse(html: str) -> Page:
    page = Page(set(), [])
    for anchor, value in _read(_TAG, html, links=True):
        if anchor:
            page.ids.add(value)
        else:
            page.links.append(value)
    return page


def anchor_ids(html: str) -> set[str]:
    """The anchors of a page (`_parse(html).ids`), from only the tags that may hold one: a page's
    tags that hold a link but no anchor (most of a run page's) are not read attribute by attribute."""
    return {value for _, value in _read(_ANCHOR_TAG, html, links=False)}


def _target(is_folder: Callable[[str], bool], page: str, link: str, root: str) -> tuple[str, str] | None:
    """The site path and fragment a link points to, or None for a link that leaves the site.
    `is_folder` tells a folder of the site; `root` is the path the site is served under
    (site_url's, e.g. /repo/), for links from /."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith("//"):
        return None
    path = unquote(parts.path)
    if not path:
        return page, unquote(parts.fragment)
    if path.startswith("/"):
        base, path = "", path.removeprefix(root) if path.startswith(root) else path
    else:
        base = page.rsplit("/", 1)[0] + "/" if "/" in page else ""
    joined: list[str] = []
    for part in (base + path.lstrip("/")).split("/"):
        if part == "..":
            if not joined:
                return "..", ""  # climbs out of the site
            joined.pop()
        elif part not in ("", "."):
            joined.append(part)
    resolved = "/".join(joined)
    if path.endswith("/") or resolved == "" or is_folder(resolved):
        resolved = f"{resolved}/index.html" if resolved else "index.html"
    return resolved, unquote(parts.fragment)


def _tree(site: Path) -> tuple[list[str], set[str]]:
    """The site's files and folders, as paths under it. Links are followed to tell a file from a
    folder (a dangling one is neither), not into folders: what lies inside a linked folder is
    asked of the file system (`broken_links`), as a crawl of the old kind did."""
    files: list[str] = []
    folders: set[str] = set()
    todo = [("", str(site))]
    while todo:
        prefix, folder = todo.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir():
                    folders.add(rel)
                    if not entry.is_symlink():
                        todo.append((rel + "/", entry.path))
                elif entry.is_file():
                    files.append(rel)
    return files, folders


def crawl(
    site: Path, crawled: Crawled | None = None, digests: Mapping[str, str] | None = None
) -> tuple[dict[str, Page], set[str], set[str]]:
    """Every HTML page of the site parsed, in path order, with the site's files and folders.
    With `crawled` (the build cache's), a page whose bytes are unchanged is not parsed again,
    and what each page parses to is remembered. `digests`: the sha256 of pages whose bytes the
    build knows (the plugin's generated pages, as it handed them to MkDocs), not read again
    when their parse is remembered."""
    files, folders = _tree(site)
    pages: dict[str, Page] = {}
    todo: list[str] = []  # pages read (and parsed, unless the cache knows their bytes) by `look`
    given = digests or {}
    for name in sorted((f for f in files if f.endswith(".html")), key=lambda f: f.split("/")):
        known = crawled.get(name) if crawled is not None else None
        if known is not None and given.get(name) == known[0]:
            pages[name] = known[1]
            continue
        pages[name] = _UNPARSED  # its place, in path order
        todo.append(name)

    def look(name: str) -> tuple[str, Page | None]:
        """A page's sha256 and what it parses to (None: what the cache remembers of those bytes)."""
        data = (site / name).read_bytes()
        digest = hashlib.sha256(data).hexdigest() if crawled is not None else ""
        known = crawled.get(name) if crawled is not None else None
        if known is not None and known[0] == digest:
            return digest, None
        return digest, _parse(data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n"))

    for name, (digest, parsed) in zip(
        todo, forked_map(look, todo, what="pages crawled"), strict=True
    ):  # read where parsed
        if parsed is None and crawled is not None:
            pages[name] = crawled[name][1]
        elif parsed is not None:
            pages[name] = parsed = Page(interned(parsed.ids), interned(parsed.links))
            if crawled is not None:
                crawled[name] = (digest, parsed)
    if crawled is not None:
        for gone in set(crawled) - set(pages):
            del crawled[gone]
    return pages, set(files), folders


def _layout(root: str, files: set[str], folders: set[str]) -> str:
    """What every link's target depends on: the site's files and folders and its root (only
    `serve` keeps where links led; a build does not spend 30 MB at 10,000 runs on this). Each
    group and name goes in with its length: no two layouts read the same."""
    digest = hashlib.sha256()
    for group in ([root], files, folders):
        digest.update(f"{len(group)};".encode())
        for path in sorted(group):
            digest.update(f"{len(path)}:{path}".encode())
    return digest.hexdigest()


Resolved = dict[tuple[str, str], tuple[str, str] | None]  # (page's folder, or the page, link) -> target


def broken_links(
    site: Path,
    root: str = "/",
    crawled: Crawled | None = None,
    digests: Mapping[str, str] | None = None,
    remembered: dict[str, object] | None = None,
) -> list[Broken]:
    """Every internal link of the built site at `site` that names no file or no anchor, in page order;
    `root` is the path the site is served under (the path of site_url), for links that start with /.
    `crawled` is the build cache's pages, `digests` the pages whose bytes the build knows (see `crawl`).
    `remembered` (the build cache's `links`) keeps where each link led, by the site's files and
    folders and `root`: while those are the same, no link is resolved again."""
    root = root if root.endswith("/") else root + "/"
    pages, files, folders = crawl(site, crawled, digests)
    layout = _layout(root, files, folders) if remembered is not None else ""
    known = remembered.get("resolved") if remembered is not None and remembered.get("layout") == layout else None
    resolved: Resolved = known if isinstance(known, dict) else {}
    asked = False  # did a link lead inside a linked folder, which the layout does not hold?

    def is_folder(rel: str) -> bool:  # a folder inside a linked one is asked of the file system
        nonlocal asked
        if rel in folders or rel in files:
            return rel in folders
        asked = True
        return (site / rel).is_dir()

    out: list[Broken] = []
    for name, page in pages.items():
        folder = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
        for link in dict.fromkeys(page.links):
            # a link with no path (#x, ?q, " #x") is to the page itself: resolved per page, not per folder
            key = (folder if urlsplit(link).path else name, link)
            if key in resolved:
                found = resolved[key]
            else:
                found = _target(is_folder, name, link, root)
                if remembered is not None:  # kept for the next build of this process (serve); a
                    resolved[key] = found  # build alone would hold 600,000 of them at 10,000 runs
            if found is None:
                continue
            target, fragment = found
            if target == "..":
                out.append(Broken(name, link, "points outside the site"))
            elif target not in pages and target not in files and not (site / target).is_file():
                out.append(Broken(name, link, f"no file {target}"))
            elif fragment and target in pages and fragment not in pages[target].ids:
                out.append(Broken(name, link, f"no id {fragment!r} on {target}"))
    if remembered is not None:
        remembered.clear()
        if not asked:
            remembered.update(layout=layout, resolved=resolved)
    return out
