"""How untrusted values become page text: escaped for Markdown and HTML at once.

Everything read from YAML or CSV passes through here before it reaches a page.
`text()` turns every ASCII punctuation character into a numeric character
reference, so neither Markdown (links, images, emphasis, table pipes) nor HTML
(tags, attributes, comments) can see syntax in it; the browser shows the
characters literally. Values that are already safe are `Markup`.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from ..format import signed
from ..format.keys import as_yaml

_SAFE = re.compile(r"[A-Za-z0-9 .,]")
_URL = re.compile(r"^https?://[^\s<>\"'`]+$")


def _entity(ch: str) -> str:
    if _SAFE.match(ch) or ord(ch) > 127:
        return ch
    if ch == "\n":
        return "\n"
    if ch in "\t\r":
        return " "
    if ord(ch) < 32 or ord(ch) == 127:
        return ""
    return f"&#{ord(ch)};"


_UNSAFE = re.compile(r"[\x00-\x1f\x7f!-+\-/:-@\[-`{-~]")
_ENTITIES = {ord(ch): _entity(ch) for ch in map(chr, range(128)) if _UNSAFE.match(ch)}  # for str.translate


def _escape(value: str) -> str:
    """Every ASCII punctuation and control character of `value` replaced by `_entity`'s choice."""
    return value.translate(_ENTITIES)


def text(value: Any) -> Markup:
    """One line of untrusted text, inert in Markdown and HTML (newlines become spaces)."""
    if isinstance(value, Markup):
        return value
    shown = scalar(value) if not isinstance(value, str) else value
    return Markup(_escape(shown.replace("\n", " ")))


def lines(value: Any) -> Markup:
    """Untrusted text that may span lines, for a table cell or a paragraph (<br> between)."""
    if isinstance(value, Markup):
        return value
    shown = scalar(value) if not isinstance(value, str) else value
    parts = [_escape(part) for part in shown.strip().split("\n")]
    return Markup("<br>".join(parts))


def attr(value: str) -> Markup:
    """A value for a double-quoted HTML attribute."""
    return Markup(_escape(value.replace("\n", " ")))


def url(value: str | None) -> str | None:
    """An http(s) address safe for href, or None for anything else (javascript:, data:, ...)."""
    if value is None or not _URL.match(value):
        return None
    return attr(value)


def path_url(path: str) -> str:
    """A repository path as a relative URL, every segment percent-encoded."""
    return "/".join(quote(part, safe="") for part in path.split("/"))


def link(label: Any, href: str | None) -> Markup:
    """An <a> with escaped text; a refused address shows the text with its address, unlinked."""
    if href is None:
        return text(label)
    return Markup(f'<a href="{href}">{text(label)}</a>')


