"""What the site's search finds on a run, claim or grid page, built from the records.

Material's search plugin would parse every generated page's HTML for its index, most of it
tables a reader never searches. Instead, each run, claim, grid and History series page gets one
entry of its own: its title and the words a reader looks for (a run's id, benchmark, setup and
environment; a claim's statement, metric, runs and verdict; a grid's statement, factors and
verdict; a series' benchmark, metric, condition, machine, and each change's verdict, runs and
the keys that moved), and each page of the runs index one entry, not its table of every run. Keyed by
the page's path under docs_dir, so the plugin leaves exactly those pages out of the search
plugin's parse. The text is HTML as the search plugin writes its own (`&`, `<` and `>` escaped),
so untrusted text stays text in the search results.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.claims import ACCEPTED, Evaluation
from ..analysis.grid_records import Grid
from ..format.keys import as_yaml, flatten
from ..ledger.records import Ledger, Run
from .runs_index import PAGES, PER_PAGE

if TYPE_CHECKING:  # history is imported only by a publication that follows it
    from ..analysis.history import Followed

MAX_VALUE = 200  # characters of one setup or environment value in the index (a long command is cut)


@dataclass(frozen=True)
class SearchEntry:
    """One search result: its title and its text, both escaped HTML, and its tag (the record's
    id, which the search plugin weighs above everything, so searching an id finds its page first)."""

    title: str
    text: str
    tag: str


def _escaped(parts: Iterable[str]) -> str:
    return html.escape(" · ".join(p for p in parts if p), quote=False)


def _pairs(values: Mapping[str, object]) -> list[str]:
    return [f"{key} {as_yaml(value)[:MAX_VALUE]}" for key, value in flatten(dict(values)).items() if key]


def run_entry(run: Run) -> SearchEntry:
    """A run: its title, id, date, benchmark, setup, conditions, metrics and environment keys."""
    meta = run.meta
    manifest = run.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
    manifest.pop("schema", None)
    parts = [
        f"Run {run.id}",
        str(meta.date),
        f"benchmark {meta.benchmark}",
        *_pairs({"setup": meta.setup}),
        f"conditions {', '.join(meta.conditions)}" if meta.conditions else "",
        f"metrics {', '.join(meta.metrics)}",
        f"source {meta.source.kind}",
        *_pairs(manifest),
    ]
    return SearchEntry(html.escape(meta.title, quote=False), _escaped(parts), html.escape(run.id, quote=False))


def claim_entry(ev: Evaluation) -> SearchEntry:
    """A claim: its statement, verdict and reason, metric, runs and report."""
    claim = ev.claim
    runs = [r for r in (claim.baseline, claim.candidate, claim.run) if isinstance(r, str)]
    parts = [
        f"Claim {claim.id}",
        f"verdict {ev.verdict}",
        ev.reason.replace(f"`{ACCEPTED}`", ACCEPTED),  # the card shows it as code
        f"metric {claim.metric}" if claim.metric else "",
        f"claimed {claim.claimed}" if claim.claimed else "",
        f"runs {', '.join(runs)}" if runs else "",
        f"corrects {claim.corrects}" if claim.corrects else "",
        f"report {ev.report.meta.title}",
    ]
    return SearchEntry(html.escape(claim.statement, quote=False), _escaped(parts), html.escape(claim.id, quote=False))


def grid_entry(grid: Grid) -> SearchEntry:
    """An attribution grid: its statement, verdict and reason, metric, factors and runs."""
    attribution = grid.attribution
    parts = [
        f"Attribution grid {attribution.id}",
        f"verdict {grid.verdict}",
        grid.reason,
        f"earned by {grid.earned}" if grid.earned else "",
        f"metric {attribution.metric}",
        *[f"factor {name} {key}" for name, key in attribution.factors.items()],
        f"runs {', '.join(attribution.runs)}",
    ]
    title, tag = html.escape(attribution.statement, quote=False), html.escape(attribution.id, quote=False)
    return SearchEntry(title, _escaped(parts), tag)


def history_entries(followed: Iterable[Followed]) -> dict[str, SearchEntry]:
    """Each History series page's entry, keyed by the page's path under docs_dir: its title,
    condition, what sets it apart (machine, split keys), its points and each change with its
    verdict, ratio, runs and the keys that moved."""
    from .history_pages import HISTORY, has_page, series_slug
    from .history_words import condition_text, distinct, moved_text, ratio_text, title

    out = {}
    for f in followed:
        if not has_page(f):
            continue
        s = f.series
        parts = [
            f"History of {title(s)} at {condition_text(s)}",
            distinct(s),
            f"{len(s.points)} points, {sum(len(p.runs) for p in s.points)} runs",
            *[f"{c.verdict} {ratio_text(c)} from {c.before} to {c.after}; {moved_text(c)}" for c in f.changes],
        ]
        slug = series_slug(s)
        out[f"{HISTORY}/{slug}/index.md"] = SearchEntry(
            html.escape(f"{title(s)} at {condition_text(s)}", quote=False),
            _escaped(parts),
            html.escape(slug, quote=False),
        )
    return out


def index_entries(runs: int) -> dict[str, SearchEntry]:
    """Each page of the runs index (`render.runs_index`): one entry, not its table of every run
    (each run has its own entry)."""
    pages = max(1, -(-runs // PER_PAGE))
    out = {}
    for number in range(1, pages + 1):
        path = "runs/index.md" if number == 1 else f"runs/{PAGES}/{number}.md"
        parts = ["Every committed run, newest first", f"page {number} of {pages}", f"{runs:,} runs in all"]
        out[path] = SearchEntry("Runs", _escaped(parts), "runs")
    return out


def search_entries(
    ledger: Ledger, evaluations: Mapping[str, Evaluation], grids: Iterable[Grid], followed: Iterable[Followed] = ()
) -> dict[str, SearchEntry]:
    """Every run, claim, grid and History series page's entry, keyed by the page's path under
    docs_dir (`followed`: every series history follows; none with `history: false`)."""
    out = index_entries(len(ledger.runs))
    out |= {f"runs/{run.id}/index.md": run_entry(run) for run in ledger.runs.values()}
    out |= {f"claims/{claim_id}/index.md": claim_entry(ev) for claim_id, ev in evaluations.items()}
    out |= {f"claims/{g.attribution.id}/index.md": grid_entry(g) for g in grids}
    out |= history_entries(followed)
    return out
