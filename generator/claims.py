"""Evaluate claims: per-trial values at the claimed condition, the ratio with its
interval, the verdict, unmatched conditions, and the correction chains.

Pure: takes a validated ledger, returns frozen records; nothing here renders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import stats
from .load import Ledger, Report, Run
from .model import Claim, Claimed, flatten, parse_claimed
from .summaries import condition_label

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
    key: str
    baseline: str
    candidate: str


@dataclass(frozen=True)
class Evaluation:
    claim: Claim
    report: Report
    verdict: str
    reason: str  # the verdict in plain words
    unit: str | None = None
    baseline: Side | None = None
    candidate: Side | None = None
    figure: Side | None = None  # single-figure claims
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    noise: float | None = None
    min_effect: float = 0.01
    direction: int = 0
    claimed: Claimed | None = None
    trials_needed: int | None = None
    mann_whitney_p: float | None = None
    confounds: tuple[Confound, ...] = ()
    corrected_by: tuple[str, ...] = field(default=())
    receipts: tuple[tuple[str, str], ...] = ()  # (run id, unverified | verified | dual-verified | stale)

    @property
    def flags(self) -> list[str]:
        out = []
        if self.confounds:
            out.append("unmatched conditions")
        if self.corrected_by:
            out.append("corrected")
        if self.verdict == "no trial data":
            out.append("no trial data")
        states = {state for _, state in self.receipts}
        if "stale" in states:
            out.append("stale run")
        if "unverified" in states:
            out.append("unverified run")
        return out


def _shown(value: Any) -> str:
    return MISSING if value is MISSING else str(value)


def environment(run: Run) -> dict[str, Any]:
    """The run's manifest and setup as dotted keys, as compared between runs."""
    manifest = run.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
    manifest.pop("schema", None)
    manifest.pop("captured", None)
    out = flatten(manifest) if manifest else {}
    out.update(flatten(run.meta.setup, "setup") if run.meta.setup else {})
    out["warmup_trials"] = run.meta.warmup_trials
    return out


def confounds(baseline: Run, candidate: Run, varies: list[str]) -> tuple[Confound, ...]:
    """Every dotted key that differs between the runs and is not one the claim varies."""
    b, c = environment(baseline), environment(candidate)

    def varied(key: str) -> bool:
        return any(key == v or key.startswith(v + ".") for v in varies)

    out = []
    for key in sorted(set(b) | set(c)):
        left, right = b.get(key, MISSING), c.get(key, MISSING)
        if left != right and not varied(key):
            out.append(Confound(key, _shown(left), _shown(right)))
    return tuple(out)


def side(run: Run, metric: str, at: Mapping[str, Any]) -> Side:
    """The per-trial values of a metric, or the per-trial rates of a rate, at one condition."""
    (values_at,) = run.results.matching(dict(at))
    rows = run.results.select(values_at)
    label = condition_label(run.results.conditions, values_at)
    if metric in run.meta.rates:
        rate = run.meta.rates[metric]
        num = [r.values[rate.numerator] for r in rows]
        den = [r.values[rate.denominator] for r in rows]
        pooled = stats.summarize_rate(num, den) if not run.reported else None
        kept = [(r.trial, n / d) for r, n, d in zip(rows, num, den, strict=True) if d > 0]
        values = tuple(v for _, v in kept)
        summary = stats.summarize(values) if values and not run.reported else None
        return Side(run.id, label, values, tuple(t for t, _ in kept), run.reported, summary, pooled)
    kept_rows = [r for r in rows if metric in r.values]
    values = tuple(r.values[metric] for r in kept_rows)
    summary = stats.summarize(values) if values and not run.reported else None
    return Side(run.id, label, values, tuple(r.trial for r in kept_rows), run.reported, summary)


def direction_of(run: Run, metric: str, claimed: Claimed | None) -> int:
    if claimed is not None and claimed.direction:
        return claimed.direction
    if metric in run.meta.rates:
        better: str | None = run.meta.rates[metric].better
    else:
        better = run.meta.metrics[metric].better
    return {"higher": 1, "lower": -1}.get(better or "", 0)


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


def compare(
    baseline: Run,
    candidate: Run,
    metric: str,
    at: Mapping[str, Any],
    varies: list[str],
    settings: Settings,
    claimed: Claimed | None = None,
) -> dict[str, Any]:
    """The comparison behind a claim (and `benchledger compare`), as evaluation fields."""
    b, c = side(baseline, metric, at), side(candidate, metric, at)
    direction = direction_of(candidate, metric, claimed)
    out: dict[str, Any] = {
        "baseline": b,
        "candidate": c,
        "direction": direction,
        "min_effect": settings.min_effect,
        "confounds": confounds(baseline, candidate, varies),
        "unit": _unit(candidate, metric),
    }
    if b.reported or c.reported or b.n < 2 or c.n < 2:
        if b.values and c.values and b.values[0] > 0:
            out["ratio"] = (stats.summarize(c.values).mean) / stats.summarize(b.values).mean
        return out | {"verdict": "no trial data", "reason": _no_data_reason(b, c)}
    try:
        r = stats.ratio_interval(b.values, c.values, settings.confidence)
    except ValueError as err:
        return out | {"verdict": "no trial data", "reason": f"No verdict: {err}."}
    cvs = [s.summary.cv for s in (b, c) if s.summary is not None and s.summary.cv is not None]
    noise = settings.noise if settings.noise is not None else max(cvs, default=0.0)
    verdict = stats.verdict(r.low, r.high, direction, settings.min_effect, noise)
    out |= {"ratio": r.ratio, "ci_low": r.low, "ci_high": r.high, "noise": noise, "verdict": verdict}
    if verdict == "inconclusive" and noise > 0:
        out["trials_needed"] = stats.trials_needed(r.sd_log, noise, settings.confidence)
    if b.n >= 10 and c.n >= 10:
        out["mann_whitney_p"] = stats.mann_whitney(b.values, c.values)
    out["reason"] = _reason(verdict, direction, r, noise, settings, out.get("trials_needed"))
    return out


