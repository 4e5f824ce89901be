"""The runs index: every run, newest first, PER_PAGE a page (runs/index.md, then
runs/_pages/2.md, ...), each row with its receipt state, source, trials and setup."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup

from ..analysis.summaries import label_of
from ..format.keys import flatten
from ..ledger.records import Run
from . import blocks
from . import text as t
from .run_page import source_text, state_badge
from .templating import generated_mark, render

PER_PAGE = 500  # runs per index page: 10,000 runs stay far under 500 KB a page
PAGES = "_pages"  # runs/_pages/<n>.md: no run id starts with "_"


def runs_index(
    runs: Sequence[Run], states: Mapping[str, tuple[str, str]] | None = None, per_page: int = PER_PAGE
) -> dict[str, str]:
    """The runs index, newest first, PER_PAGE runs a page: runs/index.md, then runs/_pages/2.md,
    3.md, ...; each page links every other. Keys are paths under runs/."""
    ordered = sorted(runs, key=lambda r: (r.meta.date, r.id), reverse=True)
    chunks = [ordered[i : i + per_page] for i in range(0, len(ordered), per_page)] or [[]]
    out = {}
    for number, chunk in enumerate(chunks, start=1):
        up = "" if number == 1 else "../"  # from the page's source, for Markdown links
        site_up = "" if number == 1 else "../../"  # from its URL (runs/_pages/<n>/), for raw HTML
        rows = [_index_row(run, states, site_up) for run in chunk]
        pager = _pager(number, len(chunks), len(ordered), per_page, up)
        path = "index.md" if number == 1 else f"{PAGES}/{number}.md"
        table = blocks.table(INDEX_COLUMNS, rows, right=[3], kind="runs")
        out[path] = render(
            "runs_index.md.j2", mark=Markup(generated_mark("runs/")), table=table, pager=pager, up=up, runs=len(rows)
        )
    return out


INDEX_COLUMNS = ("Run", "Receipts", "Source", "Trials", "Date", "Setup")


def _index_row(run: Run, states: Mapping[str, tuple[str, str]] | None, up: str) -> tuple[object, ...]:
    """A run's row of the index; `up` climbs from the index page's URL to runs/. The run's
    title and benchmark sit under its id, its conditions under its setup: six columns fit the
    content column at 1280 px."""
    meta = run.meta
    setup = "; ".join(f"{k}={t.scalar(v)}" for k, v in flatten(meta.setup).items())
    conditions = ", ".join(label_of(run, at) for at in run.results.condition_values())
    return (
        _lines(t.link(run.id, f"{up}{t.path_url(run.id)}/"), f"{meta.title} · {meta.benchmark}"),
        state_badge(*(states or {}).get(run.id, ("unverified", "unverified"))),
        source_text(run),
        _trials(run),
        meta.date,
        _lines(t.text(setup or "–"), f"conditions: {conditions}") if conditions else setup or "–",
    )


def _trials(run: Run) -> object:
    """The Trials cell: the count, and "incomplete run" under it for a run that stopped early."""
    if run.reported:
        return "not reported"
    if run.meta.incomplete is None:
        return run.results.trials
    return _lines(Markup(run.results.trials), "incomplete run")


def _lines(first: Markup, second: str) -> Markup:
    """A cell of two lines: `first` (markup), then `second` (untrusted text) in smaller type."""
    return Markup(f'{first}<br><span class="bl-sub">{t.text(second)}</span>')


def _pager(number: int, pages: int, total: int, per_page: int, up: str) -> Markup | None:
    """'Runs 501–1,000 of 2,345 · page 1 · **2** · 3 · next' (None on a single page)."""
    if pages == 1:
        return None

    def href(n: int) -> str:
        return f"{up}index.md" if n == 1 else f"{up}{PAGES}/{n}.md"

    first, last = (number - 1) * per_page + 1, min(number * per_page, total)
    links = [f"**{n}**" if n == number else f"[{n}]({href(n)})" for n in range(1, pages + 1)]
    if number < pages:
        links.append(f"[next]({href(number + 1)})")
    return Markup(f"Runs {first:,}–{last:,} of {total:,} · page " + " · ".join(links))
