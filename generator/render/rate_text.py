"""How a rate reads on the run page and a claim card: its mean over the trials with the
interval over them (the trial is the unit), and the summed counts as context only."""

from __future__ import annotations

from ..analysis.rates import RateSummary
from . import text as t

IDENTICAL_SIDE = "every trial identical"


def mean_interval(rate: RateSummary) -> str:
    """The mean of the trials' rates with its interval: '28.2% [27.0%, 29.5%]', or why there is
    none (one trial; every trial identical), never an interval of no width."""
    if rate.mean is None:
        return "–"
    mean = t.percent(rate.mean)
    if rate.constant:
        return f"{mean} ({IDENTICAL_SIDE})"
    if rate.ci_low is None or rate.ci_high is None:
        return f"{mean} (one trial: no interval)"
    return f"{mean} [{t.percent(rate.ci_low)}, {t.percent(rate.ci_high)}]"


def counts(rate: RateSummary, denominator: str) -> str:
    """The counts behind the rate, as context: '5 trials; every trial counted the same 1,367
    draft_tokens' when every trial attempted as many, else '6,835 draft_tokens over 5 trials'."""
    n = rate.n
    if n == 0:
        return f"no {denominator} in any trial"
    each = rate.same_attempts
    if n == 1:
        return f"1 trial; {t.number(rate.attempts)} {denominator}"
    if each is not None:
        return f"{n} trials; every trial counted the same {t.number(each)} {denominator}"
    return f"{t.number(rate.attempts)} {denominator} over {n} trials"
