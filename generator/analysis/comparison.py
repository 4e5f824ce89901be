"""Compare one metric of two runs: at each claimed condition, the per-trial values of each
side, the ratio of geometric means with its intervals, and the verdict; over all the
claimed conditions, the claim's verdict; and the unmatched conditions.

Pure: takes loaded runs, returns frozen records; nothing here renders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..format.claimed import Claimed
from ..format.keys import as_yaml, flatten
from ..ledger.records import Row, Run
from . import stats, wording
from .records import ClaimComparison, Comparison, Confound, Settings, Side
from .summaries import label_of, rate_trials
from .verdicts import Judgement, Verdict, band_of, combine, judge, judge_equivalence, tost_level

MISSING = "(absent)"
__all__ = ["ClaimComparison", "Comparison", "Confound", "Settings", "Side", "compare", "confounds", "side"]


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
            out.append(Confound(key, as_yaml(left), as_yaml(right)))
    return tuple(out)


def side(
    run: Run, metric: str, at: Mapping[str, object], confidence: float = stats.CONFIDENCE, restore: bool = False
) -> Side:
    """The per-trial values of a metric, or the per-trial rates of a rate, at one condition.
    Excluded trials are left out (and listed), unless `restore` puts them back."""
    (values_at,) = run.results.matching(at)
    rows = run.results.select(values_at, excluded=restore)
    left_out = () if restore else tuple(_excluded(run.results.excluded_at(values_at), metric))
    label = label_of(run, values_at)
    repetitions = run.meta.trial_unit == "repetition"
    if metric in run.meta.rates:
        trials, pooled = rate_trials(rows, run.meta.rates[metric], confidence)
        values = pooled.per_trial
        summary = stats.summarize(values, confidence) if values and not run.reported else None
        pooled_or_none = None if run.reported else pooled
        return Side(
            run.id, label, values, trials, run.reported, summary, pooled_or_none, None, left_out, repetitions, True
        )
    kept = [r for r in rows if metric in r.values]
    values = tuple(r.values[metric] for r in kept)
    summary = stats.summarize(values, confidence) if values and not run.reported else None
    published = kept[0].spread.get(metric) if run.reported and len(kept) == 1 else None
    trials = tuple(r.trial for r in kept)
    return Side(run.id, label, values, trials, run.reported, summary, None, published, left_out, repetitions)


def _excluded(rows: Sequence[Row], metric: str) -> list[tuple[int | None, float, str]]:
    return [(r.trial, r.values[metric], r.excluded or "") for r in rows if metric in r.values]


def direction_of(run: Run, metric: str, claimed: Claimed | None) -> int:
    """+1 when the claim says higher, -1 lower: the claimed sign, else the metric's `better`."""
    if claimed is not None and claimed.direction:
        return claimed.direction
    better = run.meta.rates[metric].better if metric in run.meta.rates else run.meta.metrics[metric].better
    return {"higher": 1, "lower": -1}.get(better or "", 0)


def unit_of(run: Run, metric: str) -> str | None:
    return run.meta.metrics[metric].unit if metric in run.meta.metrics else None


@dataclass(frozen=True)
class Question:
    """What one comparison asks, the same at every condition of a claim."""

    settings: Settings
    level: float  # the interval level at each condition (Bonferroni over several)
    direction: int
    claimed: Claimed | None
    claimed_ratio: float | None

    @property
    def equivalence(self) -> bool:
        return self.claimed is not None and self.claimed.kind == "equivalence"


def compare(
    baseline: Run,
    candidate: Run,
    metric: str,
    conditions: Sequence[Mapping[str, object]],
    varies: Sequence[str],
    settings: Settings,
    claimed: Claimed | None = None,
) -> ClaimComparison:
    """The comparison behind a claim (and `benchledger compare`), over one or more conditions.

    With k conditions every interval is a Bonferroni simultaneous interval (each at level
    1 - alpha / k), so the claim's family-wise error stays at alpha."""
    direction = direction_of(candidate, metric, claimed)
    level = 1 - (1 - settings.confidence) / max(1, len(conditions))
    question = Question(settings, level, direction, claimed, claimed.ratio(direction) if claimed else None)
    judged = tuple(_condition(baseline, candidate, metric, at, question) for at in conditions)
    verdict = combine([c.verdict for c in judged])
    margin = None
    if question.equivalence and claimed is not None:
        bands = [c.band for c in judged if c.band is not None]
        margin = claimed.margin if claimed.margin is not None else max(bands, default=None)
    return ClaimComparison(
        metric,
        unit_of(candidate, metric),
        direction,
        claimed,
        question.claimed_ratio,
        margin,
        settings.min_effect,
        confounds(baseline, candidate, varies),
        judged,
        verdict,
        _claim_reason(judged, verdict),
    )


