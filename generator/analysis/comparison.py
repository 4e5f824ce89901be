"""Compare one metric of two runs at one condition: the per-trial values of each side,
the ratio of geometric means with its interval, the verdict, and the unmatched conditions.

Pure: takes loaded runs, returns a frozen `Comparison`; nothing here renders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import fmean

from ..format.claimed import Claimed
from ..format.keys import flatten
from ..ledger.records import Run
from . import stats
from .summaries import label_of, rate_trials
from .verdicts import Verdict, verdict

MISSING = "(absent)"


@dataclass(frozen=True)
class Settings:
    """The verdict rule's parameters, published on the methods page."""

    confidence: float = stats.CONFIDENCE
    min_effect: float = 0.01
    noise: float | None = None  # None: the larger per-trial CV of the two sides


@dataclass(frozen=True)
class Side:
    """One run's trials at the claimed condition."""

    run: str
    label: str
    values: tuple[float, ...]  # per-trial values (per-trial rates for a rate)
    trials: tuple[int | None, ...]
    reported: bool
    summary: stats.Summary | None  # None for reported figures
    pooled: stats.RateSummary | None = None  # rates only

    @property
    def n(self) -> int:
        return 0 if self.reported else len(self.values)


@dataclass(frozen=True)
class Confound:
    """A manifest or setup key that differs between the two runs and is not varied on purpose."""

    key: str
    baseline: str
    candidate: str


@dataclass(frozen=True)
class Comparison:
    """Everything `benchledger compare` prints and a claim card shows about one comparison."""

    baseline: Side
    candidate: Side
    metric: str
    at: Mapping[str, object]
    unit: str | None
    direction: int  # +1: the claim says the candidate's ratio is above 1; -1 below; 0 none
    min_effect: float
    confounds: tuple[Confound, ...]
    verdict: Verdict
    reason: str  # the verdict in plain words
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    noise: float | None = None
    trials_needed: int | None = None
    mann_whitney_p: float | None = None


def environment(run: Run) -> dict[str, object]:
    """The run's manifest and setup as dotted keys, as compared between runs."""
    manifest = run.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
    manifest.pop("schema", None)
    manifest.pop("captured", None)
    out = flatten(manifest) if manifest else {}
    out.update(flatten(run.meta.setup, "setup") if run.meta.setup else {})
    out["warmup_trials"] = run.meta.warmup_trials
    return out


def confounds(baseline: Run, candidate: Run, varies: Sequence[str]) -> tuple[Confound, ...]:
    """Every dotted key that differs between the runs and is not one the claim varies."""
    b, c = environment(baseline), environment(candidate)

    def varied(key: str) -> bool:
        return any(key == v or key.startswith(v + ".") for v in varies)

    out = []
    for key in sorted(set(b) | set(c)):
        left, right = b.get(key, MISSING), c.get(key, MISSING)
        if left != right and not varied(key):
            out.append(Confound(key, str(left), str(right)))
    return tuple(out)


def side(run: Run, metric: str, at: Mapping[str, object], confidence: float = stats.CONFIDENCE) -> Side:
    """The per-trial values of a metric, or the per-trial rates of a rate, at one condition."""
    (values_at,) = run.results.matching(at)
    rows = run.results.select(values_at)
    label = label_of(run, values_at)
    if metric in run.meta.rates:
        trials, pooled = rate_trials(rows, run.meta.rates[metric], confidence)
        values = pooled.per_trial
        summary = stats.summarize(values, confidence) if values and not run.reported else None
        return Side(run.id, label, values, trials, run.reported, summary, None if run.reported else pooled)
    kept = [r for r in rows if metric in r.values]
    values = tuple(r.values[metric] for r in kept)
    summary = stats.summarize(values, confidence) if values and not run.reported else None
    return Side(run.id, label, values, tuple(r.trial for r in kept), run.reported, summary)


