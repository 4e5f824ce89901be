"""A publication's history: every series segmented, its boundaries judged and explained.

The steps, each its own module: `series` groups and orders the runs, `segmentation` finds
where a series changes level, `changes` judges each boundary, and this module names, for each
change, the manifest and setup keys that differ between the last run before it and the first
run after it. Only `worse` and `better` are changes; every other judged boundary is a
candidate, with the same fields. A series shorter than MIN_POINTS is listed but not segmented.

What a publisher committed in history/*.yaml applies to every series holding the run it names
(narrowed by its benchmark, metric and condition): an excluded run is drawn but left out of the
segmentation, with its reason; an accepted change is kept, with its reason, and no longer needs
attention; an annotation is attached to its series at its run (and to a change whose first run
after it is that run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..errors import Problem
from ..format.conditions import same_condition
from ..format.history import Acceptance, Annotation, Exclusion
from ..ledger.records import HistoryNotes, Run
from ..ledger.yamlio import line_for
from . import changes, segmentation
from .series import ALONG, Apart, KnownRows, Pairs, Series, build_series, flat_environment, log_points
from .summaries import RunSummary

MIN_POINTS = 3


@dataclass(frozen=True)
class Moved:
    """A manifest or setup key whose value differs between the runs around a change."""

    key: str
    before: str
    after: str


@dataclass(frozen=True)
class Note:
    """What a history file says about one run of a series: an annotation's words, or the reason
    a run is excluded or a change accepted; `file` is the history file that says it."""

    run: str
    text: str
    file: str


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
    accepted: Note | None = None  # a history file accepts it: kept, no longer needing attention
    annotations: tuple[Note, ...] = ()  # annotations at its first run after


@dataclass(frozen=True)
class Followed:
    """One series with what its history shows."""

    series: Series
    changes: tuple[Change, ...]  # worse or better
    candidates: tuple[Change, ...]  # within noise, unsettled, or a stretch of a slope
    outliers: tuple[str, ...]  # runs set aside as one-run excursions
    between: float | None  # the run-to-run variance on the log scale; None when not segmented
    annotations: tuple[Note, ...] = ()  # at their runs, in file order
    excluded: tuple[Note, ...] = ()  # runs drawn but left out of the segmentation, with the reasons

    @property
    def attention(self) -> tuple[Change, ...]:
        """The changes no history file accepts: those that still need a reader's attention."""
        return tuple(c for c in self.changes if c.accepted is None)


def moved_between(before: Run, after: Run) -> tuple[Moved, ...]:
    """Every manifest and setup key that differs between two runs, the along-keys included
    (an engine build is the likeliest cause), `captured` left out."""
    old, new = flat_environment(before), flat_environment(after)
    return tuple(
        Moved(key, old.get(key, "not recorded"), new.get(key, "not recorded"))
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key) and key != "date"
    )


Entry = Annotation | Exclusion | Acceptance


def applies(entry: Entry, benchmark: str, metric: str, condition: Pairs) -> bool:
    """Whether a history entry's benchmark, metric and condition (when given) are the series'."""
    at = dict(condition)
    return (
        entry.benchmark in (None, benchmark)
        and entry.metric in (None, metric)
        and all(name in at and same_condition(want, at[name]) for name, want in entry.condition.items())
    )


def _notes(
    notes: Sequence[tuple[str, Entry]], series: Series, kind: type[Annotation] | type[Exclusion] | type[Acceptance]
) -> tuple[Note, ...]:
    runs = {run for point in series.points for run in point.runs}
    return tuple(
        Note(entry.run, entry.text if isinstance(entry, Annotation) else entry.reason, file)
        for file, entry in notes
        if isinstance(entry, kind)
        and entry.run in runs
        and applies(entry, series.benchmark, series.metric, series.condition)
    )


def _annotated(change: Change, notes: Sequence[tuple[str, Entry]], series: Series) -> Change:
    accepted = [n for n in _notes(notes, series, Acceptance) if n.run == change.after]
    return replace(
        change,
        accepted=accepted[0] if accepted else None,
        annotations=tuple(n for n in _notes(notes, series, Annotation) if n.run == change.after),
    )


def follow(
    series: Series,
    runs: Mapping[str, Run],
    *,
    min_effect: float,
    confidence: float,
    notes: Sequence[tuple[str, Entry]] = (),
) -> Followed:
    """Segment and judge one series (higher is better unless its metric says lower), with what
    the history files say of it (`notes`: each entry with the file that holds it)."""
    followed = _follow(series, runs, min_effect=min_effect, confidence=confidence)
    if not notes:
        return followed
    return replace(
        followed,
        changes=tuple(_annotated(c, notes, series) for c in followed.changes),
        candidates=tuple(_annotated(c, notes, series) for c in followed.candidates),
        annotations=_notes(notes, series, Annotation),
        excluded=_notes(notes, series, Exclusion),
    )


def _follow(series: Series, runs: Mapping[str, Run], *, min_effect: float, confidence: float) -> Followed:
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
    notes: Iterable[HistoryNotes] = (),
    known: KnownRows | None = None,
) -> list[Followed]:
    """Every series of the publication followed, with what the history files (`notes`: the
    ledger's `history`) say of it (`known`: what `build_series` read of each run before)."""
    by_id = {run.id: run for run in runs}
    entries = entries_of(notes)
    return [
        follow(s, by_id, min_effect=min_effect, confidence=confidence, notes=entries)
        for s in build_series(by_id.values(), summaries, along=along, apart=excluder(entries), known=known)
    ]


def entries_of(notes: Iterable[HistoryNotes]) -> list[tuple[str, Entry]]:
    """Every entry of the history files, each with the file that holds it, in file order."""
    entries: list[tuple[str, Entry]] = []
    for n in notes:
        entries += [(n.path, a) for a in n.data.annotate]
        entries += [(n.path, e) for e in n.data.exclude]
        entries += [(n.path, a) for a in n.data.accept]
    return entries


def excluder(entries: Sequence[tuple[str, Entry]]) -> Apart | None:
    """Which runs the history files exclude from which series (None when they exclude none)."""
    excluded = [entry for _, entry in entries if isinstance(entry, Exclusion)]

    def apart(benchmark: str, metric: str, condition: Pairs, run: str) -> bool:
        return any(e.run == run and applies(e, benchmark, metric, condition) for e in excluded)

    return apart if excluded else None


def unmatched_acceptances(followed: Iterable[Followed], notes: Iterable[HistoryNotes]) -> list[Problem]:
    """A warning for each `accept` entry that no judged boundary of its series starts at: the
    data moved the boundary, or none is found any more, so the entry accepts nothing."""
    used = {(c.accepted.file, c.accepted.run) for f in followed for c in (*f.changes, *f.candidates) if c.accepted}
    out = []
    for n in notes:
        for i, entry in enumerate(n.data.accept):
            if (n.path, entry.run) not in used:
                message = (
                    f"no change of its series starts at run {entry.run!r} any more (the boundary moved, or none "
                    "is found): this entry accepts nothing; accept the change where it is now, or remove it"
                )
                where = line_for(("accept", i, "run"), n.lines)
                out.append(
                    Problem(file=n.path, line=where, field=f"accept.{i}.run", message=message, severity="warning")
                )
    return out
