"""A generated page converted without Markdown's passes, when what Markdown would do to it is known.

What benchledger writes on a run page, besides its raw HTML blocks (`page_html.raw_blocks`), is
one-line headings, one-line paragraphs and lists of one-line items, of escaped text: entities,
`code`, **bold**, a link to a page of the site, an inline tag. For such a page Python-Markdown's
dozens of passes (block parser, 20 inline patterns, tree walks, serializer, postprocessors) give
an HTML that follows from the text directly; `PlainPages` writes it so, with Markdown's own
functions wherever a value is computed (the heading ids, the table of contents, the escaping)
and MkDocs' own link rewriting.

It is used only when nothing could make Markdown's HTML differ:
- the extensions are a known set with known settings (`_KNOWN`), whose inline and block rules
  the grammar below leaves no opening to;
- every block of the page is one of the shapes below, else the whole page is Markdown's;
- a canary page holding each shape converts the same both ways in this process (`PlainPages`),
  so another Markdown version that writes something differently turns it off instead of
  writing something else. tests/test_plain_markdown.py compares both ways on every generated
  page of the example site and on seeded random pages.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import markdown
from markdown.extensions.toc import nest_toc_tokens, strip_tags, unique
from markdown.serializers import _escape_attrib_html
from markdown.util import code_escape

# extension -> the settings it may have: these, and MkDocs' defaults (toc, tables, fenced_code)
_KNOWN: dict[str, tuple[dict[str, Any], ...]] = {
    "toc": ({}, {"permalink": True}),
    "tables": ({},),
    "fenced_code": ({},),
    "admonition": ({},),
    "attr_list": ({},),
    "md_in_html": ({},),
    "pymdownx.tilde": ({}, {"subscript": False}, {"subscript": True}),  # one ~ at most: never a subscript
}
# left to Markdown (`_unusual`): what its source normalisation would change, what no shape below
# holds, and a fence, in a raw block too
_UNUSUAL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f\x85\u2028\u2029]")
_FENCE = re.compile(r"^[ ]*(?:```|~~~)", re.M)
_HEADING = re.compile(r"(#{1,6}) ([^#\s](?:.*[^#\s])?)")  # a # of its own is not plain text (`_PLAIN`)
_COMMENT = re.compile(r"<!--(?:(?!--)[^<>])*-->")
_CODE = re.compile(r"`([^`\\]+)`")
_LINK = re.compile(r"\[([^\[\]]*)\]\(([A-Za-z0-9._/#-]+)\)")
_INLINE_TAGS = ("a", "abbr", "b", "code", "del", "em", "i", "ins", "kbd", "mark", "s", "small", "span", "strong", "sub")
_TAG = re.compile(r'</?([a-zA-Z][a-zA-Z0-9]*)(?: [a-zA-Z][a-zA-Z-]*="[^"<>`\[\]\\@&{}]*")*>')
_ENTITY = re.compile(r"&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);")
# text no inline pattern reads: none of their marks (an entity, a tag, a code span or a link is read first)
_PLAIN = re.compile(r"[^`\\\[\]<>&{}#!|\x00-\x1f]*")
_EMPHASIS = "*_~"  # one of each at most: every emphasis or strike-through pattern needs two
_ITEM = re.compile(r"- (\S(?:.*\S)?)")  # a list item of one line
_STRONG = re.compile(r"(?<!\*)\*\*([^*\s](?:[^*]*[^*\s])?)\*\*(?!\*)")  # a third * would pair otherwise
# a paragraph's first character: not a list, quote, rule, table, fence, definition or block tag
_BLOCK_START = re.compile(
    r"\*\*[^*\s]|[A-Za-z(\"'&]|\[[^\]]*\]\(|[0-9]+(?![0-9]*[.)])|<(?:" + "|".join(_INLINE_TAGS) + r")[ >]"
)


Raw = Callable[[list[str], Callable[[str], str]], list[str]]  # `page_html.raw_blocks`, given its store


class PlainPages:
    """Writes a page's HTML and table of contents as `md` (a `page_html.PageConverter`'s, with the
    publication's extensions) would, or says it cannot (`convert` gives None). `raw` puts a
    page's raw blocks aside, each as the line its store gives for it, as `md` does."""

    def __init__(self, md: markdown.Markdown, raw: Raw, *, extensions: list[Any], settings: dict[str, Any]) -> None:
        self.md, self.raw = md, raw
        self.block_level: Callable[[str], bool] = md.postprocessors["raw_html"].isblocklevel  # its own test
        toc = md.treeprocessors["toc"] if "toc" in md.treeprocessors else None  # noqa: SIM401  # a Registry has no get
        self.on = toc is not None and _known(extensions, settings)
        if toc is not None:
            self.slugify: Callable[[str, str], str] = toc.slugify
            self.sep: str = toc.sep
            self.permalink = toc.use_permalinks is True
            self.permalink_class: str = toc.permalink_class
            self.permalink_title: str = toc.permalink_title
        if self.on:
            self.on = self._agrees(_CANARY)

    def convert(self, text: str, url: Callable[[str], str]) -> tuple[str, list[Any]] | None:
        """The page's HTML and toc tokens, or None when a block is not a known shape. `url` is
        MkDocs' link rewriting, called only once the whole page is known to be plain, in the
        order Markdown's tree walk meets the links (a heading's permalink after its text)."""
        if not self.on or _unusual(text):
            return None
        stashed: list[str] = []

        def store(block: str) -> str:
            stashed.append(block)
            return f"\0{len(stashed) - 1}"  # no page holds a NUL (`_UNUSUAL`)

        lines = self.raw(text.split("\n"), store)
        if not all(map(self.block_level, stashed)):  # Markdown would keep it in a <p> (`<div/x>`)
            return None

        parts: list[tuple[str, Any]] = []
        for block in _blocks(lines):
            shaped = _shape(block, stashed, opening=not parts)
            if shaped is None or (shaped[0][0] == "list" and parts and parts[-1][0] == "list"):
                return None  # two lists a blank line apart are one loose list
            parts += shaped
        return self._write(parts, url)

    def _write(self, parts: list[tuple[str, Any]], url: Callable[[str], str]) -> tuple[str, list[Any]]:
        used: set[str] = set()
        counters: dict[str, int] = {}
        out: list[str] = []
        tokens: list[dict[str, Any]] = []
        for kind, value in parts:
            if kind == "raw":
                out.append(value)
            elif kind == "heading":
                level, title = value
                name = strip_tags(title)  # the toc's: its id from the unescaped text, as unique as the toc makes it
                anchor = unique(self.slugify(html.unescape(name), self.sep), used, counters)
                tokens.append({"level": level, "id": anchor, "name": name, "html": title, "data-toc-label": ""})
                out.append(
                    f'<h{level} id="{_escape_attrib_html(anchor)}">{title}{self._permalink(anchor, url)}</h{level}>'
                )
            elif kind == "list":
                items = "".join(f"<li>{_text(item, url)}</li>\n" for item in value)
                out.append(f"<ul>\n{items}</ul>")
            else:
                out.append(f"<p>{_text(value, url)}</p>")
        return "\n".join(out).strip(), nest_toc_tokens(tokens)

    def _permalink(self, anchor: str, url: Callable[[str], str]) -> str:
        """The toc's permalink after a heading's text (`add_permalink`), its link rewritten as MkDocs does."""
        if not self.permalink:
            return ""
        names = f'class="{_escape_attrib_html(self.permalink_class)}" href="{_escape_attrib_html(url("#" + anchor))}"'
        if self.permalink_title:
            names += f' title="{_escape_attrib_html(self.permalink_title)}"'
        return f"<a {names}>&para;</a>"

    def _agrees(self, page: str) -> bool:
        """Does the canary convert the same both ways (links left as written)?"""
        self.md.reset()
        expected = (self.md.convert(page), list(getattr(self.md, "toc_tokens", [])))
        return self.convert(page, lambda link: link) == expected


