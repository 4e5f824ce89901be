"""Statistics as pure functions over sequences of per-trial values.

The trial is the unit of replication: every function here takes one value per
trial, never per request. Each function raises `ValueError` on empty input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

CONFIDENCE = 0.95
CV_WARN = 0.10  # pyperf warns above 10% spread
OUTLIER_Z = 3.5  # Iglewicz and Hoaglin's cut-off for modified z-scores
FIRST_TRIAL_WORSE = 0.10
Values = Sequence[float] | np.ndarray


@functools.lru_cache(maxsize=4096)
def t_quantile(confidence: float, df: float) -> float:
    """Two-sided Student t critical value (cached: per-run summaries repeat the same few df)."""
    return float(sps.t.ppf(0.5 + confidence / 2, df))


def _array(values: Values, what: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError(f"no {what}: need at least one trial")
    return arr


@dataclass(frozen=True)
class Summary:
    """Per-trial summary of one metric at one condition.

    `sd`, `cv`, `ci_low` and `ci_high` are None with fewer than two trials.
    """

    n: int
    mean: float
    median: float
    sd: float | None
    cv: float | None  # sd / |mean|; None when mean is 0
    min: float
    max: float
    ci_low: float | None  # Student t interval of the mean
    ci_high: float | None


def t_interval(values: Values, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student t confidence interval of the mean (needs n >= 2)."""
    arr = _array(values)
    if arr.size < 2:
        raise ValueError("a confidence interval needs at least two trials")
    sem = float(np.std(arr, ddof=1)) / math.sqrt(arr.size)
    half = float(t_quantile(confidence, arr.size - 1)) * sem
    mean = float(np.mean(arr))
    return mean - half, mean + half


def summarize(values: Values, confidence: float = CONFIDENCE) -> Summary:
    """n, mean, median, sample standard deviation, CV, range and t interval."""
    arr = _array(values)
    mean = float(np.mean(arr))
    sd = float(np.std(arr, ddof=1)) if arr.size > 1 else None
    cv = sd / abs(mean) if sd is not None and mean != 0 else None
    low, high = t_interval(arr, confidence) if arr.size > 1 else (None, None)
    return Summary(int(arr.size), mean, float(np.median(arr)), sd, cv, float(arr.min()), float(arr.max()), low, high)


def modified_zscores(values: Values) -> list[float]:
    """Iglewicz-Hoaglin modified z-scores: 0.6745 (x - median) / MAD.

    When the MAD is zero (more than half the trials identical), the mean
    absolute deviation scaled by 1.253314 stands in for it; when that is zero
    too, every value equal to the median scores 0 and any other scores inf.
    """
    arr = _array(values)
    median = float(np.median(arr))
    dev = arr - median
    mad = float(np.median(np.abs(dev)))
    if mad > 0:
        return [float(z) for z in 0.6745 * dev / mad]
    mean_ad = float(np.mean(np.abs(dev)))
    if mean_ad > 0:
        return [float(z) for z in dev / (1.253314 * mean_ad)]
    return [0.0 if d == 0 else math.copysign(math.inf, d) for d in dev]


