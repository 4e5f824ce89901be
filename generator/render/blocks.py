"""Tables and folded sections of generated pages as raw HTML blocks.

Python-Markdown passes a block-level HTML element that opens a line (blank lines around it,
none inside, no `markdown` attribute) through whole: a run page's trial tables, summary,
environment and files then cost MkDocs no Markdown parsing, which at a thousand runs was
most of a build. The HTML is what Markdown's `tables` extension writes (a right-aligned
column carries the same style), so the site's CSS and Material's table wrapping apply alike.

Every header, cell and summary that is not `Markup` is escaped by `text.text`, as a template's
`{{ value }}` is. Links in cells are written as the built site's URLs
(MkDocs rewrites no `.md` link inside raw HTML), which assumes directory URLs, the default.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from markupsafe import Markup

from .text import text

RIGHT = ' style="text-align: right;"'
NOT_SEARCHED = " data-search-exclude"  # Material's search leaves the element out of its index


def table(
    columns: Sequence[str], rows: Iterable[Sequence[object]], *, right: Iterable[int] = (), searched: bool = True
) -> Markup:
    """A table of `columns` and `rows` of cells; the columns at the indexes in `right` aligned
    right (numbers); `searched=False` keeps it out of the search index."""
    aligned = set(right)
    style = [RIGHT if k in aligned else "" for k in range(len(columns))]
    head = "".join(f"<th{s}>{text(name)}</th>" for s, name in zip(style, columns, strict=True))
    body = "".join(
        "<tr>" + "".join(f"<td{s}>{text(cell)}</td>" for s, cell in zip(style, row, strict=True)) + "</tr>\n"
        for row in rows
    )
    attrs = "" if searched else NOT_SEARCHED
    return Markup(f"<table{attrs}>\n<thead>\n<tr>{head}</tr>\n</thead>\n<tbody>\n{body}</tbody>\n</table>")


def details(summary: str, body: Markup, *, searched: bool = True) -> Markup:
    """A folded section (`bl-details`): its summary line, and its body of HTML (`Markup`)."""
    attrs = "" if searched else NOT_SEARCHED
    return Markup(f'<details class="bl-details"{attrs}>\n<summary>{text(summary)}</summary>\n{body}\n</details>')
