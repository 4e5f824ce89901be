"""The History section: an index of every series (its latest value and latest change), one
page per series of at least `history.MIN_POINTS` points (its chart, changes, candidates,
points and environment), and the Changes page, newest first. Pure: returns `{path: bytes}`.

Links inside the raw HTML tables are the built site's URLs (directory URLs, as `blocks` says):
the index is served at history/, a series page at history/<slug>/, the Changes page at
history/changes/."""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from ..analysis.claims import Evaluation
from ..analysis.history import MIN_POINTS, Change, Followed
from ..analysis.history_levels import levels
from ..analysis.series import ALONG, Series, Split
from ..analysis.summaries import RunSummary
from ..format.conditions import same_condition
from ..ledger.records import Run
from . import blocks
from . import text as t
from .chart_templates import ChartTemplates
from .compressed import KeptFiles
from .history_charts import along_labels, order_of, series_chart, series_rows, status
from .history_words import (
    CHANGE_COLUMNS,
    change_rows,
    condition_text,
    distinct,
    figure,
    latest_change,
    ratio_text,
    run_link,
    title,
)
from .templating import generated_mark, render

HISTORY = "history"
CHANGES = f"{HISTORY}/changes.md"
CHART = "chart.json"


def series_slug(series: Series) -> str:
    """A series' folder under history/: its benchmark and metric in lower-case letters, digits
    and hyphens (at most 60 characters), then 10 hex digits of the sha256 of its whole key, so
    two series never share a folder, even on a case-insensitive file system."""
    key = json.dumps([series.benchmark, series.metric, series.condition, series.environment])
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    name = re.sub(r"[^a-z0-9]+", "-", f"{series.benchmark}-{series.metric}".lower()).strip("-")[:60].strip("-")
    return f"{name or 'series'}-{digest}"


def has_page(f: Followed) -> bool:
    return len(f.series.points) >= MIN_POINTS


@dataclass(frozen=True)
class Context:
    """What the pages need beside the followed series: the runs (titles, incomplete runs), each
    run's summaries (its trials), the confidence level's words and the metric's units."""

    runs: Mapping[str, Run]
    summaries: Mapping[str, RunSummary]
    level: str
    along: tuple[str, ...] = ALONG  # the along-keys in force
    claims: Mapping[str, tuple[Evaluation, ...]] = field(default_factory=dict)  # run id -> claims resting on it

    def claims_on(self, series: Series) -> list[tuple[str, Evaluation]]:
        """The claims (corrections among them) of the series' metric (or of none) that rest on
        one of its runs at its condition (or at every condition): (run, evaluation), in order."""
        return [
            (run, ev)
            for p in series.points
            for run in p.runs
            for ev in self.claims.get(run, ())
            if ev.claim.metric in (None, series.metric) and _at(ev, series)
        ]

    def unit(self, series: Series) -> str | None:
        run = self.runs[series.points[-1].runs[-1]]
        spec = run.meta.metrics.get(series.metric)
        return spec.unit if spec is not None else None

    @functools.cached_property
    def incomplete(self) -> frozenset[str]:
        """The runs marked incomplete (worked out once: every point's status asks)."""
        return frozenset(run_id for run_id, run in self.runs.items() if run.meta.incomplete is not None)


def _at(ev: Evaluation, series: Series) -> bool:
    """Does the claim judge the series' condition? (`at: all`, or an `at:` it selects.)"""
    wanted, here = ev.claim.at_list, dict(series.condition)
    return wanted is None or any(all(k in here and same_condition(v, here[k]) for k, v in at.items()) for at in wanted)


SeriesPages = dict[str, tuple[str, KeptFiles]]  # series folder -> (what it was rendered from, its files)