def notes(markdown: str) -> Markup:
    """Untrusted Markdown (run notes) rendered so that nothing third-party becomes live content:
    raw HTML is shown as text; no image is ever loaded (it is shown as text with its address);
    a link keeps only an http(s) or relative target, shows that address beside its text, and
    carries rel="nofollow noopener noreferrer" (markdown-it-py with its renderer rules replaced)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = _safe_link  # type: ignore[method-assign, assignment]
    md.add_render_rule("image", _image_as_text)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    html = md.render(markdown)
    # Python-Markdown stashes an HTML block whole only when it has no blank lines: outside code
    # they go; inside a code block each stays as an empty line, written as a character reference.
    parts = re.split(r"(<pre>.*?</pre>)", html, flags=re.DOTALL)
    html = "".join(
        re.sub(r"\n[ \t]*\n", "\n&#10;", part) if part.startswith("<pre>") else re.sub(r"\n\s*\n", "\n", part)
        for part in parts
    )
    return Markup(f'<div class="bl-notes">\n{html}</div>')


def _image_as_text(_renderer: Any, tokens: Any, idx: int, _options: Any, _env: Any) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    src = str(token.attrGet("src") or "")
    return f'<span class="bl-image">[image: {_escape(alt)}] ({_escape(src)})</span>'


def _link_open(_renderer: Any, tokens: Any, idx: int, _options: Any, _env: Any) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    return f'<a href="{_escape(href)}" rel="nofollow noopener noreferrer">'


def _link_close(_renderer: Any, tokens: Any, idx: int, _options: Any, _env: Any) -> str:
    opened = next(t for t in reversed(tokens[:idx]) if t.type == "link_open")
    href = str(opened.attrGet("href") or "")
    shown = f' <span class="bl-href">({_escape(href)})</span>' if href.startswith(("http://", "https://")) else ""
    return "</a>" + shown


def _safe_link(href: str) -> bool:
    target = href.strip().lower()
    if ":" not in target.split("/")[0]:
        return not target.startswith("//")
    return target.startswith(("http://", "https://"))


def number(value: float | None, digits: int = 4) -> str:
    """A figure with `digits` significant digits, never in exponent form; one out of range
    (`signed.in_range`: not finite, past 1e300 or nearer 0 than 1e-300) as 'out of range'."""
    if value is None:
        return "–"
    if value == 0 or not signed.in_range(value):
        return "0" if value == 0 else signed.OUT_OF_RANGE
    if abs(value) >= 1e16:  # past a float's integer digits: the shortest digits that read back as it, then zeros
        return f"{Decimal(repr(value)):,f}"
    places = max(0, min(8, digits - 1 - math.floor(math.log10(abs(value)))))
    shown = f"{value:,.{places}f}"
    return shown.rstrip("0").rstrip(".") if "." in shown else shown


def level(confidence: float) -> Markup:
    """A confidence level as the pages write it (`format.signed.level`): 0.95 -> '95%', 0.995 -> '99.5%'."""
    return Markup(signed.level(confidence))


def percent(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    return minus(f"{value * 100:.{digits}f}%") if signed.in_range(value) else signed.OUT_OF_RANGE


MINUS = "\u2212"  # the minus sign: a hyphen "-" before a figure reads as the dash "–" of "nothing"
_SIGN = re.compile(r"(?<![\w.\-\u2212])-(?=\.?\d)")  # a hyphen opening a number, not inside a word or a date


def minus(shown: str) -> str:
    """Page text with the sign of each negative figure written as the minus sign (U+2212):
    '-5.1% [-7.7%, -2.4%]' -> '−5.1% [−7.7%, −2.4%]'. Hyphens inside words, ids and dates
    ('noise-0.02', '2026-11-30') stay; the CLI and JSON keep ASCII for whoever parses them."""
    return _SIGN.sub(MINUS, shown)


def plural(count: int, one: str, many: str | None = None) -> str:
    """A count with its noun, never 'key(s)': (1, 'key') -> '1 key', (3, 'key') -> '3 keys',
    (2, 'query', 'queries') -> '2 queries'."""
    return f"{count:,} {one if count == 1 else many or one + 's'}"


NOT_REPORTED = "not reported"  # one side's n when it carries reported figures, not trials
NO_TRIALS = "trials not reported"  # n when neither side has trials, as a reported figure reads


def n_pair(baseline: int | None, candidate: int | None) -> str:
    """The n of two sides as one cell, None for a side whose figures were reported without
    trials: '5 / 5', 'not reported / 5', and 'trials not reported' when neither has trials."""
    if baseline is None and candidate is None:
        return NO_TRIALS
    return " / ".join(NOT_REPORTED if n is None else f"{n:,}" for n in (baseline, candidate))


NOT_RECORDED = "not recorded"  # a value that is absent or null: a page never says "null"


def recorded(value: str) -> str:
    """A value the analysis wrote as YAML (`format.keys.as_yaml`) as a page shows it: null
    reads 'not recorded'."""
    return NOT_RECORDED if value == as_yaml(None) else value


NOT_STATED = "not stated"  # a claim that names no effect: words, never a dash
_DIRECTIONS = {"+": "an increase", "-": "a decrease", MINUS: "a decrease"}


def claimed(value: str | None) -> str:
    """What a claim says of its effect, as a page shows it: 'not stated' when it names none,
    a bare sign in words ('-' -> 'a decrease'), a figure with its minus sign ('-16%' -> '−16%')."""
    if value is None or not value.strip():
        return NOT_STATED
    return _DIRECTIONS.get(value.strip(), minus(value))


def scalar(value: Any) -> str:
    """A YAML scalar as the publisher would write it (true, false, 8, text), and null, which a
    page never prints, as 'not recorded'."""
    return NOT_RECORDED if value is None else as_yaml(value)


def shortened(statement: str, most: int) -> str:
    """A claim's statement as a title: its first sentence, cut at a word to at most `most`
    characters with an ellipsis (the forest's row labels, the front page's links)."""
    first = " ".join(statement.split()).split(". ")[0].rstrip(".")
    if len(first) <= most:
        return first
    cut = first[: most - 1]
    if first[most - 1] != " " and " " in cut:  # a word cut in two is left out
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"
