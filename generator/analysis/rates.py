"""A rate (draft acceptance: accepted / drafted tokens) over trials, with the trial as its unit:
one proportion per trial, their mean and the t interval over them. Summed counts are context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .stats import CONFIDENCE, Values, _array, _floats, _mean, _sd, t_interval

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
    mean = _mean(per_trial) if per_trial else None  # exact for identical rates, as `_mean` is
    sd = _sd(per_trial) if len(per_trial) > 1 else None
    low = high = kind = None
    if sd:  # identical trials (SD 0 exactly) have no spread to give an interval
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