def _condition(baseline: Run, candidate: Run, metric: str, at: Mapping[str, object], q: Question) -> Comparison:
    """One condition, with the verdict the excluded trials would give when there are any."""
    b, c = side(baseline, metric, at, q.level), side(candidate, metric, at, q.level)
    found = _judged(b, c, dict(at), q)
    if not (b.excluded or c.excluded):
        return found
    rb, rc = side(baseline, metric, at, q.level, restore=True), side(candidate, metric, at, q.level, restore=True)
    restored = _judged(rb, rc, dict(at), q)
    return replace(found, restored=restored.verdict) if restored.verdict != found.verdict else found


def _judged(b: Side, c: Side, at: dict[str, object], q: Question) -> Comparison:
    base = Comparison(b, c, at, "no trial data", wording.no_data(b, c), q.level)
    ratio = _ratio(b, c)
    if isinstance(ratio, str):
        mean_b, mean_c = (sum(s.values) / len(s.values) if s.values else 0.0 for s in (b, c))
        return replace(base, ratio=mean_c / mean_b if mean_b > 0 and mean_c > 0 else None, reason=ratio)
    cvs = [s.cv for s in (b, c) if s.cv is not None]
    settings = q.settings
    noise = settings.noise if settings.noise is not None else max(cvs, default=0.0)
    band = band_of(noise, settings.min_effect)
    ci, tost = ratio.bounds(q.level), ratio.bounds(tost_level(q.level))
    if q.equivalence:
        margin = q.claimed.margin if q.claimed is not None and q.claimed.margin is not None else band
        judgement = judge_equivalence(ci, tost, margin)
    else:
        judgement = judge(ci, tost, q.direction, q.claimed_ratio, settings.min_effect, band)
    found = replace(
        base,
        verdict=judgement.verdict,
        ratio=ratio.ratio,
        ci_low=ci[0],
        ci_high=ci[1],
        tost_low=tost[0],
        tost_high=tost[1],
        noise=noise,
        band=band,
        understated=judgement.understated,
        trials_needed=_needed(ratio, judgement, q.level),
        mann_whitney_p=stats.mann_whitney(b.values, c.values) if b.n >= 10 and c.n >= 10 and not b.reported else None,
        source=ratio.source,
    )
    return replace(found, reason=wording.explain(found, q.direction, q.claimed, q.claimed_ratio, q.equivalence))


def _ratio(b: Side, c: Side) -> stats.Ratio | str:
    """The ratio from per-trial values, or from published summaries when a side has only those;
    a reason for "no trial data" when neither is possible."""
    if b.n < 2 or c.n < 2:
        return wording.no_data(b, c)
    try:
        if b.published is None and c.published is None:
            return stats.ratio_interval(b.values, c.values)
        pb, pc = b.mean_sd_n, c.mean_sd_n
        if pb is None or pc is None:
            return wording.no_data(b, c)
        return stats.ratio_from_summaries(pb, pc)
    except ValueError as err:
        return f"No verdict: {err}."


def _needed(ratio: stats.Ratio, judgement: Judgement, level: float) -> int | None:
    """Trials per side giving 80% power to clear the nearest bound the interval still straddles,
    if the spread and the estimate stay as measured."""
    if judgement.verdict != "inconclusive" or ratio.sd_log == 0 or not judgement.open_bounds:
        return None
    distance = min(abs(ratio.log_ratio - math.log(bound)) for bound in judgement.open_bounds)
    if distance == 0:
        return None
    return stats.trials_needed(ratio.sd_log, math.expm1(distance), level)


def _claim_reason(judged: Sequence[Comparison], verdict: Verdict) -> str:
    if len(judged) == 1:
        return judged[0].reason
    return wording.combined(judged, verdict)
