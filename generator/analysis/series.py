"""Series: the runs of one benchmark, metric, condition and environment, in order.

A series' environment is a run's flattened manifest (less `captured`) and its `setup`, less the
along-keys: the keys that move along a series (ALONG, keys ending in COMMIT_ENDINGS, and any a
publication adds). Runs of two machines are never one series, and a key that differs inside a
would-be series (same benchmark, metric, condition and machine) splits it: the split is kept
on both series so their pages can name it.

Points are ordered by `software.build_number` when every run of the series records it (an
integer, as the importers write it for llama.cpp builds), else by date, then by the moment the
manifest was captured (`captured.at`, when recorded), then run id. Runs that share every
along-value (the build, the date and every along-key of the manifest, the commit included)
collapse into one point: the mean of their means, on the log scale for the segmentation. Runs of
one day at different commits (a pytest-benchmark save per commit) stay points of their own.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass

from ..format.keys import as_yaml, flatten
from ..ledger.records import Run
from .summaries import RunSummary

ALONG = (
    "software.engine_version",
    "software.build_number",
    "date",
    "software.branch",  # where pytest-benchmark's commit_info goes: the code measured moves along
    "software.dirty",
)
COMMIT_ENDINGS = ("commit", "git_commit", "sha", "revision")
MACHINE_KEYS = ("host.name", "host.cpu", "host.os")  # and each accelerator's name: importers/common.Machine

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Point:
    """One along-value of a series: one run, or the runs that share it."""

    runs: tuple[str, ...]
    date: str
    build: int | None
    mean: float
    low: float | None
    high: float | None
    n: int  # trials, over the point's runs; 0 for a reported figure
    own: float  # variance of the log mean from the trials; 0 when unknown (one trial, reported)
    hollow: bool  # reported (no trials) or incomplete
    segmented: bool  # enters the segmentation (incomplete runs and excluded runs do not)
    excluded: bool = False  # a run a history file excludes from this series: a point of its own


@dataclass(frozen=True)
class Split:
    """A key whose value differs between two neighbouring would-be parts of one series."""

    key: str
    before: str
    after: str
    run: str  # the first run with the new value


@dataclass(frozen=True)
class Series:
    benchmark: str
    metric: str
    condition: Pairs
    environment: Pairs
    better: str | None
    points: tuple[Point, ...]
    splits: tuple[Split, ...] = ()

    @property
    def key(self) -> tuple[str, str, Pairs, Pairs]:
        return (self.benchmark, self.metric, self.condition, self.environment)


def is_along(key: str, along: Sequence[str]) -> bool:
    """A key that moves along a series rather than defining it."""
    last = key.rsplit(".", 1)[-1]
    return key in along or last in COMMIT_ENDINGS or last.endswith("_commit")


def flat_environment(run: Run) -> dict[str, str]:
    """The run's manifest (less captured and schema) and setup, flattened, every key kept."""
    manifest = run.manifest.model_dump(by_alias=True, exclude={"captured", "schema_"})
    manifest.pop("schema", None)
    flat = {k: as_yaml(v) for k, v in flatten(manifest).items()}
    flat |= {k: as_yaml(v) for k, v in (flatten(run.meta.setup, "setup") if run.meta.setup else {}).items()}
    return dict(sorted(flat.items()))


def environment_of(run: Run, along: Sequence[str]) -> dict[str, str]:
    """The run's manifest (less captured and schema) and setup, flattened, less the along-keys."""
    return {k: v for k, v in flat_environment(run).items() if not is_along(k, along)}


def machine_of(environment: Mapping[str, str]) -> Pairs:
    """The keys that say which machine (the host's name, CPU and OS, each accelerator's name):
    two machines are never one series."""
    return tuple(
        (k, v)
        for k, v in environment.items()
        if k in MACHINE_KEYS or (k.startswith("accelerators.") and k.endswith(".name") and k.count(".") == 2)
    )