def _unit(run: Run, metric: str) -> str | None:
    return run.meta.metrics[metric].unit if metric in run.meta.metrics else None


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"


def _reason(verdict: str, direction: int, r: stats.Ratio, noise: float, s: Settings, needed: int | None) -> str:
    interval = f"the {s.confidence:.0%} interval of the ratio runs from {_pct(r.low)} to {_pct(r.high)}"
    way = "an increase" if direction > 0 else "a decrease"
    if verdict == "supported":
        return f"Supported: {interval}, entirely beyond the {s.min_effect:.0%} smallest change worth calling, as {way}."
    if verdict == "contradicted":
        return f"Contradicted: {interval}, entirely beyond {s.min_effect:.0%} in the direction opposite to the claim."
    if verdict == "within noise":
        return f"Within noise: {interval}, entirely inside the ±{noise:.1%} run-to-run noise band."
    more = f" About {needed} trials per side would resolve a change of ±{noise:.1%}." if needed else ""
    if not direction:
        return f"Inconclusive: the claim gives no direction to test, and {interval}.{more}"
    return f"Inconclusive: {interval}, which is too wide to decide.{more}"


def corrections(ledger: Ledger) -> dict[str, tuple[str, ...]]:
    """For each claim id, the ids of the claims that correct it directly."""
    out: dict[str, list[str]] = {}
    for _, claim in ledger.claims:
        if claim.corrects is not None:
            out.setdefault(claim.corrects, []).append(claim.id)
    return {k: tuple(v) for k, v in out.items()}


def evaluate(
    report: Report,
    claim: Claim,
    ledger: Ledger,
    settings: Settings,
    states: Mapping[str, str] | None = None,
    fixes: Mapping[str, tuple[str, ...]] | None = None,
) -> Evaluation:
    """The verdict and everything shown beside it, for one claim. `states` holds each run's
    receipt state (unverified when absent); `fixes` is `corrections(ledger)`, when known."""
    claimed = parse_claimed(claim.claimed) if claim.claimed else None
    corrected = (fixes if fixes is not None else corrections(ledger)).get(claim.id, ())
    runs = [r for r in (claim.baseline, claim.candidate, claim.run) if r is not None]
    receipts = tuple((r, (states or {}).get(r, "unverified")) for r in runs)
    common: dict[str, Any] = {
        "claim": claim,
        "report": report,
        "claimed": claimed,
        "corrected_by": corrected,
        "receipts": receipts,
    }
    if claim.kind == "statement":
        reason = (
            "No trial data: a statement published as prose, without figures. Committing the runs "
            "behind it (several trials per side) would let the ledger evaluate it."
        )
        return Evaluation(**common, verdict="no trial data", reason=reason, min_effect=settings.min_effect)
    if claim.kind == "figure":
        assert claim.run is not None and claim.metric is not None
        run = ledger.runs[claim.run]
        fig = side(run, claim.metric, claim.at)
        reason = (
            "No trial data: a single figure copied from a publication that reported no trials."
            if fig.reported
            else "A single figure: its trials and interval are shown; it is compared with nothing."
        )
        verdict = "no trial data" if fig.reported or fig.n < 2 else "within noise"
        if verdict != "no trial data" and fig.summary and fig.summary.ci_low is not None:
            inside = fig.summary.ci_low <= (claim.value or math.nan) <= (fig.summary.ci_high or math.nan)
            verdict = "supported" if inside else "contradicted"
            reason = (
                f"The stated figure {'lies inside' if inside else 'lies outside'} the "
                f"{settings.confidence:.0%} interval of the mean of {fig.n} trials."
            )
        return Evaluation(
            **common,
            verdict=verdict,
            reason=reason,
            figure=fig,
            unit=_unit(run, claim.metric),
            min_effect=settings.min_effect,
        )
    assert claim.baseline and claim.candidate and claim.metric
    fields = compare(
        ledger.runs[claim.baseline],
        ledger.runs[claim.candidate],
        claim.metric,
        claim.at,
        claim.varies,
        settings,
        claimed,
    )
    return Evaluation(**common, **fields)


def evaluate_all(ledger: Ledger, settings: Settings, states: Mapping[str, str] | None = None) -> dict[str, Evaluation]:
    fixes = corrections(ledger)
    return {claim.id: evaluate(report, claim, ledger, settings, states, fixes) for report, claim in ledger.claims}


def chain(claim_id: str, ledger: Ledger) -> list[str]:
    """The claim's whole correction chain: the original first, then corrections by date."""
    by_id = {c.id: c for _, c in ledger.claims}
    root = claim_id
    while by_id[root].corrects is not None and by_id[root].corrects in by_id:
        root = by_id[root].corrects  # type: ignore[assignment]
    fixes = corrections(ledger)
    out, todo = [], [root]
    while todo:
        current = todo.pop(0)
        if current in out:
            break
        out.append(current)
        todo.extend(sorted(fixes.get(current, ()), key=lambda i: (str(by_id[i].date), i)))
    return out