def direction_of(run: Run, metric: str, claimed: Claimed | None) -> int:
    """+1 when the claim says higher, -1 lower: the claimed sign, else the metric's `better`."""
    if claimed is not None and claimed.direction:
        return claimed.direction
    better = run.meta.rates[metric].better if metric in run.meta.rates else run.meta.metrics[metric].better
    return {"higher": 1, "lower": -1}.get(better or "", 0)


def unit_of(run: Run, metric: str) -> str | None:
    return run.meta.metrics[metric].unit if metric in run.meta.metrics else None


def compare(
    baseline: Run,
    candidate: Run,
    metric: str,
    at: Mapping[str, object],
    varies: Sequence[str],
    settings: Settings,
    claimed: Claimed | None = None,
) -> Comparison:
    """The comparison behind a claim (and `benchledger compare`)."""
    b, c = side(baseline, metric, at, settings.confidence), side(candidate, metric, at, settings.confidence)
    direction = direction_of(candidate, metric, claimed)
    base = Comparison(
        baseline=b,
        candidate=c,
        metric=metric,
        at=dict(at),
        unit=unit_of(candidate, metric),
        direction=direction,
        min_effect=settings.min_effect,
        confounds=confounds(baseline, candidate, varies),
        verdict="no trial data",
        reason=_no_data_reason(b, c),
    )
    if b.reported or c.reported or b.n < 2 or c.n < 2:
        if b.values and c.values and fmean(b.values) > 0:
            return replace(base, ratio=fmean(c.values) / fmean(b.values))
        return base
    try:
        r = stats.ratio_interval(b.values, c.values, settings.confidence)
    except ValueError as err:
        return replace(base, reason=f"No verdict: {err}.")
    cvs = [s.summary.cv for s in (b, c) if s.summary is not None and s.summary.cv is not None]
    noise = settings.noise if settings.noise is not None else max(cvs, default=0.0)
    found = verdict(r.low, r.high, direction, settings.min_effect, noise)
    needed = (
        stats.trials_needed(r.sd_log, noise, settings.confidence) if found == "inconclusive" and noise > 0 else None
    )
    return replace(
        base,
        verdict=found,
        reason=_reason(found, direction, r, noise, settings, needed),
        ratio=r.ratio,
        ci_low=r.low,
        ci_high=r.high,
        noise=noise,
        trials_needed=needed,
        mann_whitney_p=stats.mann_whitney(b.values, c.values) if b.n >= 10 and c.n >= 10 else None,
    )


def _no_data_reason(b: Side, c: Side) -> str:
    parts = []
    for name, s in (("baseline", b), ("candidate", c)):
        if s.reported:
            parts.append(f"the {name} ({s.run}) holds figures copied from a publication that reported no trials")
        elif s.n < 2:
            parts.append(f"the {name} ({s.run}) has {s.n} trial{'s' if s.n != 1 else ''} at {s.label}")
    return (
        "No trial data: "
        + "; ".join(parts)
        + ". A verdict needs at least two measured trials on each side; re-measure both "
        "configurations under matched conditions, several trials each, and commit the runs."
    )


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"


def _reason(found: Verdict, direction: int, r: stats.Ratio, noise: float, s: Settings, needed: int | None) -> str:
    interval = f"the {s.confidence:.0%} interval of the ratio runs from {_pct(r.low)} to {_pct(r.high)}"
    way = "an increase" if direction > 0 else "a decrease"
    if found == "supported":
        return f"Supported: {interval}, entirely beyond the {s.min_effect:.0%} smallest change worth calling, as {way}."
    if found == "contradicted":
        return f"Contradicted: {interval}, entirely beyond {s.min_effect:.0%} in the direction opposite to the claim."
    if found == "within noise":
        return f"Within noise: {interval}, entirely inside the ±{noise:.1%} run-to-run noise band."
    more = f" About {needed} trials per side would resolve a change of ±{noise:.1%}." if needed else ""
    if not direction:
        return f"Inconclusive: the claim gives no direction to test, and {interval}.{more}"
    return f"Inconclusive: {interval}, which is too wide to decide.{more}"
