"""Compare one metric of two runs: at each claimed condition, the per-trial values of each
side, the ratio of geometric means with its intervals, and the verdict; over all the
claimed conditions, the claim's verdict; and the unmatched conditions.

Pure: takes loaded runs, returns frozen records; nothing here renders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..format.claimed import Claimed, Direction
from ..format.keys import as_yaml
from ..ledger.records import Row, Run
from . import rates, ratios, stats, wording
from .power import MOST, Settling, comparison_settling
from .records import ClaimComparison, Comparison, Confound, Measured, Question, Settings, Side
from .summaries import label_of, rate_trials
from .verdicts import Judgement, Verdict, band_of, combine, judge, judge_equivalence, tost_level

MISSING = "(absent)"
__all__ = [
    "ClaimComparison",
    "Comparison",
    "Confound",
    "Measured",
    "Question",
    "Settings",
    "Side",
    "compare",
    "confounds",
    "side",
]


def environment(run: Run) -> dict[str, object]:
    """The run's manifest and setup as dotted keys, as compared between runs."""
    return run.environment()


def confounds(baseline: Run, candidate: Run, varies: Sequence[str]) -> tuple[Confound, ...]:
    """Every dotted key that differs between the runs and is not one the claim varies."""
    b, c = environment(baseline), environment(candidate)
    out = []
    for key in compared_keys(baseline, candidate, varies):
        left, right = b.get(key, MISSING), c.get(key, MISSING)
        if left != right:
            out.append(Confound(key, as_yaml(left), as_yaml(right)))
    return tuple(out)


def compared_keys(baseline: Run, candidate: Run, varies: Sequence[str]) -> tuple[str, ...]:
    """The dotted keys either run records that the claim does not vary: all a check for
    unmatched conditions can see (a run with a thin manifest leaves little to compare)."""

    def varied(key: str) -> bool:
        return any(key == v or key.startswith(v + ".") for v in varies)

    return tuple(k for k in sorted(set(environment(baseline)) | set(environment(candidate))) if not varied(k))


# What FORMAT.md's manifest recommends recording, by section, and run.yaml's warmup_trials: a
# comparison lists those neither side records as "not recorded on either side" (never matched).
RECOMMENDED: tuple[str, ...] = ("host", "accelerators", "software", "engine", "kernels", "model", "warmup_trials")


def unrecorded(baseline: Run, candidate: Run, varies: Sequence[str]) -> tuple[str, ...]:
    """The recommended sections (and warmup_trials) of which neither run records any key, and
    that the claim does not vary: what the unmatched-conditions check could not see."""
    keys = set(environment(baseline)) | set(environment(candidate))

    def seen(section: str) -> bool:
        return any(k == section or k.startswith(section + ".") for k in keys)

    def varied(section: str) -> bool:
        return any(v == section or v.startswith(section + ".") for v in varies)

    return tuple(s for s in RECOMMENDED if not seen(s) and not varied(s))


def side(
    run: Run, metric: str, at: Mapping[str, object], confidence: float = stats.CONFIDENCE, restore: bool = False
) -> Side:
    """The per-trial values of a metric, or the per-trial rates of a rate, at one condition.
    Excluded trials are left out (and listed), unless `restore` puts them back."""
    (values_at,) = run.results.matching(at)
    rows = run.results.select(values_at, excluded=restore)
    left_out = () if restore else tuple(_excluded(run.results.excluded_at(values_at), metric))
    label = label_of(run, values_at)
    rate: rates.RateSummary | None = None
    published: tuple[float, int] | None = None
    if metric in run.meta.rates:
        trials, rate = rate_trials(rows, run.meta.rates[metric], confidence)
        values = rate.per_trial
    else:
        kept = [r for r in rows if metric in r.values]
        values, trials = tuple(r.values[metric] for r in kept), tuple(r.trial for r in kept)
        published = kept[0].spread.get(metric) if run.reported and len(kept) == 1 else None
    return Side(
        run=run.id,
        label=label,
        values=values,
        trials=trials,
        reported=run.reported,
        summary=stats.summarize(values, confidence) if values and not run.reported else None,
        published=published,
        rate=None if run.reported else rate,
        counted=(run.meta.rates[metric].numerator, run.meta.rates[metric].denominator)
        if metric in run.meta.rates
        else None,
        excluded=left_out,
        repetitions=run.meta.trial_unit == "repetition",
        is_rate=metric in run.meta.rates,
    )


def _excluded(rows: Sequence[Row], metric: str) -> list[tuple[int | None, float, str]]:
    return [(r.trial, r.values[metric], r.excluded or "") for r in rows if metric in r.values]