def wilson(successes: float, trials: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a proportion (scipy's binomtest)."""
    k, n = round(successes), round(trials)
    if n <= 0:
        raise ValueError("a Wilson interval needs a positive number of attempts")
    if not 0 <= k <= n:
        raise ValueError(f"successes {k} must lie between 0 and the attempts {n}")
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class RateSummary:
    """A rate such as draft acceptance: per-trial rates and the pooled proportion."""

    per_trial: tuple[float, ...]
    successes: float
    attempts: float
    pooled: float | None  # None when nothing was attempted
    wilson_low: float | None
    wilson_high: float | None


def summarize_rate(numerators: Values, denominators: Values, confidence: float = CONFIDENCE) -> RateSummary:
    """Per-trial rates (a trial with no attempts has none) and the pooled Wilson interval."""
    num, den = _array(numerators, "numerators"), _array(denominators, "denominators")
    if num.shape != den.shape:
        raise ValueError("numerators and denominators differ in length")
    per_trial = tuple(float(a / b) for a, b in zip(num, den, strict=True) if b > 0)
    k, n = float(num.sum()), float(den.sum())
    if n <= 0:
        return RateSummary(per_trial, k, n, None, None, None)
    low, high = wilson(k, n, confidence)
    return RateSummary(per_trial, k, n, k / n, low, high)


def warnings(values: Values, better: str | None) -> list[str]:
    """Warnings about one metric's trials, each with its remedy (pyperf/hyperfine style)."""
    arr = _array(values)
    out = []
    summary = summarize(arr)
    if summary.cv is not None and summary.cv > CV_WARN:
        out.append(
            f"CV is {summary.cv:.1%}, above {CV_WARN:.0%}: the trials disagree. Run more "
            "trials, pin clocks and close other programs, or report the spread as it is."
        )
    if arr.size >= 3:
        for trial, z in enumerate(modified_zscores(arr), start=1):
            if abs(z) > OUTLIER_Z:
                shown = "inf" if math.isinf(z) else f"{z:.1f}"
                out.append(
                    f"Trial {trial} is an outlier (modified z-score {shown}): look for "
                    "interference during that trial (other load, thermal throttling) "
                    "and re-run rather than delete it."
                )
    if arr.size >= 3 and better in ("higher", "lower"):
        rest = float(np.median(arr[1:]))
        first = float(arr[0])
        worse = (rest - first) if better == "higher" else (first - rest)
        if rest != 0 and worse / abs(rest) > FIRST_TRIAL_WORSE:
            out.append(
                f"Trial 1 is {worse / abs(rest):.0%} worse than the median of the others: "
                "caches or compilation were probably still warming up. Add warmup "
                "trials (warmup_trials) before measuring."
            )
    return out


@dataclass(frozen=True)
class Ratio:
    """Ratio of geometric means candidate/baseline with a Welch t interval on the log scale."""

    ratio: float
    low: float
    high: float
    df: float  # Welch-Satterthwaite degrees of freedom (inf when both sides are constant)
    sd_log: float  # pooled standard deviation of the per-trial log values


def ratio_interval(baseline: Values, candidate: Values, confidence: float = CONFIDENCE) -> Ratio:
    """Welch's t interval for mean(log c) - mean(log b), exponentiated.

    Every value must be positive; each side needs at least two trials.
    """
    b, c = _array(baseline, "baseline trials"), _array(candidate, "candidate trials")
    if b.size < 2 or c.size < 2:
        raise ValueError("a ratio interval needs at least two trials on each side")
    if (b <= 0).any() or (c <= 0).any():
        raise ValueError("a ratio of geometric means needs positive values")
    lb, lc = np.log(b), np.log(c)
    vb, vc = float(np.var(lb, ddof=1)) / b.size, float(np.var(lc, ddof=1)) / c.size
    diff = float(lc.mean() - lb.mean())
    se = math.sqrt(vb + vc)
    pooled = math.sqrt(((b.size - 1) * vb * b.size + (c.size - 1) * vc * c.size) / (b.size + c.size - 2))
    if se == 0:
        return Ratio(math.exp(diff), math.exp(diff), math.exp(diff), math.inf, 0.0)
    df = (vb + vc) ** 2 / (vb**2 / (b.size - 1) + vc**2 / (c.size - 1))
    half = float(t_quantile(confidence, df)) * se
    return Ratio(math.exp(diff), math.exp(diff - half), math.exp(diff + half), df, pooled)


def trials_needed(sd_log: float, effect: float, confidence: float = CONFIDENCE, power: float = 0.8) -> int:
    """Trials per side for a two-sided Welch-style t test to detect a ratio of 1 + effect
    with the given power (noncentral t, equal n and variances)."""
    if effect <= 0:
        raise ValueError("the effect to detect must be positive")
    delta = math.log1p(effect)
    if sd_log == 0:
        return 2

    def achieved(n: int) -> float:
        df = 2 * n - 2
        crit = t_quantile(confidence, df)
        ncp = delta / (sd_log * math.sqrt(2 / n))
        return float(1 - sps.nct.cdf(crit, df, ncp) + sps.nct.cdf(-crit, df, ncp))

    low, high = 2, 2
    while achieved(high) < power:
        low, high = high, high * 2
        if high > 1_000_000:
            return high
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if achieved(mid) < power else (low, mid)
    return high


def mann_whitney(baseline: Values, candidate: Values) -> float:
    """Two-sided Mann-Whitney U p-value (a cross-check, never the verdict)."""
    b, c = _array(baseline, "baseline trials"), _array(candidate, "candidate trials")
    return float(sps.mannwhitneyu(c, b, alternative="two-sided").pvalue)
