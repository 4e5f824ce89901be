"""A publication's history: every series segmented, its boundaries judged and explained.

The steps, each its own module: `series` groups and orders the runs, `segmentation` finds
where a series changes level, `changes` judges each boundary, and this module names, for each
change, the manifest and setup keys that differ between the last run before it and the first
run after it. Only `worse` and `better` are changes; every other judged boundary is a
candidate, with the same fields. A series shorter than MIN_POINTS is listed but not segmented.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..ledger.records import Run
from . import changes, segmentation
from .series import ALONG, Series, build_series, flat_environment, log_points
from .summaries import RunSummary

MIN_POINTS = 3


@dataclass(frozen=True)
class Moved:
    """A manifest or setup key whose value differs between the runs around a change."""

    key: str
    before: str
    after: str


@dataclass(frozen=True)
class Change:
    """A judged boundary, by run: `before` is the last run before it, `after` the first after."""

    before: str
    after: str
    ratio: float
    low: float
    high: float
    verdict: changes.ChangeVerdict
    kind: changes.Kind
    sloped: bool
    moved: tuple[Moved, ...]


@dataclass(frozen=True)
class Followed:
    """One series with what its history shows."""

    series: Series
    changes: tuple[Change, ...]  # worse or better
    candidates: tuple[Change, ...]  # within noise, unsettled, or a stretch of a slope
    outliers: tuple[str, ...]  # runs set aside as one-run excursions
    between: float | None  # the run-to-run variance on the log scale; None when not segmented


def moved_between(before: Run, after: Run) -> tuple[Moved, ...]:
    """Every manifest and setup key that differs between two runs, the along-keys included
    (an engine build is the likeliest cause), `captured` left out."""
    old, new = flat_environment(before), flat_environment(after)
    return tuple(
        Moved(key, old.get(key, "not recorded"), new.get(key, "not recorded"))
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key) and key != "date"
    )


def follow(series: Series, runs: Mapping[str, Run], *, min_effect: float, confidence: float) -> Followed:
    """Segment and judge one series (higher is better unless its metric says lower)."""
    kept, log_means, own = log_points(series)
    if len(kept) < MIN_POINTS or series.better is None:
        return Followed(series, (), (), (), None)
    found = segmentation.segment(log_means, own)
    rest = [i for i in range(len(kept)) if i not in found.outliers]
    w = segmentation.weights([own[i] for i in rest], found.between)
    judged = changes.judge_all(
        [log_means[i] for i in rest],
        list(w),
        [rest.index(b) for b in found.boundaries],
        direction=1 if series.better == "higher" else -1,
        min_effect=min_effect,
        confidence=confidence,
    )
    point = [series.points[kept[i]] for i in rest]
    out = []
    for j in judged:
        before, after = point[j.before].runs[-1], point[j.after].runs[0]
        moved = moved_between(runs[before], runs[after])
        out.append(Change(before, after, j.ratio, j.low, j.high, j.verdict, j.kind, j.sloped, moved))
    return Followed(
        series,
        tuple(c for c, j in zip(out, judged, strict=True) if j.is_change),
        tuple(c for c, j in zip(out, judged, strict=True) if not j.is_change),
        tuple(series.points[kept[i]].runs[0] for i in found.outliers),
        found.between,
    )


def history(
    runs: Iterable[Run],
    summaries: Mapping[str, RunSummary],
    *,
    min_effect: float,
    confidence: float,
    along: Sequence[str] = ALONG,
) -> list[Followed]:
    """Every series of the publication followed."""
    by_id = {run.id: run for run in runs}
    return [
        follow(s, by_id, min_effect=min_effect, confidence=confidence)
        for s in build_series(by_id.values(), summaries, along=along)
    ]
