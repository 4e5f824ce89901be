"""Statistics as pure functions over sequences of per-trial values.

The trial is the unit of replication: every function here takes one value per
trial, never per request. Each function raises `ValueError` on empty input.
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
Source = Literal["trials", "summaries"]  # a ratio from per-trial values, or from published mean, SD and n
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


@dataclass(frozen=True, kw_only=True)
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


RateIntervalKind = Literal["t", "t, truncated to [0, 1]"]


@dataclass(frozen=True, kw_only=True)
class RateSummary:
    """A rate such as draft acceptance, with the trial as its unit, as for every other figure:
    one proportion per trial that attempted anything, their mean, and the Student t interval
    over them, whose width comes from the spread between trials (see `summarize_rate`).

    `n` is the number of those trials. The counts summed over trials (`successes`, `attempts`)
    are context only: tokens inside a trial share their prompt, so they are not independent
    attempts. `sd`, `ci_low` and `ci_high` are None with fewer than two trials; the interval is
    None too when every trial gave the same rate (`constant`: there is no spread to measure)."""

    per_trial: tuple[float, ...]  # successes / attempts of each trial that attempted anything
    attempts_per_trial: tuple[float, ...]  # those trials' attempts, in the same order
    successes: float  # summed over every trial: context, never the interval's n
    attempts: float
    mean: float | None  # the mean of `per_trial`; None when no trial attempted anything
    sd: float | None  # the SD of `per_trial` (n - 1); 0 exactly when every trial gave the same rate
    ci_low: float | None
    ci_high: float | None
    interval: RateIntervalKind | None = None

    @property
    def n(self) -> int:
        """The trials the rate's statistics count: those that attempted anything."""
        return len(self.per_trial)

    @property
    def constant(self) -> bool:
        """Two or more trials, every one with the same rate: no run-to-run variation was measured."""
        return self.n > 1 and min(self.per_trial) == max(self.per_trial)

    @property
    def same_attempts(self) -> float | None:
        """The attempts of every trial when they are all equal (the same prompts drafted the same
        tokens), else None."""
        first = self.attempts_per_trial[0] if self.attempts_per_trial else None
        return first if all(a == first for a in self.attempts_per_trial) else None


def rate_interval(per_trial: Values, confidence: float = CONFIDENCE) -> tuple[float, float, RateIntervalKind]:
    """The Student t interval of the mean of per-trial proportions, mean +- t(n - 1) s / sqrt(n)
    (scipy's t quantile), truncated to [0, 1] when every trial's rate lies there (needs n >= 2).

    Truncating never changes coverage: a true rate lies in [0, 1], so the truncated interval holds
    it exactly when the t interval does. Trials whose counts give a rate outside [0, 1] (a numerator
    that is not a subset of its denominator) keep the plain t interval."""
    xs = _floats(per_trial, "per-trial rates")
    low, high = t_interval(xs, confidence)
    if not all(0 <= x <= 1 for x in xs) or (low >= 0 and high <= 1):
        return low, high, "t"
    return max(low, 0.0), min(high, 1.0), "t, truncated to [0, 1]"


def summarize_rate(numerators: Values, denominators: Values, confidence: float = CONFIDENCE) -> RateSummary:
    """A rate over trials: each trial's numerator / denominator (a trial with no attempts has
    no rate), their mean, SD and `rate_interval`, and the summed counts as context.

    The counts are never pooled into one proportion with a binomial (Wilson) interval: tokens
    drawn from one prompt are correlated, and a prompt's acceptance differs from another's, so
    such an interval counts copies of the same information as sample size (tests/test_rates.py
    simulates it)."""
    num, den = _array(numerators, "numerators"), _array(denominators, "denominators")
    if num.shape != den.shape:
        raise ValueError("numerators and denominators differ in length")
    kept = [(float(a), float(b)) for a, b in zip(num, den, strict=True) if b > 0]
    per_trial, attempts = tuple(a / b for a, b in kept), tuple(b for _, b in kept)
    constant = bool(per_trial) and min(per_trial) == max(per_trial)
    mean = (per_trial[0] if constant else _mean(per_trial)) if per_trial else None
    sd = 0.0 if constant and len(per_trial) > 1 else None
    low = high = kind = None
    if len(per_trial) > 1 and not constant:
        sd = _sd(per_trial)
        low, high, kind = rate_interval(per_trial, confidence)
    return RateSummary(
        per_trial=per_trial,
        attempts_per_trial=attempts,
        successes=float(num.sum()),
        attempts=float(den.sum()),
        mean=mean,
        sd=sd,
        ci_low=low,
        ci_high=high,
        interval=kind,
    )


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