def history_pages(
    followed: Sequence[Followed],
    context: Context,
    templates: ChartTemplates,
    remembered: SeriesPages | None = None,
    *,
    compress: bool = True,
) -> dict[str, bytes]:
    """history/index.md, history/changes.md, and each long enough series' page and chart.
    `remembered` (the build cache's) keeps each series' files by everything they are rendered
    from (`series_key`), compressed unless `compress` is false (`serve`): after one run changed,
    only the series holding it are rendered again."""
    out: dict[str, bytes] = {}
    incomplete = context.incomplete
    shown = set()
    for f in followed:
        if has_page(f):
            base = f"{HISTORY}/{series_slug(f.series)}"
            shown.add(base)
            on = context.claims_on(f.series)
            key = series_key(f, context, on) if remembered is not None else ""
            known = remembered.get(base) if remembered is not None else None
            if known is not None and known[0] == key:
                out |= known[1].unpacked()
                continue
            claims = [(run, claim_words(ev)) for run, ev in on]
            rows = series_rows(f, _trials(f, context), levels(f), incomplete, "../../compare/", claims)
            unit = context.unit(f.series)
            labels = (f.series.metric, unit, order_of(f), context.level)
            files = {f"{base}/{CHART}": templates.spec(series_chart, labels, rows)}
            files[f"{base}/index.md"] = series_page(f, context).encode()
            out |= files
            if remembered is not None:
                remembered[base] = (key, KeptFiles.of(files, compress=compress))
    if remembered is not None:
        for gone in set(remembered) - shown:
            del remembered[gone]
    out[f"{HISTORY}/index.md"] = index_page(followed, context).encode()
    out[CHANGES] = changes_page(followed, context).encode()
    return out


def series_key(f: Followed, context: Context, on: Sequence[tuple[str, Evaluation]]) -> str:
    """Everything a series' page and chart are rendered from: the followed series (its points,
    changes and notes), each of its runs' digest (its title, its trials and their summaries
    follow from it), the confidence level's words, the along-keys and the claims resting on
    its runs as the page words them (a sha256 of their pickle: equal keys, equal inputs)."""
    runs = [(run, context.runs[run].digest) for p in f.series.points for run in p.runs]
    claims = [(run, ev.claim.id, ev.claim.corrects, ev.verdict, ev.claim.statement) for run, ev in on]
    given = (f, runs, context.level, context.along, claims)
    return hashlib.sha256(pickle.dumps(given, protocol=5)).hexdigest()


def _trials(f: Followed, context: Context) -> dict[int, list[tuple[str, float]]]:
    """Each point's kept trials (point index -> (run, value)), from the runs' summaries."""
    at = tuple(value for _, value in f.series.condition)
    out: dict[int, list[tuple[str, float]]] = {}
    for i, p in enumerate(f.series.points):
        for run in p.runs:
            for m in context.summaries[run].at(f.series.metric):
                if m.at == at and m.summary is not None:
                    out.setdefault(i, []).extend((run, v) for v in m.values)
    return out


# -- the pages ----------------------------------------------------------------------------


