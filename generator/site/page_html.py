"""The HTML of a generated page, converted by benchledger instead of MkDocs' per-page Markdown.

A generated page (one that opens with the generated mark) is mostly raw HTML blocks
(`render.blocks`) that Python-Markdown passes through whole, after parsing every tag of them
twice: once in MkDocs' anchor scan, once in `md_in_html`. Here one Markdown instance, with the
publication's own extensions, converts the page once per build; a raw HTML block that opens a
line after a blank line and closes, balanced, at the end of a line before the next blank line
is put aside (`htmlStash`, as Python-Markdown puts aside raw HTML) without being parsed. What
it cannot prove to be such a block it leaves to the extensions, so the HTML is the same as a
plain conversion's (tests/test_page_html.py compares them on every page of the example site).

MkDocs' own link rewriting runs on the Markdown part, so a `[text](../x.md)` link becomes the
built site's URL and an unknown target is the same warning as before; headings keep their ids
and permalinks, and the page's table of contents is MkDocs' (`get_toc`).
"""

from __future__ import annotations

import hashlib
import logging
import re
import xml.etree.ElementTree as etree
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import markdown
from markdown.blockparser import BlockParser
from markdown.blockprocessors import BlockProcessor
from markdown.preprocessors import Preprocessor
from markdown.util import AtomicString
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page, _RelativePathTreeprocessor
from mkdocs.structure.toc import TableOfContents, get_toc
from mkdocs.utils.meta import get_data

from ..forked import InWorker, forked_map, interned
from ..render.templating import GENERATED_PREFIX
from .built_pages import cacheable
from .links import anchor_ids
from .page_store import PageStore
from .plain_markdown import PlainPages

Remembered = dict[str, tuple[str, "Converted"]]  # generated page -> (what it was converted from, its HTML)

_OPEN = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)[\s>/]")
# Inside these the balance of tags cannot be counted by text; a block holding one is left to Markdown:
# a comment, a script, style, textarea or title element, a markdown attribute but markdown="0".
_OPAQUE_TAG = re.compile(r"<(?:!--|(?:script|style|textarea|title)\b)", re.I)
# as a word of its own (`_opaque`); the 0 of markdown="0" is followed by a quote, > or a space on its line
_MARKDOWN_ON = re.compile(r"markdown\s*=\s*(?![\"']?0(?:[\"'>]|[^\S\n]))", re.I)
_WORD = re.compile(r"\w")
_FENCE = re.compile(r"^(?:```|~~~)")


@dataclass(frozen=True)
class Converted:
    """A generated page's HTML (its digest in the build's `PageStore`), its table of contents
    (Markdown's toc tokens), the anchors it holds, its links to anchors of other pages (target
    page, anchor, link as written), and, once built, the page the theme made of it."""

    html: str  # the sha256 of the HTML's bytes, under which the page store keeps it
    toc_tokens: list[Any]  # Markdown's toc tokens (dicts), which MkDocs' get_toc reads
    anchors: frozenset[str]
    links: tuple[tuple[str, str, str], ...]
    built: tuple[str, str] | None = None  # the page the theme made: (`built_pages.page_key`, its digest in the store)

    @property
    def toc(self) -> TableOfContents:
        return get_toc(self.toc_tokens)

    def links_to_anchors(self, files: Files) -> dict[File, dict[str, str]] | None:
        """The links MkDocs checks against the anchors of their targets (`validation.anchors`);
        None when a target is not a file of this build."""
        out: dict[File, dict[str, str]] = {}
        for target, anchor, link in self.links:
            file = files.get_file_from_path(target)
            if file is None:
                return None
            out.setdefault(file, {}).setdefault(anchor, link)
        return out


class StubPage(Page):
    """A generated page that benchledger converted itself: MkDocs' `render` would convert the empty
    stub `on_page_markdown` leaves (a Markdown instance with every extension, made per page)
    only for `on_page_content` to put the page's HTML in place of nothing. The plugin makes a
    generated page one of these in `on_page_markdown`; `render` leaves what MkDocs' conversion of
    the empty stub would have left. Only with known plugins (`built_pages.cacheable`): no other
    plugin's `on_page_markdown` adds to the stub."""

    def render(self, config: MkDocsConfig, files: Files) -> None:  # noqa: ARG002  # MkDocs passes them
        self.content = ""
        self.toc = get_toc([])
        self._title_from_render = None
        self.present_anchor_ids = set()
        self.links_to_anchors = {}


