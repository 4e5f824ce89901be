"""Two sides compared: the ratio candidate/baseline of geometric means with its Welch interval
(from per-trial values or published summaries), the trials needed to detect a change, and the
Mann-Whitney cross-check."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

from .stats import CONFIDENCE, Values, _array, _floats, _identical, exp, t_quantile

Source = Literal["trials", "summaries"]  # a ratio from per-trial values, or from published mean, SD and n


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
