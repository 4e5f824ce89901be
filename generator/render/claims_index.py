"""The claims index: every claim, newest first, with its verdict, effect and flags. Up to
PER_PAGE claims it is one page (claims/index.md) filtered by verdict in the reader's browser;
past that it is paged (claims/_pages/2/index.md, ...), and each verdict has pages of its own
(claims/_pages/<verdict>/index.md, then <verdict>-2/index.md, ...). Each page is an index.md, so
its source and its URL share a folder: raw HTML links read alike under MkDocs and Zensical."""

from __future__ import annotations

from collections.abc import Mapping

from markupsafe import Markup

from ..analysis.claims import Evaluation
from . import blocks
from . import text as t
from .templating import generated_mark, render
from .verdict_text import effect, flag_pills, verdict_badges

PER_PAGE = 250  # claims per index page: past it the index and each verdict's claims are paged
PAGES = "_pages"  # claims/_pages/<n>/ and claims/_pages/<verdict>[-<n>]/: no claim id starts with "_"


def claims_index(
    evaluations: Mapping[str, Evaluation], grids_panel: str = "", per_page: int | None = None
) -> dict[str, str]:
    """Every claim, newest first, with its verdict badge, effect and flags; keys are paths under
    claims/. Up to `per_page` claims it is one page (claims/index.md) whose buttons filter its rows
    by verdict. Past that, claims/index.md and claims/_pages/<n>/index.md hold `per_page` claims
    each, and each verdict has pages of its own (claims/_pages/<verdict>/, then -2/, ...): a filter
    on one page would count and show that page's rows only."""
    per_page = PER_PAGE if per_page is None else per_page
    ordered = sorted(evaluations.values(), key=lambda e: (str(e.claim.date or ""), e.claim.id), reverse=True)
    counts: dict[str, int] = {}
    for ev in ordered:
        counts[ev.headline] = counts.get(ev.headline, 0) + 1
    mark = Markup(generated_mark("the reports' front matter"))
    if len(ordered) <= per_page:
        return {
            "index.md": render(
                "claims_index.md.j2",
                mark=mark,
                rows=[_index_row(ev, "") for ev in ordered],
                table=blocks.table,
                counts=sorted(counts.items()),
                grids=Markup(grids_panel),
            )
        }
    out: dict[str, str] = {}
    for verdict in (None, *sorted(counts)):
        shown = [ev for ev in ordered if verdict is None or ev.headline == verdict]
        chunks = [shown[i : i + per_page] for i in range(0, len(shown), per_page)]
        for number, chunk in enumerate(chunks, start=1):
            path = index_path(verdict, number)
            # from the page to claims/: its source (claims/_pages/<x>/index.md) and its URL are in the
            # same folder, so Markdown and raw HTML links climb alike under every builder
            up = "" if path == "index.md" else "../../"
            first, last = (number - 1) * per_page + 1, (number - 1) * per_page + len(chunk)
            which = "Claims" if verdict is None else f"Claims: {verdict}"
            out[path] = render(
                "claims_pages.md.j2",
                mark=mark,
                heading=which if len(chunks) == 1 else f"{which}, page {number} of {len(chunks)}",
                up=up,
                filters=_filter_links(counts, len(ordered), verdict, up),
                pager=_pager(verdict, number, len(chunks), (first, last, len(shown)), up),
                rows=[_index_row(ev, up) for ev in chunk],
                table=blocks.table,
                grids=Markup(grids_panel) if path == "index.md" else "",
                verdict=verdict,
                shown=len(shown),
                total=len(ordered),
            )
    return out


def index_path(verdict: str | None, number: int = 1) -> str:
    """A page of the paged claims index, under claims/: every claim (verdict None) or one verdict's."""
    if verdict is None:
        return "index.md" if number == 1 else f"{PAGES}/{number}/index.md"
    slug = verdict.replace(" ", "-")
    return f"{PAGES}/{slug}/index.md" if number == 1 else f"{PAGES}/{slug}-{number}/index.md"


def _index_row(ev: Evaluation, up: str) -> tuple[object, ...]:
    """A claim's row: date, claim (linked by its built URL: the table is raw HTML; `up` climbs
    from the page's URL to claims/), verdict, effect, claimed, flags."""
    return (
        ev.claim.date or "–",
        t.link(ev.claim.statement, f"{up}{t.path_url(ev.claim.id)}/"),
        verdict_badges(ev),
        effect(ev),
        t.claimed(ev.claim.claimed),
        flag_pills(ev.flags) or "–",
    )


def _filter_links(counts: Mapping[str, int], total: int, verdict: str | None, up: str) -> Markup:
    """'Show: all (1,000) · **inconclusive (600)** · supported (400)': the page's own choice in
    bold, every other a link to its first page (raw HTML: by its built URL; `up` climbs from the
    page's URL to claims/). Each link names its verdict (`data-bl-verdict`) for charts.js, which
    follows a #verdict= address of the one-page index to it."""

    def choice(name: str, count: int, path: str) -> str:
        label = f"{name} ({count:,})"
        if (name == "all" and verdict is None) or name == verdict:
            return f'<strong aria-current="page">{t.text(label)}</strong>'
        url = up + path.removesuffix("index.md")
        return f'<a href="{url or "./"}" data-bl-verdict="{t.attr(name)}">{t.text(label)}</a>'

    parts = [choice("all", total, "index.md")] + [choice(v, n, index_path(v)) for v, n in sorted(counts.items())]
    return Markup('<p class="bl-filter-links">Show: ' + " · ".join(parts) + "</p>")


def _pager(verdict: str | None, number: int, pages: int, span: tuple[int, int, int], up: str) -> Markup | None:
    """'Claims 251–500 of 1,000 · page [1](...) · **2** · [3](...) · [next](...)' (None on one page)."""
    if pages == 1:
        return None
    first, last, total = span
    links = [f"**{n}**" if n == number else f"[{n}]({up}{index_path(verdict, n)})" for n in range(1, pages + 1)]
    if number < pages:
        links.append(f"[next]({up}{index_path(verdict, number + 1)})")
    return Markup(f"Claims {first:,}–{last:,} of {total:,} · page " + " · ".join(links))