def _text(pieces: list[Any], url: Callable[[str], str]) -> str:
    """A line's HTML from its pieces (`_inline`), a link's address rewritten by `url`."""
    return "".join(
        f'<a href="{_escape_attrib_html(url(piece[1]))}">{piece[0]}</a>' if isinstance(piece, tuple) else piece
        for piece in pieces
    )


def _shape(block: list[str], stashed: list[str], *, opening: bool) -> list[tuple[str, Any]] | None:
    """A block as the parts `_write` writes: a raw block, the page's opening comment (the
    generated mark: one later in the page is kept otherwise), headings, a paragraph or a list."""
    first = block[0]
    if len(block) == 1 and first.startswith("\0"):
        return [("raw", stashed[int(first[1:])])]
    if len(block) == 1 and opening and _COMMENT.fullmatch(first):
        return [("raw", first + "\n")]  # as md_in_html keeps it
    headings = [_HEADING.fullmatch(line) for line in block]
    if all(headings):
        out: list[tuple[str, Any]] = []
        for found in headings:
            assert found is not None
            if not _heading_text(found.group(2)):
                return None
            out.append(("heading", (len(found.group(1)), found.group(2))))
        return out
    if len(block) == 1 and first == first.strip() and _BLOCK_START.match(first):
        pieces = _inline(first)
        return None if pieces is None else [("paragraph", pieces)]
    items = [_ITEM.fullmatch(line) for line in block]
    if all(items):  # a tight list: each item's text as a paragraph's, without the <p>
        texts = [_inline(found.group(1)) if _BLOCK_START.match(found.group(1)) else None for found in items if found]
        return None if any(text is None for text in texts) else [("list", texts)]
    return None