BETTER: dict[str, Direction] = {"higher": 1, "lower": -1}


def direction_of(run: Run, metric: str, claimed: Claimed | None) -> Direction:
    """+1 when the claim says higher, -1 lower: the claimed sign, else the metric's `better`."""
    if claimed is not None and claimed.direction:
        return claimed.direction
    better = run.meta.rates[metric].better if metric in run.meta.rates else run.meta.metrics[metric].better
    return BETTER.get(better or "", 0)


def unit_of(run: Run, metric: str) -> str | None:
    return run.meta.metrics[metric].unit if metric in run.meta.metrics else None


def compare(
    baseline: Run,
    candidate: Run,
    metric: str,
    conditions: Sequence[Mapping[str, object]],
    *,
    varies: Sequence[str],
    settings: Settings,
    claimed: Claimed | None = None,
    own: tuple[Mapping[str, object], Mapping[str, object]] = ({}, {}),
) -> ClaimComparison:
    """The comparison behind a claim (and `benchledger compare`), over one or more conditions.

    With k conditions every interval is a Bonferroni simultaneous interval (each at level
    1 - alpha / k), so the claim's family-wise error stays at alpha. `own` adds each side's
    own condition (a claim inside one run: baseline at command=A, candidate at command=B)."""
    direction = direction_of(candidate, metric, claimed)
    q = Question(
        settings=settings,
        level=1 - (1 - settings.confidence) / max(1, len(conditions)),
        direction=direction,
        claimed=claimed,
        claimed_ratio=claimed.ratio(direction) if claimed else None,
    )
    judged = tuple(_condition(baseline, candidate, metric, at, q, own) for at in conditions)
    verdict = combine([c.verdict for c in judged])
    return ClaimComparison(
        metric=metric,
        unit=unit_of(candidate, metric),
        direction=direction,
        claimed=claimed,
        claimed_ratio=q.claimed_ratio,
        margin=q.margin if q.equivalence else None,
        min_effect=settings.min_effect,
        confounds=confounds(baseline, candidate, varies),
        compared=compared_keys(baseline, candidate, varies),
        unrecorded=unrecorded(baseline, candidate, varies),
        conditions=judged,
        verdict=verdict,
        reason=_claim_reason(judged, verdict),
    )


def _condition(
    baseline: Run,
    candidate: Run,
    metric: str,
    at: Mapping[str, object],
    q: Question,
    own: tuple[Mapping[str, object], Mapping[str, object]] = ({}, {}),
) -> Comparison:
    """One condition, with the verdict the excluded trials would give when there are any."""
    at_b, at_c = {**at, **own[0]}, {**at, **own[1]}
    b, c = side(baseline, metric, at_b, q.level), side(candidate, metric, at_c, q.level)
    found = _judged(b, c, dict(at), q)
    if not (b.excluded or c.excluded):
        return found
    rb, rc = side(baseline, metric, at_b, q.level, restore=True), side(candidate, metric, at_c, q.level, restore=True)
    restored = _judged(rb, rc, dict(at), q)
    return replace(found, restored=restored.verdict) if restored.verdict != found.verdict else found


def _judged(b: Side, c: Side, at: dict[str, object], q: Question) -> Comparison:
    """The condition's verdict: "no trial data" with its reason when no ratio can be computed,
    else the verdict rule on the measured ratio and its intervals."""
    ratio = _ratio(b, c)
    if isinstance(ratio, NoRatio):
        return Comparison(
            baseline=b,
            candidate=c,
            at=at,
            verdict="no trial data",
            reason=ratio.reason,
            confidence=q.level,
            point=_point(b, c),
        )
    verdict, measured = _measured(b, c, ratio, q)
    return Comparison(
        baseline=b,
        candidate=c,
        at=at,
        verdict=verdict,
        reason=wording.explain((b, c), verdict, measured, q),
        confidence=q.level,
        measured=measured,
    )


def _point(b: Side, c: Side) -> float | None:
    """The ratio of the two sides' mean figures, shown without an interval; None unless both are positive."""
    mean_b, mean_c = (sum(s.values) / len(s.values) if s.values else 0.0 for s in (b, c))
    return mean_c / mean_b if mean_b > 0 and mean_c > 0 else None