def build_number(run: Run) -> int | None:
    software = run.manifest.model_dump(by_alias=True).get("software")
    value = software.get("build_number") if isinstance(software, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class _Entry:
    run: Run
    mean: float
    low: float | None
    high: float | None
    n: int
    own: float


def _entry(run: Run, summary: RunSummary, metric: str, at: tuple[str, ...]) -> _Entry | None:
    found = [m for m in summary.at(metric) if m.at == at]
    if not found:
        return None
    figure = found[0]
    if figure.summary is None:
        return _Entry(run, figure.values[0], None, None, 0, 0.0) if figure.values else None
    s = figure.summary
    own = (s.sd / s.mean) ** 2 / s.n if s.sd is not None and s.mean > 0 and s.n > 1 else 0.0
    return _Entry(run, s.mean, s.ci_low, s.ci_high, s.n, own)


def _point(entries: list[_Entry], excluded: bool = False) -> Point:
    """Runs sharing an along-value as one point: the mean of their means."""
    runs = tuple(e.run.id for e in entries)
    if len(entries) == 1:
        e = entries[0]
        low, high = e.low, e.high
    else:
        low = high = None
    mean = sum(e.mean for e in entries) / len(entries)
    own = sum(e.own for e in entries) / len(entries) ** 2
    incomplete = any(e.run.meta.incomplete is not None for e in entries)
    first = entries[0].run
    return Point(
        runs=runs,
        date=str(first.meta.date),
        build=build_number(first),
        mean=mean,
        low=low,
        high=high,
        n=sum(e.n for e in entries),
        own=own,
        hollow=incomplete or all(e.n == 0 for e in entries),
        segmented=not incomplete and not excluded,
        excluded=excluded,
    )


def captured_at(run: Run) -> str:
    """When the run's manifest was captured, in UTC (ISO 8601); empty when not recorded."""
    at = run.manifest.captured.at if run.manifest.captured is not None else None
    if at is None:
        return ""
    return (at.astimezone(dt.UTC) if at.tzinfo is not None else at.replace(tzinfo=dt.UTC)).isoformat()


@dataclass(frozen=True)
class _Place:
    """Where a run sits along its series: its build number (None without one), date, capture
    time and the values of its along-keys (`key=value`), read once per run, not per series."""

    build: int | None
    date: str
    captured: str
    moved: tuple[str, ...]

    @classmethod
    def of(cls, run: Run, along_keys: Sequence[str]) -> _Place:
        moved = tuple(f"{k}={v}" for k, v in flat_environment(run).items() if is_along(k, along_keys))
        return cls(build_number(run), str(run.meta.date), captured_at(run), moved)


def _ordered(entries: list[_Entry], places: Mapping[str, _Place], apart: Collection[str] = ()) -> tuple[Point, ...]:
    """The points of one series in order; a run in `apart` (excluded by a history file) is a
    point of its own, drawn but never segmented."""
    by_build = all(places[e.run.id].build is not None for e in entries)

    def along(e: _Entry) -> tuple[object, ...]:
        place = places[e.run.id]
        return (place.build if by_build else 0, place.date)

    groups: dict[tuple[object, ...], list[_Entry]] = defaultdict(list)
    for e in sorted(entries, key=lambda e: (along(e), places[e.run.id].captured, e.run.id)):
        alone = (e.run.id,) if e.run.id in apart else ()
        groups[(*along(e), *places[e.run.id].moved, *alone)].append(e)
    return tuple(_point(group, group[0].run.id in apart) for group in groups.values())


def log_points(series: Series) -> tuple[list[int], list[float], list[float]]:
    """The points that enter the segmentation (indices), their log means and own variances;
    empty when any mean is not positive (a log scale cannot hold it)."""
    kept = [i for i, p in enumerate(series.points) if p.segmented]
    if any(series.points[i].mean <= 0 for i in kept):
        return [], [], []
    return kept, [math.log(series.points[i].mean) for i in kept], [series.points[i].own for i in kept]


def _splits(environments: list[tuple[Pairs, tuple[str, str]]]) -> list[tuple[Pairs, Pairs, Split]]:
    """Between environments of one would-be series, in the order their first runs came (date,
    run id): each key that differs, as (environment before, environment after, the split)."""
    found = []
    for (before, _), (after, (_, first)) in itertools.pairwise(environments):
        old, new = dict(before), dict(after)
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                split = Split(key, old.get(key, "not recorded"), new.get(key, "not recorded"), first)
                found.append((before, after, split))
    return found


def _apart_ids(apart: Apart | None, key: tuple[str, str, Pairs, Pairs], entries: list[_Entry]) -> set[str]:
    benchmark, metric, condition, _ = key
    return {e.run.id for e in entries if apart is not None and apart(benchmark, metric, condition, e.run.id)}


Apart = Callable[[str, str, Pairs, str], bool]  # (benchmark, metric, condition, run id): excluded there


# What build_series reads of one run: where it sits along its series, its environment less the
# along-keys, and its entries, each with its series' (benchmark, metric, condition) and the
# metric's better direction.
RunRows = tuple[_Place, Pairs, tuple[tuple[tuple[str, str, Pairs], _Entry, str | None], ...]]
# run id -> (its digest, the along-keys, the summary read, what was read): `serve` keeps it across
# rebuilds, so a save reads again only the runs it changed
KnownRows = MutableMapping[str, tuple[str, tuple[str, ...], RunSummary, RunRows]]


def _rows(run: Run, summary: RunSummary, along: Sequence[str]) -> RunRows:
    flat = flat_environment(run)
    moved = tuple(f"{k}={v}" for k, v in flat.items() if is_along(k, along))
    place = _Place(build_number(run), str(run.meta.date), captured_at(run), moved)
    environment = tuple((k, v) for k, v in flat.items() if not is_along(k, along))
    found = []
    for at in run.results.condition_values():
        condition = tuple(zip(run.results.conditions, at, strict=True))
        for metric, spec in run.meta.metrics.items():
            entry = _entry(run, summary, metric, at)
            if entry is not None:
                found.append(((run.meta.benchmark, metric, condition), entry, spec.better))
    return place, environment, tuple(found)


def build_series(
    runs: Iterable[Run],
    summaries: Mapping[str, RunSummary],
    *,
    along: Sequence[str] = ALONG,
    apart: Apart | None = None,
    known: KnownRows | None = None,
) -> list[Series]:
    """Every series of the publication, however short, in a stable order. `apart` says which
    runs a history file excludes from which series. `known` (the build cache's, under `serve`)
    keeps what was read of each run, by its digest, the along-keys and its summary (the very
    object, which the build cache keeps while the run's digest and the confidence level hold)."""
    grouped: dict[tuple[str, str, Pairs, Pairs], list[_Entry]] = defaultdict(list)
    better: dict[str, str | None] = {}
    places: dict[str, _Place] = {}
    wanted = tuple(along)
    ordered = sorted(runs, key=lambda r: (str(r.meta.date), r.id))
    for run in ordered:
        summary = summaries[run.id]
        held = known.get(run.id) if known is not None else None
        if held is not None and held[0] == run.digest and held[1] == wanted and held[2] is summary:
            rows = held[3]
        else:
            rows = _rows(run, summary, along)
            if known is not None:
                known[run.id] = (run.digest, wanted, summary, rows)
        places[run.id], environment, found = rows
        for (benchmark, metric, condition), entry, direction in found:
            grouped[(benchmark, metric, condition, environment)].append(entry)
            better[metric] = direction
    if known is not None:
        for gone in set(known) - {run.id for run in ordered}:
            del known[gone]
    would_be: dict[tuple[str, str, Pairs, Pairs], list[tuple[Pairs, tuple[str, str]]]] = defaultdict(list)
    for (benchmark, metric, condition, environment), entries in grouped.items():
        first = min((str(e.run.meta.date), e.run.id) for e in entries)
        would_be[(benchmark, metric, condition, machine_of(dict(environment)))].append((environment, first))
    splits: dict[tuple[str, str, Pairs, Pairs], list[Split]] = defaultdict(list)
    for (benchmark, metric, condition, _), environments in would_be.items():
        for before, after, split in _splits(sorted(environments, key=lambda e: e[1])):
            splits[(benchmark, metric, condition, before)].append(split)
            splits[(benchmark, metric, condition, after)].append(split)
    return [
        Series(
            benchmark,
            metric,
            condition,
            environment,
            better[metric],
            _ordered(entries, places, _apart_ids(apart, key, entries)),
            tuple(splits[key]),
        )
        for key, entries in sorted(grouped.items())
        for benchmark, metric, condition, environment in [key]
    ]
