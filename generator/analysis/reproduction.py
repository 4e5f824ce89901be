"""Did a rerun reproduce the run? Every metric (and rate) at every condition both hold is a
figure: the ratio rerun / original of the two sides' trials, on the log scale. A figure
**agrees** when its TOST interval lies inside the band [1 / (1 + margin), 1 + margin],
**differs** when its simultaneous two-sided interval (Bonferroni over the run's figures) lies
wholly outside the band, and is **unsettled** otherwise. The band is symmetric on the log
scale, so it can show a halving (a band of 1 ± margin would reach below zero).

The margin is MARGIN unless the verifier sets one, and never depends on the data: noisier
trials widen the intervals, which leaves a figure unsettled until more trials narrow them
(a threshold never gets easier to pass with noisier data). The Bonferroni intervals keep the
chance that a faithful rerun shows any difference at all at 1 - CONFIDENCE, however many
figures the run has.

The run's state (STATES, the words every page, the receipt's statement, `rerun` and `review`
use) is **reproduced** when every figure agrees, **partly reproduced** when at least one agrees
and none differs, **rerun unsettled** when none agrees and none differs, and **not reproduced**
when any differs or there is no figure to judge. Where there is room it is said with its counts
(`Outcome`): "rerun unsettled (0 of 10 agree, 0 differ)", so no label claims an agreement that
no figure showed.

The site recomputes these figures from the trials the rerun kept (hash-checked), never from
the table a receipt states.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..format.conditions import condition_label
from ..format.models import CLIENT_FIGURES
from ..ledger.records import Results, Run
from . import ratios, stats
from .summaries import rate_trials
from .verdicts import tost_level

Status = Literal["agrees", "differs", "unsettled"]
Reproduction = Literal["reproduced", "partly reproduced", "rerun unsettled", "not reproduced"]
STATES: dict[Reproduction, str] = {  # each state and when a rerun is in it, in this order everywhere
    "reproduced": "every figure agrees",
    "partly reproduced": "at least one figure agrees and none differs",
    "rerun unsettled": "no figure agrees and none differs",
    "not reproduced": "a figure differs, or there is no figure to judge",
}
MARGIN = 0.05  # a rerun agrees within 5% unless the verifier sets another margin
NO_RATIO = "no ratio: a zero on one side, not measured again, or fewer than two trials a side"


@dataclass(frozen=True, kw_only=True)
class Figure:
    metric: str
    at: Mapping[str, object]
    ratio: float | None
    low: float | None  # the simultaneous interval, at `level`
    high: float | None
    margin: float
    level: float  # the confidence of low and high: CONFIDENCE shared among the run's figures
    status: Status

    @property
    def label(self) -> str:
        return figure_label(self.metric, self.at)

    @property
    def settles(self) -> bool:
        """Whether more trials can settle it: not when it has no ratio (a zero on one side, not
        measured again, or fewer than two trials on the original's side)."""
        return self.ratio is not None


def figure_label(metric: str, at: Mapping[str, object]) -> str:
    return f"{metric} at {condition_label(at.items())}"


def figures(original: Run, rerun: Results, margin: float | None = None) -> list[Figure]:
    """Every metric and rate of the original run at every condition the rerun also measured,
    but the client's figures about itself (CLIENT_FIGURES) and figures zero both times."""
    found = list(_sides(original, rerun))
    level = family_level(len(found))
    return [figure(name, at, a, b, margin=margin, level=level) for name, at, a, b in found]


def family_level(count: int) -> float:
    """Each of `count` intervals' confidence, so that all hold together at CONFIDENCE."""
    return 1 - (1 - stats.CONFIDENCE) / max(1, count)


def _sides(original: Run, rerun: Results) -> Iterator[tuple[str, Mapping[str, object], list[float], list[float]]]:
    """(figure, condition, original's per-trial values, rerun's) for every figure to judge."""
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
                yield name, where, a, b
        for name, rate in original.meta.rates.items():
            parts = (rate.numerator, rate.denominator)
            _, mine = rate_trials(mine_rows, rate)
            counted = [r for r in their_rows if all(k in r.values for k in parts)]
            its = list(rate_trials(counted, rate)[1].per_trial) if counted else []  # none: not measured again
            if mine.per_trial and any(v != 0 for v in (*mine.per_trial, *its)):
                yield name, where, list(mine.per_trial), its


def figure(
    name: str,
    at: Mapping[str, object],
    a: Sequence[float],
    b: Sequence[float],
    *,
    margin: float | None = None,
    level: float = stats.CONFIDENCE,
) -> Figure:
    """One figure: the original's trials a against the rerun's b, at the verifier's margin
    (None: MARGIN), its two-sided interval at `level`."""
    band = MARGIN if margin is None else margin
    if len(a) < 2 or len(b) < 2 or any(v <= 0 for v in (*a, *b)):  # not measured again, too few, zeros
        return Figure(metric=name, at=at, ratio=None, low=None, high=None, margin=band, level=level, status="unsettled")
    ratio = ratios.ratio_interval(a, b)
    ci, tost = ratio.bounds(level), ratio.bounds(tost_level(stats.CONFIDENCE))
    return Figure(
        metric=name,
        at=at,
        ratio=ratio.ratio,
        low=ci[0],
        high=ci[1],
        margin=band,
        level=level,
        status=agreement(ci, tost, band),
    )


def agreement(ci: tuple[float, float], tost: tuple[float, float], margin: float) -> Status:
    """agrees: the TOST interval inside [1/(1+margin), 1+margin]; differs: the two-sided
    interval wholly outside it; unsettled otherwise."""
    low, high = 1 / (1 + margin), 1 + margin
    if low <= tost[0] and tost[1] <= high:
        return "agrees"
    if ci[1] < low or ci[0] > high:
        return "differs"
    return "unsettled"


@dataclass(frozen=True)
class Outcome:
    """A rerun's state with the counts it was read from, as every surface says it."""

    state: Reproduction
    agree: int
    differ: int
    figures: int

    @property
    def counts(self) -> str:
        """The counts: '0 of 10 agree, 0 differ'; 'no figure to judge' when there is none."""
        if not self.figures:
            return "no figure to judge"
        return f"{self.agree} of {self.figures} agree, {self.differ} {'differs' if self.differ == 1 else 'differ'}"

    @property
    def words(self) -> str:
        """The state with its counts: 'rerun unsettled (0 of 10 agree, 0 differ)'."""
        return f"{self.state} ({self.counts})"


def outcome(found: Sequence[Figure]) -> Outcome:
    """The run's state (STATES) from its figures, with the counts."""
    return outcome_of([f.status for f in found])


def outcome_of(statuses: Sequence[str]) -> Outcome:
    """The state (STATES) that figures of these statuses give, with the counts."""
    agree, differ = statuses.count("agrees"), statuses.count("differs")
    state: Reproduction
    if not statuses or differ:
        state = "not reproduced"
    elif agree == len(statuses):
        state = "reproduced"
    else:
        state = "partly reproduced" if agree else "rerun unsettled"
    return Outcome(state, agree, differ, len(statuses))


def reproduction(found: Sequence[Figure]) -> Reproduction:
    return outcome(found).state