def series_page(f: Followed, context: Context) -> str:
    s = f.series
    unit = context.unit(s)
    order = order_of(f)
    direction = {"higher": "higher is better", "lower": "lower is better"}.get(s.better or "", "no direction declared")
    apart = distinct(s)  # two series of one title (a split, another machine) differ here
    about = (
        f"At {condition_text(s)}{f' ({apart})' if apart else ''}; {t.plural(len(s.points), 'point')} in order of "
        f"{order}, "
        f"{t.plural(sum(len(p.runs) for p in s.points), 'run')}; {direction}."
    )
    if s.better is None:
        about += " A metric with no direction is drawn, never segmented or judged."
    splits = [split_line(split) for split in s.splits]
    caption = (
        f"Each blue point is one run's mean with its {context.level} interval; hollow: a reported figure (no "
        "interval), or a run left out of the segmentation (incomplete, or excluded by a history file); grey dots: "
        "its trials; the grey line of steps: the level of each segment; a dashed line: a change, orange worse, green "
        "better (click it to compare the two runs); a dotted line: an annotation."
    )
    segmented = f.between is not None
    no_change = (
        "the segmentation found no boundary judged worse or better."
        if segmented
        else "the series is not segmented (its metric has no direction, or too few points enter the segmentation)."
    )
    labels = along_labels(f)
    shown = distinct_candidates(f)
    point_rows = [
        (
            run_link(p.runs[0], "../../") + (Markup(f" and {len(p.runs) - 1} more") if len(p.runs) > 1 else ""),
            labels[i],
            figure(p.mean, p.low, p.high, p.n, unit, context.level),
            status(f, i, context.incomplete),
        )
        for i, p in enumerate(s.points)
    ]
    environment = blocks.table(
        ("Key", "Value"), [(k, t.recorded(v)) for k, v in s.environment], kind="pairs", searched=False
    )
    return render(
        "history_series.md.j2",
        mark=Markup(generated_mark("runs/")),
        title=t.text(f"{title(s)} at {condition_text(s)}"),
        about=about,
        splits=splits,
        spec=CHART,
        label=f"history of {s.metric}: each run's mean with its interval, the segments and the changes",
        caption=caption,
        changes=blocks.table(CHANGE_COLUMNS, change_rows(f.changes, "../../"), kind="changes") if f.changes else None,
        no_change=no_change,
        candidates=blocks.table(CHANGE_COLUMNS, change_rows(shown, "../../"), kind="changes") if shown else None,
        candidate_words="within noise, unsettled, or a stretch of a slow slope",
        outliers=Markup(", ".join(run_link(run, "../../") for run in f.outliers)) if f.outliers else None,
        notes=[run_link(n.run, "../../") + Markup(": ") + t.text(f"{n.text} ({n.file})") for n in f.annotations],
        excluded=[run_link(n.run, "../../") + Markup(": ") + t.text(f"{n.text} ({n.file})") for n in f.excluded],
        claims=[
            run_link(run, "../../")
            + Markup(": ")
            + t.link(f"{ev.claim.id}", f"../../claims/{t.path_url(ev.claim.id)}/")
            + Markup(" ")
            + t.text(f"({ev.verdict}): {ev.claim.statement}")
            for run, ev in context.claims_on(s)
        ],
        points=blocks.table(("Run", order.capitalize(), "Mean", "Status"), point_rows, kind="points", searched=False),
        environment=blocks.details(f"Environment: {t.plural(len(s.environment), 'key')}", environment),
    )


def distinct_candidates(f: Followed) -> list[Change]:
    """The candidates, less a latest-vs-best comparison of the very segments a step candidate
    already judged alike (the best earlier segment is the latest's neighbour)."""
    steps = {(c.before, c.after, c.verdict) for c in f.candidates if c.kind == "step"}
    return [c for c in f.candidates if c.kind == "step" or (c.before, c.after, c.verdict) not in steps]


def claim_words(ev: Evaluation) -> str:
    """A claim at its run on the chart: 'claim ID (VERDICT): STATEMENT', or 'correction of ...'."""
    kind = f"correction of {ev.claim.corrects}" if ev.claim.corrects else "claim"
    return f"{kind} {ev.claim.id} ({ev.verdict}): {ev.claim.statement}"


def claims_by_run(evaluations: Mapping[str, Evaluation]) -> dict[str, tuple[Evaluation, ...]]:
    """Each run's claims: those naming it as baseline, candidate or single run, in claim order."""
    out: dict[str, list[Evaluation]] = {}
    for ev in evaluations.values():
        for run in dict.fromkeys(r for r in (ev.claim.baseline, ev.claim.candidate, ev.claim.run) if r is not None):
            out.setdefault(run, []).append(ev)
    return {run: tuple(evs) for run, evs in out.items()}


def split_line(split: Split) -> Markup:
    """'Split: accelerators.0.driver 580.95 → 590.12 from run X': where the would-be series was cut."""
    return (
        Markup("Split: ")
        + t.text(f"{split.key} {t.recorded(split.before)} → {t.recorded(split.after)} from run ")
        + run_link(split.run, "../../")
        + Markup(" (a series of its own on each side).")
    )