def _unusual(text: str) -> bool:
    """Does the page hold what `_UNUSUAL` or `_FENCE` names, or open with a space (a first line of
    spaces is an indented code block, not a blank line)? One regex of all three took 0.5 ms."""
    if text.startswith(" ") or _UNUSUAL.search(text):
        return True
    return ("```" in text or "~~~" in text) and _FENCE.search(text) is not None


def _blocks(lines: list[str]) -> list[list[str]]:
    """The page's blocks: its runs of lines between blank ones."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line.strip(" "):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _heading_text(text: str) -> bool:
    """Is a heading's text only text and entities, which Markdown writes as they are?"""
    marks = dict.fromkeys(_EMPHASIS, 0)
    return _words(text, [], marks) and max(marks.values()) <= 1


def _inline(text: str) -> list[Any] | None:
    """The HTML pieces of a line of text (a link as (its HTML text, its address)), or None when
    an inline pattern could read it otherwise: code spans, then links, then tags, then entities,
    as Markdown's patterns take them."""
    if "``" in text or "![" in text:
        return None
    pieces: list[Any] = []
    marks = dict.fromkeys(_EMPHASIS, 0) | {"**": 0}  # and the bold spans
    at = 0
    for code in _CODE.finditer(text):
        if not _outside(text[at : code.start()], pieces, marks):
            return None
        pieces.append(f"<code>{code_escape(code.group(1).strip())}</code>")
        at = code.end()
    if not _outside(text[at:], pieces, marks):
        return None
    lone = [marks[mark] for mark in _EMPHASIS]
    # Markdown pairs the delimiters of a line as a whole: beside bold text, no other * _ or ~
    return pieces if max(lone) <= 1 and not (marks["**"] and any(lone)) else None


def _outside(text: str, pieces: list[Any], marks: dict[str, int]) -> bool:
    """Adds the pieces of text outside code spans: links, then tags and text."""
    at = 0
    for link in _LINK.finditer(text):
        if not _tagged(text[at : link.start()], pieces, marks, tags=True):
            return False
        words: list[Any] = []
        if not _tagged(link.group(1), words, marks, tags=False) or not words:
            return False
        pieces.append(("".join(words), link.group(2)))
        at = link.end()
    return _tagged(text[at:], pieces, marks, tags=True)


def _tagged(text: str, pieces: list[Any], marks: dict[str, int], *, tags: bool) -> bool:
    """Adds the pieces of text outside code spans and links: inline tags, then bold text (not in a
    link's text, `tags` False), then text."""
    at = 0
    for tag in _TAG.finditer(text) if tags else []:
        if not _bold(text[at : tag.start()], pieces, marks) or tag.group(1).lower() not in _INLINE_TAGS:
            return False
        pieces.append(tag.group(0))
        at = tag.end()
    return _bold(text[at:], pieces, marks) if tags else _words(text[at:], pieces, marks)


def _bold(text: str, pieces: list[Any], marks: dict[str, int]) -> bool:
    """`**text**` (two asterisks each side, text without one and not starting or ending in a space,
    no third * beside them) as <strong>, on a line with no other * _ or ~ (`_inline`)."""
    at = 0
    for bold in _STRONG.finditer(text):
        words: list[Any] = []
        if not _words(text[at : bold.start()], pieces, marks) or not _words(bold.group(1), words, marks):
            return False
        pieces.append("<strong>" + "".join(words) + "</strong>")
        marks["**"] += 1
        at = bold.end()
    return _words(text[at:], pieces, marks)


def _words(text: str, pieces: list[Any], marks: dict[str, int]) -> bool:
    """Text and entities, each as written; any other mark of Markdown's: False."""
    at = 0
    for entity in _ENTITY.finditer(text):
        if not _plain(text[at : entity.start()], marks):
            return False
        at = entity.end()
    if not _plain(text[at:], marks):
        return False
    if text:
        pieces.append(text)
    return True


def _plain(text: str, marks: dict[str, int]) -> bool:
    if not _PLAIN.fullmatch(text):
        return False
    for mark in _EMPHASIS:
        marks[mark] += text.count(mark)
    return True


def _known(extensions: list[Any], settings: dict[str, Any]) -> bool:
    """Are the extensions (by name) and their settings all in `_KNOWN`, in any order?"""
    if not all(isinstance(name, str) and name in _KNOWN for name in extensions):
        return False
    return all(name in extensions and settings[name] in _KNOWN[name] for name in settings)


_CANARY = "\n\n".join(
    [
        "<!-- generated -->",
        "# Run &#95;one (tok&#47;s)",
        "## Summary\n### Summary",
        'Intervals: s_log / √n (see [methods](../methods.md)), <span class="x">unverified</span> and `a<b & c`.',
        "A lone * and ~ and 2 trials &#37; 50.",
        "- **acceptance** = accepted / drafted\n- (per trial) [charts](#charts)",
        '<div class="bl-x" markdown="0">\n<p>kept</p>\n</div>',
        "## Files",
        "<details>\n<summary>3 files</summary>\n</details>",
    ]
)
