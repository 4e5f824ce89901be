"""Tables and folded sections of generated pages as raw HTML blocks.

Python-Markdown passes a block-level HTML element that opens a line (blank lines around it,
none inside, no `markdown` attribute) through whole: a run page's trial tables, summary,
environment and files then cost MkDocs no Markdown parsing, which at a thousand runs was
most of a build. The HTML is what Markdown's `tables` extension writes (a right-aligned
column carries the same style), so the site's CSS and Material's table wrapping apply alike.

Every header, cell and summary that is not `Markup` is escaped by `text.text`, as a template's
`{{ value }}` is. Each cell carries its column's header as `data-label` and the table its kind as
`data-bl-table`: on a phone benchledger.css stacks each row into a card of "header value" lines
("pairs", a table of keys and values, stacks each key over its value). Links in cells are
written as the built site's URLs (MkDocs rewrites no `.md` link inside raw HTML), which assumes
directory URLs, the default.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from markupsafe import Markup

from .text import text

RIGHT = ' style="text-align: right;"'
NOT_SEARCHED = " data-search-exclude"  # Material's search leaves the element out of its index


def table(
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    right: Iterable[int] = (),
    searched: bool = True,
    kind: str = "data",
) -> Markup:
    """A table of `columns` and `rows` of cells; the columns at the indexes in `right` aligned
    right (numbers); `searched=False` keeps it out of the search index; `kind` names it
    (`data-bl-table`; "pairs" for a table of keys and values)."""
    aligned = set(right)
    style = [RIGHT if k in aligned else "" for k in range(len(columns))]
    head = "".join(f"<th{s}>{text(name)}</th>" for s, name in zip(style, columns, strict=True))
    cell = [f'{s} data-label="{label(name)}"' for s, name in zip(style, columns, strict=True)]
    body = "".join(
        "<tr>" + "".join(f"<td{c}>{text(value)}</td>" for c, value in zip(cell, row, strict=True)) + "</tr>\n"
        for row in rows
    )
    attrs = f' data-bl-table="{text(kind)}"' + ("" if searched else NOT_SEARCHED)
    return Markup(f"<table{attrs}>\n<thead>\n<tr>{head}</tr>\n</thead>\n<tbody>\n{body}</tbody>\n</table>")


def label(header: object) -> Markup:
    """A column header as the text of a `data-label` attribute: its markup, if any, dropped."""
    return text(header.striptags() if isinstance(header, Markup) else header)


def details(summary: str, body: Markup, *, searched: bool = True) -> Markup:
    """A folded section (`bl-details`): its summary line, and its body of HTML (`Markup`)."""
    attrs = "" if searched else NOT_SEARCHED
    return Markup(f'<details class="bl-details"{attrs}>\n<summary>{text(summary)}</summary>\n{body}\n</details>')