class _Warnings(InWorker):
    """Counts what MkDocs warns about while a page converts (such a page is not remembered)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += record.levelno >= logging.WARNING


def raw_blocks(lines: list[str], block_level: Callable[[str], bool], store: Callable[[str], str]) -> list[str]:
    """The page's lines with each provable raw HTML block replaced by `store(block)` (the key of
    Python-Markdown's HTML stash, on a line of its own and followed by a blank line, as
    md_in_html leaves it)."""
    out: list[str] = []
    fenced = False
    blank = [not line.strip() for line in lines]
    k, n = 0, len(lines)
    while k < n:
        line = lines[k]
        if _FENCE.match(line):
            fenced = not fenced
        after = not out or not out[-1].strip()  # a blank line, or a block put aside, before it
        end = None if fenced or not after else _block_end(lines, k, block_level, blank)
        if end is None:
            out.append(line)
            k += 1
            continue
        tail = "\n" if end + 1 == n or blank[end + 1] else ""  # as md_in_html keeps it
        out += [store("\n".join(lines[k : end + 1]) + tail), ""]
        k = end + 1
    return out


def _block_end(lines: list[str], start: int, block_level: Callable[[str], bool], blank: list[bool]) -> int | None:
    """The index of the last line of the raw block opening at `start`, or None when the lines
    there are not one whole block-level element followed by a blank line (or the end).

    The lines up to the next blank one are read as one text: none may hold what `_opaque`
    names, and the block ends at the first line after which more of its tag is closed than
    opened (its depth is asked only where an open or close tag of it is)."""
    opened = _OPEN.match(lines[start])
    if opened is None or not block_level(tag := opened.group(1).lower()):
        return None
    stop = start
    while stop < len(lines) and not blank[stop]:
        stop += 1
    text = "\n".join(lines[start:stop])
    if _opaque(text):  # anywhere before the blank line: left to Markdown, never wrong
        return None
    depth, line_end = 0, -1
    for tag_at in re.finditer(rf"<(/)?{tag}(?(1)[^\S\n]*>|(?:[^\S\n]|[>/]))", text, re.I):  # within a line
        if line_end != -1 and tag_at.start() > line_end:  # past the line where depth came to <= 0
            break
        depth += -1 if tag_at.group(1) else 1
        if depth <= 0 and line_end == -1:
            line_end = text.find("\n", tag_at.end())
            line_end = len(text) if line_end == -1 else line_end
        elif depth > 0:
            line_end = -1  # opened again on the same line
    if line_end == -1 or depth < 0:
        return None
    k = start + text.count("\n", 0, line_end)
    ends = re.search(rf"</{tag}\s*>\s*$", lines[k], re.I) is not None
    return k if ends and _ends_block(lines, k + 1, block_level) else None


def _opaque(text: str) -> bool:
    """Does the text hold what `_OPAQUE_TAG` or `_MARKDOWN_ON` names, the attribute as a word of
    its own (`\\bmarkdown`, asked of each match: one regex with the word boundary took ten times
    as long on a run page's 17 KB, whose every block says markdown="0")?"""
    if _OPAQUE_TAG.search(text):
        return True
    return any(m.start() == 0 or not _WORD.match(text, m.start() - 1) for m in _MARKDOWN_ON.finditer(text))


def _ends_block(lines: list[str], k: int, block_level: Callable[[str], bool]) -> bool:
    """Does the line at k end the block before it: the end, a blank line, or a block-level tag?"""
    if k == len(lines) or not lines[k].strip():
        return True
    opened = _OPEN.match(lines[k])
    return opened is not None and block_level(opened.group(1).lower())


class _RawBlocks(Preprocessor):  # type: ignore[misc]  # Markdown ships no types
    """Puts provable raw HTML blocks aside before md_in_html (and MkDocs) would parse them."""

    def __init__(self, md: markdown.Markdown, stashed: set[str]) -> None:
        super().__init__(md)
        self.stashed = stashed

    def run(self, lines: list[str]) -> list[str]:
        self.stashed.clear()
        return raw_blocks(lines, self.md.is_block_level, self.store)

    def store(self, html: str) -> str:
        key: str = self.md.htmlStash.store(html)  # the stash key that stands in the text for the block
        self.stashed.add(key)
        return key


class _Stashed(BlockProcessor):  # type: ignore[misc]
    """A block that is only the stash key of a raw block `_RawBlocks` put aside becomes the
    paragraph Markdown would make of it, with text no inline pattern reads (an AtomicString,
    as Markdown marks text it must leave alone): the key matches none of them, and Markdown's
    last step puts the raw block in place of that paragraph either way. At 1,000 runs, that is
    30,000 stash keys that are not matched against every inline pattern."""

    def __init__(self, parser: BlockParser, stashed: set[str]) -> None:
        super().__init__(parser)
        self.stashed = stashed

    def test(self, parent: etree.Element, block: str) -> bool:  # noqa: ARG002  # Markdown passes it
        return block in self.stashed

    def run(self, parent: etree.Element, blocks: list[str]) -> None:
        etree.SubElement(parent, "p").text = AtomicString(blocks.pop(0))


class PageConverter:
    """One Markdown instance for a build's generated pages, with the publication's extensions.
    `remembered` (the build cache's) keeps each page's HTML between builds, keyed by the page's
    Markdown, its URL, the site's files and the Markdown settings: a page whose key is unchanged
    is not converted again. A page whose conversion warned is never remembered, so the warning
    comes back on every build until it is fixed."""

    def __init__(
        self, config: MkDocsConfig, files: Files, remembered: Remembered | None = None, store: PageStore | None = None
    ) -> None:
        self.md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs or {})
        stashed: set[str] = set()  # the stash keys of this page's raw blocks
        self.md.preprocessors.register(_RawBlocks(self.md, stashed), "benchledger_raw_blocks", 22)  # after fences
        self.md.parser.blockprocessors.register(_Stashed(self.md.parser, stashed), "benchledger_stashed", 200)
        self.plain = PlainPages(
            self.md,
            lambda lines, store: raw_blocks(lines, self.md.is_block_level, store),
            extensions=config.markdown_extensions,
            settings=config.mdx_configs or {},
        )
        self.remembered = remembered if remembered is not None else {}
        self.store = store if store is not None else PageStore()
        self.seen: set[str] = set()
        self.fresh: dict[str, tuple[str, Converted, bool]] = {}  # converted by `prepare`: (key, HTML, warned)
        self.context = _context(config, files)

    def key(self, text: str, file: File) -> str:
        """What a page's HTML is converted from: its Markdown, its URL and the site's context."""
        return hashlib.sha256(f"{self.context}\0{file.url}\0{text}".encode()).hexdigest()

    def prepare(self, pages: list[File], config: MkDocsConfig, files: Files) -> None:
        """Convert, ahead of MkDocs' reading of the pages, every generated page among these
        whose HTML is not remembered, by forked workers when there are many (`generator.forked`):
        each worker reads its pages, so their Markdown never travels; `convert` then finds them
        done."""

        def one(file: File) -> tuple[str, Converted, bool] | None:
            try:
                text = get_data(file.content_string)[0]
            except (OSError, ValueError):  # MkDocs reads it again, and says what is wrong
                return None
            if not text.startswith(GENERATED_PREFIX) or self._known(file, text) is not None:
                return None
            return (self.key(text, file), *self._convert(text, file, config, files))

        for file, done in zip(pages, forked_map(one, pages, what="pages read and converted"), strict=True):
            if done is not None:  # its strings shared with the other pages' (nav links, toc keys)
                key, converted, warned = done
                shared = replace(
                    converted,
                    toc_tokens=interned(converted.toc_tokens),
                    anchors=interned(converted.anchors),
                    links=interned(converted.links),
                )
                self.fresh[file.src_uri] = (key, shared, warned)

    def _known(self, file: File, text: str, key: str | None = None) -> Converted | None:
        """The page's remembered HTML, when it was converted from this text (`key`, if known)
        and the page store still has it."""
        known = self.remembered.get(file.src_uri)
        key = key if key is not None else self.key(text, file)
        return known[1] if known is not None and known[0] == key and self._kept(known[1]) else None

    def _kept(self, converted: Converted) -> bool:
        return self.store.has(converted.html)

    def html(self, digest: str) -> str:
        """A page's HTML (converted, or as the theme made it) from the page store."""
        text = self.store.get(digest)
        if text is None:  # removed from the store during the build
            raise PluginError(
                f"benchledger: the build cache's page store lost a page; build again ({self.store.folder})"
            )
        return text

    def convert(self, text: str, page: Page, config: MkDocsConfig, files: Files) -> Converted:
        """The page's HTML as MkDocs would render it (from the cache when its key is unchanged)."""
        name = page.file.src_uri
        key = self.key(text, page.file)
        self.seen.add(name)
        known = self._known(page.file, text, key)
        if known is not None:
            return known
        fresh = self.fresh.pop(name, None)
        if fresh is not None and fresh[0] == key:
            converted, warned = fresh[1], fresh[2]
        else:
            converted, warned = self._convert(text, page.file, config, files)
        if warned:
            self.remembered.pop(name, None)
        else:
            self.remembered[name] = (key, converted)
        return converted

    def _convert(self, text: str, file: File, config: MkDocsConfig, files: Files) -> tuple[Converted, bool]:
        md = self.md
        links = _RelativePathTreeprocessor(file, files, config)
        warnings, mkdocs = _Warnings(), logging.getLogger("mkdocs")
        mkdocs.addHandler(warnings)
        try:
            plain = self.plain.convert(text, links.path_to_url)
            if plain is None:
                md.reset()
                links._register(md)
                html, tokens = md.convert(text), list(getattr(md, "toc_tokens", []))
            else:
                html, tokens = plain
        finally:
            mkdocs.removeHandler(warnings)
        found = tuple(
            (target.src_uri, anchor, link)
            for target, anchors in links.links_to_anchors.items()
            for anchor, link in anchors.items()
        )
        anchors = frozenset(anchor_ids(html))
        return Converted(self.store.put(html), tokens, anchors, found), warnings.count > 0

    def built(self, name: str, key: str, digest: str) -> None:
        """Remember the page the theme made of a generated page converted in this build (its
        digest in the page store: the sha256 of the bytes MkDocs writes)."""
        known = self.remembered.get(name)
        if known is not None:
            self.remembered[name] = (known[0], replace(known[1], built=(key, digest)))

    def reusable(self, name: str, key: str) -> str | None:
        """The digest of the page the theme made of this page before, when its key is `key` and
        the store still has it."""
        known = self.remembered.get(name)
        built = known[1].built if known is not None else None
        return built[1] if built is not None and built[0] == key and self.store.has(built[1]) else None

    def forget_others(self) -> None:
        """Pages not converted in this build leave the cache."""
        for gone in set(self.remembered) - self.seen:
            del self.remembered[gone]


def _context(config: MkDocsConfig, files: Files) -> str:
    """What a page's HTML depends on besides its Markdown and URL: every file of the site (a link
    resolves against them) and the Markdown and link settings. An object without a stable
    `repr` (a function given as a setting) makes every key new: nothing is reused, never wrong.
    With only known plugins (`built_pages.cacheable`) a file's URL follows from its path and
    `use_directory_urls`, which the key holds; with others, each URL is in the key too."""
    if cacheable(config):
        digest = hashlib.sha256("\0".join(files.src_uris).encode())
    else:
        digest = hashlib.sha256("\0".join(f"{file.src_uri}\0{file.url}" for file in files).encode())
    settings = (config.markdown_extensions, sorted((config.mdx_configs or {}).items()), config.use_directory_urls)
    digest.update(repr((settings, config.validation)).encode())
    return digest.hexdigest()
