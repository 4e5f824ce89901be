"""Every internal link of a built site, checked: each href, src and chart spec (data-bl-spec)
of each HTML page that points into the site must name a file that exists there, and its
#fragment an id on the target page. MkDocs checks the Markdown links it rewrites; this
crawl of the built site also catches links written as HTML, which MkDocs never sees."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

# The contents of scripts and styles are not markup; comments are not links.
_INERT = re.compile(r"<script\b[^>]*>.*?</script\s*>|<style\b[^>]*>.*?</style\s*>|<!--.*?-->", re.S | re.I)
# A tag with an attribute that is a link or an anchor; the rest (most of a page) are skipped whole.
_TAG = re.compile(r"<[a-zA-Z][^>]*\s(?:href|src|data-bl-spec|id|name)\s*=[^>]*>", re.I)
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
class _Page:
    ids: set[str]
    links: list[str]


def _unentity(value: str) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.startswith("#x"):
            return chr(int(name[2:], 16))
        if name.startswith("#"):
            return chr(int(name[1:]))
        return _NAMED[name]

    return _ENTITY.sub(one, value)


def _parse(html: str) -> _Page:
    page = _Page(set(), [])
    for tag in _TAG.finditer(_INERT.sub(" ", html)):
        for m in _ATTR.finditer(tag.group()):
            name = m.group(1).lower()
            if name not in _LINKS and name not in ("id", "name"):
                continue
            value = next(v for v in m.groups()[1:] if v is not None)
            value = _unentity(value) if "&" in value else value
            if name == "id" or (name == "name" and tag.group().lower().startswith("<a")):
                page.ids.add(value)
            elif name in _LINKS:
                page.links.append(value)
    return page


def _target(site: Path, page: str, link: str, root: str) -> tuple[str, str] | None:
    """The site path and fragment a link points to, or None for a link that leaves the site.
    `root` is the path the site is served under (site_url's, e.g. /repo/), for links from /."""
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
    if path.endswith("/") or resolved == "" or (site / resolved).is_dir():
        resolved = f"{resolved}/index.html" if resolved else "index.html"
    return resolved, unquote(parts.fragment)


def broken_links(site: Path, root: str = "/") -> list[Broken]:
    """Every internal link of the built site at `site` that names no file or no anchor, in page order;
    `root` is the path the site is served under (the path of site_url), for links that start with /."""
    root = root if root.endswith("/") else root + "/"
    pages: dict[str, _Page] = {}
    for path in sorted(site.rglob("*.html")):
        pages[path.relative_to(site).as_posix()] = _parse(path.read_text(encoding="utf-8", errors="replace"))
    out: list[Broken] = []
    for name, page in pages.items():
        for link in dict.fromkeys(page.links):
            found = _target(site, name, link, root)
            if found is None:
                continue
            target, fragment = found
            if target == "..":
                out.append(Broken(name, link, "points outside the site"))
            elif target not in pages and not (site / target).is_file():
                out.append(Broken(name, link, f"no file {target}"))
            elif fragment and target in pages and fragment not in pages[target].ids:
                out.append(Broken(name, link, f"no id {fragment!r} on {target}"))
    return out
