"""Did a rerun reproduce the run? Every metric (and rate) at every condition both hold,
compared by the equivalence test: a figure **agrees** when the TOST interval of the ratio
rerun / original lies inside the band [1 / (1 + margin), 1 + margin], **differs** when the
two-sided interval lies wholly outside the band of a difference, and is **unsettled**
otherwise. Bands are symmetric on the log scale, so a noisy figure can still show a halving
(a band of 1 ± margin would reach below zero).

Unless the verifier sets one margin for both, the agreement margin is MIN_MARGIN whatever the
data (a threshold never gets easier to pass with noisier data: a noisy figure stays unsettled
until more trials narrow its interval), and the band of a difference is the larger of
MIN_MARGIN and twice the figure's noise band (the larger per-trial CV of the two sides), so
that a faithful rerun of a noisy figure is not called different on its noise alone. A run is
reproduced when every figure agrees, not reproduced when any figure differs, and partly
reproduced otherwise (no figure differs, some are unsettled: more trials would tell).

The site recomputes these figures from the trials the rerun kept (hash-checked), never from
the table a receipt states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

from ..format.conditions import condition_label
from ..format.models import CLIENT_FIGURES
from ..ledger.records import Results, Run
from . import stats
from .summaries import rate_trials
from .verdicts import tost_level

Status = Literal["agrees", "differs", "unsettled"]
Reproduction = Literal["reproduced", "partly reproduced", "not reproduced"]
MIN_MARGIN = 0.05  # agreement: within 5%, however noisy the figure
NOISE_MULTIPLE = 2.0  # a difference: beyond twice the noise band, when that is wider than 5%


@dataclass(frozen=True, kw_only=True)
class Figure:
    metric: str
    at: Mapping[str, object]
    ratio: float | None
    low: float | None
    high: float | None
    margin: float  # agrees: the TOST interval inside 1 ± margin (log-symmetric)
    differs_margin: float  # differs: the two-sided interval wholly outside 1 ± this
    status: Status

    @property
    def label(self) -> str:
        return f"{self.metric} at {condition_label(self.at.items())}"

    @property
    def bands(self) -> str:
        """The margin, or both bands when a difference needs more than the margin."""
        if self.differs_margin <= self.margin:
            return f"margin ±{self.margin:.1%}"
        return f"agrees within ±{self.margin:.1%}, differs beyond ±{self.differs_margin:.1%}"


def figures(original: Run, rerun: Results, margin: float | None = None) -> list[Figure]:
    """Every metric and rate of the original run at every condition the rerun also measured,
    but the client's figures about itself (CLIENT_FIGURES)."""
    out = []
    theirs = set(rerun.condition_values())
    for at in original.results.condition_values():
        if at not in theirs:
            continue
        where = original.results.mapping(at)
        mine_rows, their_rows = original.results.select(at), rerun.select(at)
        for name in original.meta.metrics:
            if name in CLIENT_FIGURES:  # the client's own error: a rerun's client is another one
                continue
            a = [r.values[name] for r in mine_rows if name in r.values]
            b = [r.values[name] for r in their_rows if name in r.values]
            if a and any(v != 0 for v in (*a, *b)):  # zero both times (no errors, twice) says nothing
                out.append(figure(name, where, a, b, margin))
        for name, rate in original.meta.rates.items():
            parts = (rate.numerator, rate.denominator)
            _, mine = rate_trials(mine_rows, rate)
            if not mine.per_trial:
                continue
            counted = [r for r in their_rows if all(k in r.values for k in parts)]
            _, its = rate_trials(counted, rate)
            out.append(figure(name, where, mine.per_trial, its.per_trial, margin))
    return out


def figure(name: str, at: Mapping[str, object], a: Sequence[float], b: Sequence[float], margin: float | None) -> Figure:
    """One figure: the original's trials a against the rerun's b, at the verifier's margin
    (None: the default bands)."""
    noise = max(_cv(a), _cv(b))
    agree = margin if margin is not None else MIN_MARGIN
    apart = margin if margin is not None else max(MIN_MARGIN, NOISE_MULTIPLE * noise)
    found = partial(Figure, metric=name, at=at, margin=agree, differs_margin=apart)
    if all(v == 0 for v in (*a, *b)):  # nothing happened, twice
        return found(ratio=1.0, low=1.0, high=1.0, status="agrees")
    if len(a) < 2 or len(b) < 2 or any(v <= 0 for v in (*a, *b)):  # not measured again, too few, zeros
        return found(ratio=None, low=None, high=None, status="unsettled")
    ratio = stats.ratio_interval(a, b)
    ci, tost = ratio.bounds(stats.CONFIDENCE), ratio.bounds(tost_level(stats.CONFIDENCE))
    return found(ratio=ratio.ratio, low=ci[0], high=ci[1], status=agreement(ci, tost, agree, apart=apart))


def _cv(values: Sequence[float]) -> float:
    """The per-trial CV, 0 when there is none (fewer than two trials, or a mean of 0)."""
    return (stats.summarize(values).cv or 0.0) if values else 0.0


def agreement(
    ci: tuple[float, float], tost: tuple[float, float], margin: float, *, apart: float | None = None
) -> Status:
    """agrees: the TOST interval inside [1/(1+margin), 1+margin]; differs: the two-sided
    interval wholly outside [1/(1+apart), 1+apart] (apart: margin when not given, never
    narrower than it); unsettled otherwise."""
    wide = margin if apart is None else max(apart, margin)
    if 1 / (1 + margin) <= tost[0] and tost[1] <= 1 + margin:
        return "agrees"
    if ci[1] < 1 / (1 + wide) or ci[0] > 1 + wide:
        return "differs"
    return "unsettled"


def reproduction(found: Sequence[Figure]) -> Reproduction:
    if not found or any(f.status == "differs" for f in found):
        return "not reproduced"
    return "reproduced" if all(f.status == "agrees" for f in found) else "partly reproduced"
