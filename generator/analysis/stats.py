"""Statistics as pure functions over sequences of per-trial values.

The trial is the unit of replication: every function here takes one value per
trial, never per request. Each function raises `ValueError` on empty input.
This module summarizes one run's figures; a rate over trials is `rates.py`, and
the ratio of two sides `ratios.py`.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

from ..format.signed import signed

CONFIDENCE = 0.95
CV_WARN = 0.10  # pyperf warns above 10% spread
OUTLIER_Z = 3.5  # Iglewicz and Hoaglin's cut-off for modified z-scores
OUTLIER_MIN = 0.05  # ... and only for a trial at least 5% away from the median
FIRST_TRIAL_WORSE = 0.10
WARN_FROM_N = 5  # outlier and first-trial warnings need at least this many trials
MAX_OUTLIERS_LISTED = 5
Values = Sequence[float] | np.ndarray


@functools.lru_cache(maxsize=4096)
def t_quantile(confidence: float, df: float) -> float:
    """Two-sided Student t critical value (cached: per-run summaries repeat the same few df)."""
    return float(special.stdtrit(df, 0.5 + confidence / 2))  # the t quantile (scipy.stats' t.ppf)


def _floats(values: Values, what: str = "values") -> list[float]:
    """The values as Python floats. A run's few trials are summarized in plain Python: numpy's
    per-call overhead made summaries most of the cost of rendering a run's pages."""
    out = [float(v) for v in values]
    if not out:
        raise ValueError(f"no {what}: need at least one trial")
    return out


IDENTICAL = "exact: every trial identical"  # how every page and command says an interval has no width
IDENTICAL_SIDES = "exact: every trial identical on both sides"  # ... and a ratio's


def _identical(xs: Sequence[float]) -> bool:
    """Every value the same float: their mean is that value and their spread is 0, exactly
    (a sum rounds: the fmean of three 0.1 is 0.10000000000000002, and np.var of five equal
    logs is 1e-30)."""
    first = xs[0]
    return all(x == first for x in xs)


def _mean(xs: Sequence[float]) -> float:
    """The mean, from the correctly rounded sum (`statistics.fmean`); identical values give
    their own value exactly."""
    if _identical(xs):
        return xs[0]
    try:
        return statistics.fmean(xs)
    except OverflowError:  # the sum leaves the floats (values near 1e308): sum the shares
        return math.fsum(x / len(xs) for x in xs)


def _sd(xs: Sequence[float]) -> float:
    """The sample standard deviation (n - 1 in the denominator; needs n >= 2). Values beyond
    1e150 are scaled first, so their squares stay inside the floats. Identical values give 0 exactly."""
    if _identical(xs):
        return 0.0
    scale = max(abs(x) for x in xs)
    if scale > 1e150:
        return scale * _sd([x / scale for x in xs])
    mean = _mean(xs)
    return math.sqrt(math.fsum((x - mean) * (x - mean) for x in xs) / (len(xs) - 1))


