"""The verdict a comparison gets: the names, and the rule that picks one.

The rule is published on the generated methods page from these functions' parameters.
Every bound is a ratio candidate/baseline. `ci` is the two-sided interval at the
confidence level (95% by default); `tost` the interval at 1 - 2 alpha (90% by default),
whose lying inside a band is the two one-sided tests (TOST) showing equivalence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

Verdict = Literal[
    "no trial data", "incomplete run", "contradicted", "overstated", "supported", "within noise", "inconclusive"
]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)  # in the order the rule tries them
# A claim resting on a run that stopped before every planned trial (run.yaml `incomplete:`) gets
# this verdict, whatever its trials give, unless the claim says `incomplete: accepted`.
INCOMPLETE: Verdict = "incomplete run"
INCOMPLETE_RULE = (
    "a side is a run that stopped before every trial it planned (interrupted, a trial failed, a worker "
    "process killed: incomplete: in its run.yaml), whatever its completed trials give; a claim that says "
    "incomplete: accepted is judged on the trials it has, and carries the flag incomplete run"
)
Bounds = tuple[float, float]


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    understated: bool = False  # supported, and the claimed magnitude lies below the interval's near end
    open_bounds: tuple[float, ...] = ()  # inconclusive: the ratios the interval still straddles


def tost_level(confidence: float) -> float:
    """The TOST interval's level for a test at alpha = 1 - confidence: 1 - 2 alpha."""
    return 2 * confidence - 1


def band_of(noise: float, min_effect: float) -> float:
    """The half-width of the "no difference" band: max(noise band, smallest change worth calling)."""
    return max(noise, min_effect)


def judge(
    ci: Bounds, tost: Bounds, direction: int, claimed_ratio: float | None, min_effect: float, band: float
) -> Judgement:
    """A direction or magnitude claim. In order: contradicted, overstated, supported, within noise,
    inconclusive ("no trial data" is decided before any interval exists). "within noise" needs
    the two-sided interval to contain 1 (no difference detected) as well as the TOST interval
    inside the band: a difference the interval establishes is never "within noise".

    `direction` is +1 when the claim says the ratio is above 1, -1 below, 0 when it gives
    none (then only "within noise" or "inconclusive"); `claimed_ratio` is the claimed
    magnitude as a ratio, None for a bare direction.
    """
    low, high = ci
    above, below = low > 1 + min_effect, high < 1 - min_effect
    if direction and (below if direction > 0 else above):
        return Judgement("contradicted")
    if direction and claimed_ratio is not None and (claimed_ratio > high if direction > 0 else claimed_ratio < low):
        return Judgement("overstated")
    if direction and (above if direction > 0 else below):
        near = low if direction > 0 else high
        understated = claimed_ratio is not None and (claimed_ratio < near if direction > 0 else claimed_ratio > near)
        return Judgement("supported", understated)
    if low <= 1 <= high and tost[0] >= 1 - band and tost[1] <= 1 + band:
        return Judgement("within noise")
    edges = [1 - min_effect, 1 + min_effect, 1 - band, 1 + band]
    if claimed_ratio is not None:
        edges.append(claimed_ratio)
    return Judgement("inconclusive", open_bounds=tuple(sorted(e for e in set(edges) if low < e < high)))


def judge_equivalence(ci: Bounds, tost: Bounds, margin: float) -> Judgement:
    """An equivalence claim ("the sides differ by less than margin"): supported when the TOST
    interval lies inside 1 +- margin, contradicted when the whole two-sided interval lies
    outside it, otherwise inconclusive."""
    if tost[0] >= 1 - margin and tost[1] <= 1 + margin:
        return Judgement("supported")
    if ci[0] > 1 + margin or ci[1] < 1 - margin:
        return Judgement("contradicted")
    return Judgement("inconclusive", open_bounds=tuple(e for e in (1 - margin, 1 + margin) if ci[0] <= e <= ci[1]))


def judge_many(
    ci: tuple[Any, Any],
    tost: tuple[Any, Any],
    *,
    direction: int,
    claimed_ratio: float | None,
    min_effect: float,
    band: float,
    margin: float | None = None,
) -> Any:
    """`judge` (or `judge_equivalence` when `margin` is given) over arrays of bounds at once:
    the index in VERDICTS of each verdict. Used to simulate what more trials would give."""
    import numpy as np

    low, high, tlow, thigh = (np.asarray(b, dtype=float) for b in (*ci, *tost))
    code = np.full(low.shape, VERDICTS.index("inconclusive"))
    if margin is not None:
        rules = [
            (tlow >= 1 - margin) & (thigh <= 1 + margin),
            (low > 1 + margin) | (high < 1 - margin),
        ]
        names: list[Verdict] = ["supported", "contradicted"]
    else:
        above, below = low > 1 + min_effect, high < 1 - min_effect
        never = np.zeros(low.shape, dtype=bool)
        towards, away = (above, below) if direction > 0 else (below, above) if direction < 0 else (never, never)
        far = high if direction > 0 else low
        overstated = never
        if direction and claimed_ratio is not None:
            overstated = claimed_ratio > far if direction > 0 else claimed_ratio < far
        noise = (low <= 1) & (high >= 1) & (tlow >= 1 - band) & (thigh <= 1 + band)
        rules = [away, overstated, towards, noise]
        names = ["contradicted", "overstated", "supported", "within noise"]
    for rule, name in reversed(list(zip(rules, names, strict=True))):  # the first rule that holds wins
        code = np.where(rule, VERDICTS.index(name), code)
    return code


DECISIVE: tuple[Verdict, ...] = ("no trial data", "contradicted", "overstated")
UNANIMOUS: tuple[Verdict, ...] = ("supported", "within noise")


def combine(verdicts: list[Verdict]) -> Verdict:
    """A claim over several conditions holds only where every condition holds: any "no trial
    data" or "contradicted" or "overstated" decides in that order; "supported" (and "within
    noise") only when every condition says so; anything else is inconclusive."""
    for decisive in DECISIVE:
        if decisive in verdicts:
            return decisive
    for unanimous in UNANIMOUS:
        if all(v == unanimous for v in verdicts):
            return unanimous
    return "inconclusive"