INDEX_COLUMNS = ("Series", "Points", "Latest", "Latest change")


def index_page(followed: Sequence[Followed], context: Context) -> str:
    long = [f for f in followed if has_page(f)]
    short = [f for f in followed if not has_page(f)]
    rows = [_index_row(f, context, series_slug(f.series)) for f in long]
    short_rows = [
        (
            Markup(f"{t.text(title(f.series))}<br>") + Markup(f'<span class="bl-sub">{t.text(_sub(f.series))}</span>'),
            len(f.series.points),
            _latest(f, context),
            Markup(", ".join(run_link(run, "../") for p in f.series.points for run in p.runs)),
        )
        for f in short
    ]
    short_table = blocks.table(("Series", "Points", "Latest", "Runs"), short_rows, right=[1], kind="series")

    return render(
        "history_index.md.j2",
        mark=Markup(generated_mark("runs/")),
        along=", ".join(context.along) + ", and keys ending in commit, sha or revision",
        min_points=MIN_POINTS,
        followed=len(long),
        followed_table=blocks.table(INDEX_COLUMNS, rows, right=[1], kind="series"),
        short=len(short),
        short_table=blocks.details(f"{t.plural(len(short), 'series', 'series')} of 1 or 2 points", short_table)
        if short
        else None,
        total=len(followed),
    )


def _sub(series: Series) -> str:
    apart = distinct(series)
    return f"at {condition_text(series)}" + (f"; {apart}" if apart else "")


def _latest(f: Followed, context: Context) -> str:
    p = f.series.points[-1]
    return figure(p.mean, p.low, p.high, p.n, context.unit(f.series), context.level) + f" ({p.date})"


def _index_row(f: Followed, context: Context, slug: str) -> tuple[object, ...]:
    change = latest_change(f)
    latest = (
        Markup(f"<strong>{t.text(change.verdict)}</strong> {t.text(ratio_text(change))}<br>")
        + Markup(f'<span class="bl-sub">from {t.text(change.before)} to {t.text(change.after)}</span>')
        if change is not None
        else "none"
    )
    return (
        t.link(title(f.series), f"{t.path_url(slug)}/")
        + Markup(f'<br><span class="bl-sub">{t.text(_sub(f.series))}</span>'),
        len(f.series.points),
        _latest(f, context),
        latest,
    )


def dated_changes(followed: Sequence[Followed], runs: Mapping[str, Run]) -> list[tuple[Followed, Change]]:
    """Every change of every series, newest first: by the date of its later run, then its
    series and runs (a stable order for equal dates)."""
    found = [(f, c) for f in followed for c in f.changes]
    found.sort(
        key=lambda fc: (
            str(runs[fc[1].after].meta.date),
            series_slug(fc[0].series),
            fc[1].after,
            fc[1].before,
            fc[1].kind,
        )
    )
    return found[::-1]


CHANGES_COLUMNS = ("Date", "Series", "Runs", "Verdict", "After / before", "Keys that moved")


def changes_page(followed: Sequence[Followed], context: Context) -> str:
    rows = []
    for f, c in dated_changes(followed, context.runs):
        series = t.link(title(f.series), f"../{t.path_url(series_slug(f.series))}/") + Markup(
            f'<br><span class="bl-sub">{t.text(_sub(f.series))}</span>'
        )
        (pair, verdict, ratio, moved) = change_rows([c], "../../")[0]
        rows.append((str(context.runs[c.after].meta.date), series, pair, verdict, ratio, moved))
    segmented = sum(1 for f in followed if f.between is not None)
    why = f"none of the {t.plural(segmented, 'series', 'series')} segmented shows a boundary judged worse or better."
    return render(
        "history_changes.md.j2",
        mark=Markup(generated_mark("runs/")),
        table=blocks.table(CHANGES_COLUMNS, rows, kind="changes") if rows else None,
        why=why,
    )