def _measured(b: Side, c: Side, ratio: ratios.Ratio, q: Question) -> tuple[Verdict, Measured]:
    """The verdict rule on the ratio's intervals, against the within-noise band."""
    cvs = [s.cv for s in (b, c) if s.cv is not None]
    settings = q.settings
    noise = settings.noise if settings.noise is not None else max(cvs, default=0.0)
    band = band_of(noise, settings.min_effect)
    ci, tost = ratio.bounds(q.level), ratio.bounds(tost_level(q.level))
    if q.equivalence:
        judgement = judge_equivalence(ci, tost, q.margin)
    else:
        judgement = judge(ci, tost, q.direction, q.claimed_ratio, settings.min_effect, band)
    settling = _settling(ratio, judgement, q, band, max(b.n, c.n))
    return judgement.verdict, Measured(
        ratio=ratio.ratio,
        ci_low=ci[0],
        ci_high=ci[1],
        tost_low=tost[0],
        tost_high=tost[1],
        noise=noise,
        band=band,
        source=ratio.source,
        understated=judgement.understated,
        trials_needed=settling.trials if settling else None,
        settles_as=settling.outcome if settling else None,
        unsettled=_unsettled(ratio, settling, q, band),
        mann_whitney_p=ratios.mann_whitney(b.values, c.values) if b.n >= 10 and c.n >= 10 and not b.reported else None,
    )


@dataclass(frozen=True)
class NoRatio:
    """Why a condition has no ratio: the reason its verdict is "no trial data"."""

    reason: str


def _ratio(b: Side, c: Side) -> ratios.Ratio | NoRatio:
    """The ratio from per-trial values, or from published summaries when a side has only those;
    the reason for "no trial data" when neither is possible."""
    if b.n < 2 or c.n < 2:
        return NoRatio(wording.no_data(b, c))
    try:
        if b.published is None and c.published is None:
            return ratios.ratio_interval(b.values, c.values)
        pb, pc = b.mean_sd_n, c.mean_sd_n
        if pb is None or pc is None:
            return NoRatio(wording.no_data(b, c))
        return ratios.ratio_from_summaries(pb, pc)
    except ValueError as err:
        return NoRatio(f"No verdict: {err}.")


def _settling(ratio: ratios.Ratio, judgement: Judgement, q: Question, band: float, present: int) -> Settling | None:
    """An inconclusive verdict: the trials per side that would decide it with 80% probability if
    the estimate and the spread stay as measured (never as many as there already are)."""
    if judgement.verdict != "inconclusive" or ratio.sd_log == 0:
        return None
    return comparison_settling(
        ratio.log_ratio,
        ratio.sd_log,
        present,
        q.level,
        direction=q.direction,
        claimed_ratio=q.claimed_ratio,
        min_effect=q.settings.min_effect,
        band=band,
        margin=q.margin if q.equivalence else None,
    )


def _unsettled(ratio: ratios.Ratio, settling: Settling | None, q: Question, band: float) -> str | None:
    """Why more trials will not settle an inconclusive verdict, as far as the search for a number
    of trials established it (none up to MOST per side decides it with 80% probability): the
    estimate lies on a bound, closer than the interval at MOST trials could resolve; or between no
    change and the smallest change worth calling, where a narrower interval decides nothing; or,
    failing both, only that no number searched would decide it."""
    if settling is None or settling.trials is not None:
        return None
    m = q.settings.min_effect
    if q.equivalence:
        edges = {1 + q.margin: "the equivalence margin", 1 - q.margin: "the equivalence margin"}
    else:
        edges = {1 + band: "the within-noise band", 1 - band: "the within-noise band"}
        if q.direction:
            edges |= {1 + m: "the smallest change worth calling", 1 - m: "the smallest change worth calling"}
            if q.claimed_ratio is not None:
                edges[q.claimed_ratio] = "the claimed effect"
        edges[1.0] = "no difference"  # "within noise" needs the interval to hold it
    edges = {e: why for e, why in edges.items() if e > 0}  # a band of 100% or more has no lower edge
    bound = min(edges, key=lambda e: abs(ratio.log_ratio - math.log(e)))
    reach = stats.t_quantile(q.level, 2 * MOST - 2) * ratio.sd_log * math.sqrt(2 / MOST)  # half-width at MOST
    if abs(ratio.log_ratio - math.log(bound)) <= reach:
        return wording.never_settles(ratio.ratio, bound, edges[bound], MOST, math.expm1(reach))
    inside = 1 - m <= ratio.ratio <= 1 + m if q.direction else True
    if not q.equivalence and inside:
        return wording.never_decided(ratio.ratio, m if q.direction else None)
    return wording.never_powered(ratio.ratio, MOST)


def _claim_reason(judged: Sequence[Comparison], verdict: Verdict) -> str:
    if len(judged) == 1:
        return judged[0].reason
    return wording.combined(judged, verdict)
