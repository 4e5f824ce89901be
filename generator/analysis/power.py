"""How many trials would settle a verdict, and whether any number would.

The question: if the effect and the run-to-run spread stay as measured, at what number of
trials per side (per cell, for a grid) does the verdict rule give a decided verdict with 80%
probability, taking whichever decided verdict is reachable soonest? The probability is found
by simulating the estimate the rule would see at that number of trials: the log ratio
normal around the measured one with standard error sd_log * sqrt(2 / n), its estimated
standard error scaled by sqrt(chi-square(df) / df), df = 2n - 2; the same DRAWS draws (a fixed
seed) serve every n, so the result is deterministic and moves smoothly with n. The verdict rule
itself (`verdicts.judge_many`) is applied to every draw.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import stats
from .verdicts import VERDICTS, Verdict, judge_many, tost_level

DRAWS = 4000
POWER = 0.8
MOST = 100_000  # no search beyond this many trials per side (per cell): the estimate sits on a bound
SEED = 20261201
STEP = 1.3  # the search grows n by 30% until the power is reached, then bisects


@dataclass(frozen=True)
class Settling:
    """The trials that would settle a verdict (None: more trials will not settle it), and the
    verdict they would most likely give."""

    trials: int | None
    outcome: Verdict | str | None
    power: float


COLUMNS = 16  # independent estimates per draw: a 2^4 grid has 15 effects


@functools.lru_cache(maxsize=1)
def draws() -> tuple[Any, Any]:
    """Standard normal draws (DRAWS x COLUMNS) and uniform draws (for the chi-square of the
    spread), seeded."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    return rng.standard_normal((DRAWS, COLUMNS)), rng.uniform(0.0005, 0.9995, DRAWS)


@functools.lru_cache(maxsize=4096)
def spread_factor(df: float) -> Any:
    """sqrt(chi-square(df) / df) at the fixed uniform draws: the estimated SD over the true one.
    Kept per df (read-only): every claim's search for n asks for the same few hundred, and
    computing one is most of evaluating a publication (2,121 calls, 246 distinct at 100 claims)."""
    import numpy as np
    from scipy.special import chdtri

    _, u = draws()
    factor = np.sqrt(chdtri(df, 1 - u) / df)  # chdtri is the inverse of the chi-square survival function
    factor.flags.writeable = False
    return factor


def first_settling(present: int, best_at: Callable[[int], tuple[str | None, float]]) -> Settling:
    """The smallest n above `present` at which `best_at(n)` (the likeliest decided outcome and its
    probability) reaches POWER: grown by STEP, then bisected. None when no n up to MOST does."""
    previous, n = present, present + 1
    while n <= MOST:
        outcome, power = best_at(n)
        if power >= POWER:
            low, high, found = previous + 1, n, (outcome, power)
            while low < high:
                mid = (low + high) // 2
                at_mid = best_at(mid)
                if at_mid[1] >= POWER:
                    high, found = mid, at_mid
                else:
                    low = mid + 1
            return Settling(high, found[0], found[1])
        previous, n = n, max(n + 1, math.ceil(n * STEP))
    return Settling(None, None, 0.0)


def _exp(x: Any) -> Any:
    """np.exp kept inside the finite floats, as stats.exp: an extreme draw saturates instead of
    overflowing (trials spread over hundreds of orders of magnitude)."""
    import numpy as np

    return np.exp(np.clip(x, -stats.LOG_MAX, stats.LOG_MAX))


def comparison_settling(
    log_ratio: float,
    sd_log: float,
    present: int,
    level: float,
    *,
    direction: int,
    claimed_ratio: float | None,
    min_effect: float,
    band: float,
    margin: float | None,
) -> Settling:
    """Trials per side at which a comparison's verdict would be decided with 80% probability."""
    import numpy as np

    z = draws()[0][:, 0]
    inconclusive = VERDICTS.index("inconclusive")

    def best_at(n: int) -> tuple[str | None, float]:
        df = 2 * n - 2
        se = sd_log * math.sqrt(2 / n)
        estimate = log_ratio + se * z
        spread = se * spread_factor(df)
        half, tost_half = stats.t_quantile(level, df) * spread, stats.t_quantile(tost_level(level), df) * spread
        codes = judge_many(
            (_exp(estimate - half), _exp(estimate + half)),
            (_exp(estimate - tost_half), _exp(estimate + tost_half)),
            direction=direction,
            claimed_ratio=claimed_ratio,
            min_effect=min_effect,
            band=band,
            margin=margin,
        )
        counts = np.bincount(codes, minlength=len(VERDICTS))
        counts[inconclusive] = 0
        best = int(np.argmax(counts))
        return (VERDICTS[best], float(counts[best]) / DRAWS) if counts[best] else (None, 0.0)

    return first_settling(present, best_at)