@dataclass(frozen=True)
class Ratio:
    """The ratio candidate/baseline of geometric means, as a difference of log means with its
    Welch standard error; `bounds()` gives its interval at any confidence level."""

    log_ratio: float  # mean(log c) - mean(log b)
    se: float  # standard error of log_ratio (0 when both sides are constant)
    df: float  # Welch-Satterthwaite degrees of freedom (inf when se is 0)
    sd_log: float  # pooled standard deviation of the per-trial log values
    source: Source = "trials"
    exact: float | None = None  # both sides constant: candidate / baseline as divided, with no interval

    @property
    def ratio(self) -> float:
        return self.exact if self.exact is not None else exp(self.log_ratio)

    def bounds(self, confidence: float) -> tuple[float, float]:
        """The two-sided interval of the ratio at `confidence` (1 - 2 alpha gives TOST's); the
        ratio itself at both ends when both sides are constant (see `exact`)."""
        if self.se == 0:
            return self.ratio, self.ratio
        half = t_quantile(confidence, self.df) * self.se
        return exp(self.log_ratio - half), exp(self.log_ratio + half)

    @property
    def low(self) -> float:
        return self.bounds(CONFIDENCE)[0]

    @property
    def high(self) -> float:
        return self.bounds(CONFIDENCE)[1]


def _welch(
    diff: float, var_b: float, n_b: int, var_c: float, n_c: int, source: Source, exact: float | None = None
) -> Ratio:
    """Welch on the log scale from each side's variance of log values and its n; `exact` is
    the ratio as divided, kept when both variances are 0."""
    vb, vc = var_b / n_b, var_c / n_c
    if not all(math.isfinite(v) and v < 1e100 for v in (diff, vb, vc)):
        raise ValueError("the spread is too large to compute an interval (a variance of log values past 1e100)")
    se = math.sqrt(vb + vc)
    pooled = math.sqrt(((n_b - 1) * var_b + (n_c - 1) * var_c) / (n_b + n_c - 2))
    if se == 0:
        kept = exact is not None and 0 < exact < math.inf  # a quotient that left the floats: from the logs
        return Ratio(diff, 0.0, math.inf, 0.0, source, exact if kept else None)
    df = (vb + vc) ** 2 / (vb**2 / (n_b - 1) + vc**2 / (n_c - 1))
    return Ratio(diff, se, df, pooled, source)


def ratio_interval(baseline: Values, candidate: Values) -> Ratio:
    """Welch's t for mean(log c) - mean(log b) from per-trial values.

    Every value must be positive; each side needs at least two trials. A side whose trials
    are identical has a variance of 0 exactly; when both are, the ratio is their quotient and
    has no interval (`Ratio.exact`).
    """
    b, c = _floats(baseline, "baseline trials"), _floats(candidate, "candidate trials")
    if len(b) < 2 or len(c) < 2:
        raise ValueError("a ratio interval needs at least two trials on each side")
    if any(x <= 0 for x in b) or any(x <= 0 for x in c):
        raise ValueError("a ratio of geometric means needs positive values")
    (mb, vb), (mc, vc) = _log_moments(b), _log_moments(c)
    exact = c[0] / b[0] if vb == 0 and vc == 0 else None
    return _welch(mc - mb, vb, len(b), vc, len(c), "trials", exact)


def _log_moments(xs: Sequence[float]) -> tuple[float, float]:
    """The mean and sample variance of the log values (numpy's, for speed on many trials);
    identical values give their log and 0 exactly."""
    if _identical(xs):
        return math.log(xs[0]), 0.0
    logs = np.log(np.asarray(xs, dtype=float))
    return float(logs.mean()), float(np.var(logs, ddof=1))


def ratio_from_summaries(baseline: tuple[float, float, int], candidate: tuple[float, float, int]) -> Ratio:
    """Welch's t on the log scale from published (mean, SD, n) per side, by the delta method:
    log(mean) for the log mean and (SD / mean)^2 for the variance of the log values."""
    (mb, sb, nb), (mc, sc, nc) = baseline, candidate
    if nb < 2 or nc < 2:
        raise ValueError("a ratio interval needs n >= 2 on each side")
    if mb <= 0 or mc <= 0:
        raise ValueError("a ratio of means needs positive means")
    if sb > 10 * mb or sc > 10 * mc:  # the delta method's log-scale variance means nothing there
        raise ValueError("a published SD more than ten times its mean leaves the delta method no meaning")
    return _welch(math.log(mc / mb), (sb / mb) ** 2, nb, (sc / mc) ** 2, nc, "summaries", mc / mb)


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
        return float(1 - special.nctdtr(df, ncp, crit) + special.nctdtr(df, ncp, -crit))  # noncentral t CDF

    z = float(special.ndtri(1 - (1 - confidence) / 2) + special.ndtri(power))
    guess = max(2, math.ceil(2 * (z * sd_log / delta) ** 2))  # the normal approximation: usually 0-2 short
    if guess > 1_000_000:
        return guess
    while guess > 2 and achieved(guess - 1) >= power:
        guess -= 1
    low = high = guess
    while achieved(high) < power:
        low, high = high + 1, high + max(1, high - low + 1) * 2
        if high > 1_000_000:
            return high
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if achieved(mid) < power else (low, mid)
    return high


def mann_whitney(baseline: Values, candidate: Values) -> float:
    """Two-sided Mann-Whitney U p-value (a cross-check, never the verdict)."""
    b, c = _array(baseline, "baseline trials"), _array(candidate, "candidate trials")
    from scipy import stats as sps

    return float(sps.mannwhitneyu(c, b, alternative="two-sided").pvalue)