def _array(values: Values, what: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError(f"no {what}: need at least one trial")
    return arr


IntervalKind = Literal["multiplicative", "t", "t, truncated at 0"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Summary:
    """Per-trial summary of one metric at one condition.

    `sd`, `cv`, `ci_low` and `ci_high` are None with fewer than two trials. The interval
    is around the mean and never leaves the metric's observed range of signs: see
    `mean_interval`.
    """

    n: int
    mean: float
    median: float
    sd: float | None
    cv: float | None  # sd / |mean|; None when mean is 0
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None
    interval: IntervalKind | None = None

    @property
    def constant(self) -> bool:
        """Every trial gave the same value: no run-to-run variation was measured."""
        return self.n > 1 and self.min == self.max


LOG_MAX = math.log(sys.float_info.max)  # 709.78: the largest x whose exp is a finite float


def exp(x: float) -> float:
    """math.exp kept inside the finite floats (extreme intervals saturate instead of overflowing).
    The bound is the largest float's log: at 708 an interval of trials near 1e308 ended below them.
    A saturated bound is past 1e300, so every page and JSON output writes it as "out of range"
    (`format.signed.in_range`)."""
    return math.exp(max(-LOG_MAX, min(LOG_MAX, x)))


def t_interval(values: Values, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student t confidence interval of the mean (needs n >= 2)."""
    xs = _floats(values)
    if len(xs) < 2:
        raise ValueError("a confidence interval needs at least two trials")
    mean = _mean(xs)
    if _identical(xs):
        return mean, mean
    half = t_quantile(confidence, len(xs) - 1) * _sd(xs) / math.sqrt(len(xs))
    return mean - half, mean + half


def mean_interval(values: Values, confidence: float = CONFIDENCE) -> tuple[float, float, IntervalKind]:
    """The interval shown beside a mean (needs n >= 2), kept inside the metric's range.

    All trials positive (throughput, latency): multiplicative, mean x exp(+-t s_log / sqrt(n))
    with s_log the SD of the log values, so the interval is never below zero and matches the
    log scale on which claims are judged. Some trial zero and none negative (counts such as
    errors): the Student t interval, truncated at 0. Otherwise the Student t interval.
    Identical trials: the value itself at both ends, exactly (no width to show).
    """
    xs = _floats(values)
    if len(xs) < 2:
        raise ValueError("a confidence interval needs at least two trials")
    mean = _mean(xs)
    if _identical(xs):
        kind: IntervalKind = "multiplicative" if mean > 0 else "t"
        return mean, mean, kind
    if all(x > 0 for x in xs):
        half = t_quantile(confidence, len(xs) - 1) * _sd([math.log(x) for x in xs]) / math.sqrt(len(xs))
        return exp(math.log(mean) - half), exp(math.log(mean) + half), "multiplicative"
    low, high = t_interval(xs, confidence)
    if all(x >= 0 for x in xs) and low < 0:
        return 0.0, high, "t, truncated at 0"
    return low, high, "t"


def summarize(values: Values, confidence: float = CONFIDENCE) -> Summary:
    """n, mean, median, sample standard deviation, CV, range and the interval of the mean.

    A run's page, its sweep, its comparisons and its claims summarize the same trials several
    times, so summaries are remembered by their exact values: equal floats other than zero are
    the same bits, so a trial set holding a zero (0.0 == -0.0) is summarized afresh. The last
    1,024 are kept (a run's are asked for together): a few MB, at most 80 MB at 10,000 trials each."""
    xs = tuple(_floats(values))
    return _summarize(xs, confidence) if 0.0 not in xs else _summarize.__wrapped__(xs, confidence)


@functools.lru_cache(maxsize=1024)
def _summarize(xs: tuple[float, ...], confidence: float) -> Summary:
    mean = _mean(xs)
    sd = _sd(xs) if len(xs) > 1 else None
    cv = sd / abs(mean) if sd is not None and mean != 0 else None
    low: float | None = None
    high: float | None = None
    kind: IntervalKind | None = None
    if len(xs) > 1:
        low, high, kind = mean_interval(xs, confidence)
    return Summary(
        n=len(xs),
        mean=mean,
        median=statistics.median(xs),
        sd=sd,
        cv=cv,
        min=min(xs),
        max=max(xs),
        ci_low=low,
        ci_high=high,
        interval=kind,
    )


def modified_zscores(values: Values) -> list[float]:
    """Iglewicz-Hoaglin modified z-scores: 0.6745 (x - median) / MAD.

    When the MAD is zero (more than half the trials identical), the mean
    absolute deviation scaled by 1.253314 stands in for it; when that is zero
    too, every value equal to the median scores 0 and any other scores inf.
    A deviation within floating-point rounding of the values (1e-12 of the
    largest) counts as zero: 0.01 and 0.010000000000000002 are the same trial.
    """
    xs = _floats(values)
    median = statistics.median(xs)
    rounding = 1e-12 * max(abs(x) for x in xs)
    dev = [0.0 if abs(x - median) <= rounding else x - median for x in xs]
    mad = statistics.median([abs(d) for d in dev])
    if mad > 0:
        return [0.6745 * d / mad for d in dev]
    mean_ad = _mean([abs(d) for d in dev])
    if mean_ad > 0:
        return [d / (1.253314 * mean_ad) for d in dev]
    return [0.0 if d == 0 else math.copysign(math.inf, d) for d in dev]


def warnings(values: Values, better: str | None) -> list[str]:
    """Warnings about one metric's trials, each with its remedy (pyperf/hyperfine style).

    High spread from n >= 2; outliers and a slow first trial only from n >= WARN_FROM_N,
    and only for deviations of at least OUTLIER_MIN (resp. FIRST_TRIAL_WORSE) of the median.
    """
    xs = _floats(values)
    out = []
    summary = summarize(xs)
    if summary.cv is not None and summary.cv > CV_WARN:
        out.append(
            f"CV is {summary.cv:.1%}, above {CV_WARN:.0%}: the trials disagree. Run more "
            "trials, pin clocks and close other programs, or report the spread as it is."
        )
    if len(xs) < WARN_FROM_N:
        return out
    median = statistics.median(xs)
    outliers = []
    for trial, (value, z) in enumerate(zip(xs, modified_zscores(xs), strict=True), start=1):
        deviation = (value - median) / abs(median) if median else math.inf
        if abs(z) > OUTLIER_Z and abs(deviation) >= OUTLIER_MIN:
            outliers.append(
                f"Trial {trial} lies {signed(deviation * 100)} from the median, an outlier: look for "
                "interference during that trial (other load, thermal throttling) and re-run, "
                "or exclude it with a reason (excluded: in run.yaml) rather than delete it."
            )
    out += outliers[:MAX_OUTLIERS_LISTED]
    if len(outliers) > MAX_OUTLIERS_LISTED:
        out.append(f"{len(outliers) - MAX_OUTLIERS_LISTED:,} more trials are outliers by the same rule.")
    if better in ("higher", "lower"):
        rest = statistics.median(xs[1:])
        first = xs[0]
        worse = (rest - first) if better == "higher" else (first - rest)
        if rest != 0 and worse / abs(rest) > FIRST_TRIAL_WORSE:
            out.append(
                f"Trial 1 is {worse / abs(rest):.0%} worse than the median of the others: "
                "caches or compilation were probably still warming up. Add warmup "
                "trials (warmup_trials) before measuring."
            )
    return out
