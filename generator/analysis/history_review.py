"""`review`'s history check: each run a change adds, judged against the current segment of its
series, never against the run before it alone.

The series are the base side's, followed as the site follows them (its history files applied).
The current segment is the base series' last level: its points from the last boundary the
segmentation found (a change or a candidate) to its end, less outliers, excluded and incomplete
runs. The added run's point is judged against that level on the log scale: the ratio of its
mean to the segment's weighted mean level, with an interval whose variance is the level's
(1 / the sum of the segment's weights) plus the run-to-run variance the series showed plus the
run's own variance of its mean, t with (segment points - 1) degrees of freedom. The change
verdicts are those of `changes.verdict_of`: `worse` or `better` when the interval excludes 1
and the ratio is at least `min_effect` away from 1, `within noise` by TOST, `unsettled`
otherwise. One run against a level is a prediction, not a segment: a run-to-run noise wider
than `min_effect` leaves it `unsettled` however close it lies.

A run whose environment matches no base series would start a new one: the series of the same
benchmark, metric, condition and machine that it differs from least is named, with the keys
that differ (the split the merged change would show).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special  # the t quantile is special.stdtrit, which scipy.stats' t.ppf calls (0.3 s less to import)

from ..format.history import Acceptance, Annotation, Exclusion
from ..ledger.records import HistoryNotes, Run
from . import changes, segmentation
from .history import MIN_POINTS, Followed, Moved, applies, entries_of, excluder, history
from .series import ALONG, Pairs, Point, Series, build_series, machine_of
from .summaries import RunSummary


@dataclass(frozen=True)
class AddedPoint:
    """One added run in one series, judged against the current segment of the base's series;
    `verdict` is None when it could not be judged, and `why` says why."""

    run: str
    benchmark: str
    metric: str
    condition: Pairs
    verdict: changes.ChangeVerdict | None
    ratio: float | None = None  # the run's mean / the segment's level
    low: float | None = None
    high: float | None = None
    segment: tuple[str, ...] = ()  # the runs of the current segment, in order
    splits: tuple[Moved, ...] = ()  # keys that differ from the nearest base series: it would split
    why: str = ""


def added_points(
    base: tuple[Iterable[Run], Mapping[str, RunSummary], Iterable[HistoryNotes]],
    head: tuple[Iterable[Run], Mapping[str, RunSummary], Iterable[HistoryNotes]],
    added: Sequence[str],
    *,
    min_effect: float,
    confidence: float,
    along: Sequence[str] = ALONG,
) -> tuple[AddedPoint, ...]:
    """Every (added run, series) pair of the head, judged against the base's series: each side
    is (its runs, their summaries, its history files)."""
    if not added:
        return ()
    followed = history(base[0], base[1], min_effect=min_effect, confidence=confidence, along=along, notes=base[2])
    by_key = {f.series.key: f for f in followed}
    entries = entries_of(head[2])
    out = []
    for series in build_series(head[0], head[1], along=along, apart=excluder(entries)):
        for point in series.points:
            for run in (r for r in point.runs if r in added):
                reason = next(
                    (
                        f"{e.reason} ({file})"
                        for file, e in entries
                        if isinstance(e, Exclusion)
                        and e.run == run
                        and applies(e, series.benchmark, series.metric, series.condition)
                    ),
                    "",
                )
                out.append(_judged(run, point, series, by_key, followed, reason, min_effect, confidence))
    return tuple(out)


def _judged(
    run: str,
    point: Point,
    series: Series,
    by_key: Mapping[tuple[str, str, Pairs, Pairs], Followed],
    followed: Sequence[Followed],
    excluded: str,
    min_effect: float,
    confidence: float,
) -> AddedPoint:
    found = AddedPoint(run, series.benchmark, series.metric, series.condition, None)
    base = by_key.get(series.key)
    if base is None:
        return _new_series(found, series, followed)
    if point.excluded:
        return replace(found, why=f"excluded from its series by a history file: {excluded}")
    if not point.segmented:
        return replace(found, why="an incomplete run: drawn, not judged")
    if base.between is None or series.better is None:
        n = sum(p.segmented for p in base.series.points)
        why = "its metric says neither higher nor lower is better" if series.better is None else ""
        return replace(found, why=why or f"its series had {n} points before it; {MIN_POINTS} are needed to judge one")
    segment = current_segment(base)
    if point.mean <= 0 or any(p.mean <= 0 for p in segment):
        return replace(found, why="a mean that is not positive cannot be judged on a log scale")
    return judge_point(
        found,
        point,
        segment,
        base.between,
        direction=1 if series.better == "higher" else -1,
        min_effect=min_effect,
        confidence=confidence,
    )


def current_segment(followed: Followed) -> list[Point]:
    """The points of the series' last level: from the last boundary found (a change or a
    candidate between two levels) to the end, less outliers and points not segmented."""
    starts = {c.after for c in (*followed.changes, *followed.candidates) if c.kind == "step"}
    points = followed.series.points
    first = max((i for i, p in enumerate(points) if p.runs[0] in starts), default=0)
    return [p for p in points[first:] if p.segmented and p.runs[0] not in followed.outliers]


def judge_point(
    found: AddedPoint,
    point: Point,
    segment: Sequence[Point],
    between: float,
    *,
    direction: int,
    min_effect: float,
    confidence: float,
) -> AddedPoint:
    """The point's mean against the segment's weighted level: see the module."""
    w = segmentation.weights([p.own for p in segment], between)
    y = np.log(np.asarray([p.mean for p in segment], dtype=float))
    level = float(np.dot(w, y) / w.sum())
    difference = math.log(point.mean) - level
    se = math.sqrt(1 / float(w.sum()) + between + point.own)
    df = max(len(segment) - 1, 1)
    two_sided = float(special.stdtrit(df, 1 - (1 - confidence) / 2))
    one_sided = float(special.stdtrit(df, confidence))
    ci = (math.exp(difference - two_sided * se), math.exp(difference + two_sided * se))
    tost = (math.exp(difference - one_sided * se), math.exp(difference + one_sided * se))
    ratio = math.exp(difference)
    verdict = changes.verdict_of(ci, tost, ratio, direction=direction, min_effect=min_effect)
    runs = tuple(r for p in segment for r in p.runs)
    return replace(found, verdict=verdict, ratio=ratio, low=ci[0], high=ci[1], segment=runs)


def _new_series(found: AddedPoint, series: Series, followed: Sequence[Followed]) -> AddedPoint:
    """A run no base series holds: the base series of the same benchmark, metric, condition and
    machine it differs from least, and the keys that differ, or the first run of its kind."""
    env = dict(series.environment)
    machine = machine_of(env)
    near = [
        f.series
        for f in followed
        if (f.series.benchmark, f.series.metric, f.series.condition)
        == (series.benchmark, series.metric, series.condition)
        and machine_of(dict(f.series.environment)) == machine
    ]
    if not near:
        return replace(found, why="the first run of its series")

    def moved(other: Series) -> tuple[Moved, ...]:
        old = dict(other.environment)
        return tuple(
            Moved(k, old.get(k, "not recorded"), env.get(k, "not recorded"))
            for k in sorted(set(old) | set(env))
            if old.get(k) != env.get(k)
        )

    nearest = min(near, key=lambda s: (len(moved(s)), -len(s.points)))
    keys = moved(nearest)
    said = "; ".join(f"{m.key} {m.before} → {m.after}" for m in keys)
    return replace(found, splits=keys, why=f"would start a series of its own ({said})")


@dataclass(frozen=True)
class NoteChange:
    """An entry of a history file that a change adds or removes: what a reviewer must see, since
    an exclusion or an acceptance can hide a regression."""

    how: str  # "adds" or "removes"
    file: str
    kind: str  # "annotate", "exclude" or "accept"
    run: str
    narrowed: str  # "benchmark=…, metric=…, concurrency=…", or "" when the entry names every series of its run
    words: str  # the annotation's text or the reason


def note_changes(base: Iterable[HistoryNotes], head: Iterable[HistoryNotes]) -> tuple[NoteChange, ...]:
    """Every history entry the head adds or removes (an edited entry is both), in file order."""

    def said(notes: Iterable[HistoryNotes]) -> list[tuple[str, str, str, str, str]]:
        out = []
        for file, entry in entries_of(notes):
            kind = (
                "annotate"
                if isinstance(entry, Annotation)
                else "accept"
                if isinstance(entry, Acceptance)
                else "exclude"
            )
            narrowed = [f"benchmark={entry.benchmark}"] if entry.benchmark is not None else []
            narrowed += [f"metric={entry.metric}"] if entry.metric is not None else []
            narrowed += [f"{k}={v}" for k, v in entry.condition.items()]
            words = entry.text if isinstance(entry, Annotation) else entry.reason
            out.append((file, kind, entry.run, ", ".join(narrowed), words))
        return out

    before, after = said(base), said(head)
    added = [NoteChange("adds", *e) for e in after if e not in before]
    return tuple(added + [NoteChange("removes", *e) for e in before if e not in after])
