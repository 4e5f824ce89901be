"""An attribution grid's verdict: the rule (GRID_RULE, in the order it is tried, and what
"clearly larger" means), applied to the fitted effects, and the trials per cell that would
settle an inconclusive grid."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ..format.signed import change
from . import power, stats
from .grid_records import GRID_VERDICTS, Effect, Grid, GridVerdict, effect_terms

CLEARLY_LARGER = (
    "another factor's main effect is clearly larger than the credited one's when it is supported in the "
    "gain's direction and either its interval lies entirely beyond the credited effect's interval, or the "
    "credited effect's interval falls short of the share of the gain it is credited with: an even share "
    "(1/j on the log scale) of the gain measured between the cells of the first claim the grid takes apart, j "
    "being the number of factors in which those cells differ (without such a claim: from the all-base cell "
    "to the cell with every factor at its other level, j = k)"
)
GRID_RULE: tuple[tuple[GridVerdict, str], ...] = (  # the attribution's rule, in the order it is tried
    ("no trial data", "a cell is reported or has fewer than two trials"),
    (
        "interacts",
        "an interaction is supported and larger (in |log ratio|) than the main effect of each factor in it: "
        "the factors cannot be credited separately",
    ),
    (
        "supported",
        "the credited factor's main effect is supported in the gain's direction and no other main effect is "
        "clearly larger, nor any interaction (its interval's smaller |log ratio| beyond the credited "
        "interval's larger one); without credits, some main effect is supported in the gain's direction and "
        "the largest is named",
    ),
    (
        "misattributed",
        "another factor's main effect is clearly larger than the credited one's, whether or not the credited "
        "effect is negligible; the page names the factor that earned the gain",
    ),
    ("inconclusive", "anything else, with the trials per cell that would settle it"),
)


@dataclass(frozen=True, kw_only=True)
class Rule:
    """What the attribution's rule needs besides the estimates: the terms (factor indices), the
    credited factor's index, the gain's direction, the smallest change worth calling, and the
    weights that turn the effects into the gain the credit is about, with its number of factors."""

    terms: tuple[tuple[int, ...], ...]
    credited: int | None
    gain: int
    min_effect: float
    weights: tuple[float, ...]
    shared_by: int

    def decide(self, est: Any, half: Any) -> Any:
        """The verdict (an index into GRID_VERDICTS) for each row of log effects `est` with the
        half-widths `half` of their intervals (arrays draws x effects)."""
        import numpy as np

        low, high, size = est - half, est + half, np.abs(est)
        up, down = math.log1p(self.min_effect), math.log1p(-self.min_effect)
        real = np.where(est > 0, low > up, high < down)  # supported, in the direction of its estimate
        towards = low > up if self.gain > 0 else high < down  # supported, in the gain's direction
        mains = {term[0]: i for i, term in enumerate(self.terms) if len(term) == 1}
        interacts = np.zeros(est.shape[0], dtype=bool)
        for i, term in enumerate(self.terms):
            if len(term) > 1:
                interacts |= real[:, i] & np.all([size[:, i] > size[:, mains[k]] for k in term], axis=0)
        code = np.full(est.shape[0], GRID_VERDICTS.index("inconclusive"))
        if self.credited is None:
            some = np.any(towards[:, list(mains.values())], axis=1)
            code = np.where(some, GRID_VERDICTS.index("supported"), code)
        else:
            c = mains[self.credited]
            larger, bigger_interaction = self.clearly_larger(est, half, towards, real, c)
            code = np.where(larger, GRID_VERDICTS.index("misattributed"), code)
            code = np.where(towards[:, c] & ~larger & ~bigger_interaction, GRID_VERDICTS.index("supported"), code)
        return np.where(interacts, GRID_VERDICTS.index("interacts"), code)

    def clearly_larger(self, est: Any, half: Any, towards: Any, real: Any, c: int) -> tuple[Any, Any]:
        """Whether another main effect is clearly larger than the credited one, column `c`
        (supported in the gain's direction, and its interval beyond the credited one's, or the
        credited interval short of its share of the gain), and whether an interaction's size is
        clearly larger."""
        import numpy as np

        mains = {term[0]: i for i, term in enumerate(self.terms) if len(term) == 1}
        low, high = est - half, est + half
        share = (est @ np.asarray(self.weights)) / self.shared_by
        short = high[:, c] < share if self.gain > 0 else low[:, c] > share
        larger = np.zeros(est.shape[0], dtype=bool)
        for k, o in mains.items():
            if k != self.credited:
                beyond = low[:, o] > high[:, c] if self.gain > 0 else high[:, o] < low[:, c]
                larger |= towards[:, o] & (beyond | short)
        bigger = np.zeros(est.shape[0], dtype=bool)
        for i, term in enumerate(self.terms):
            if len(term) > 1:
                bigger |= real[:, i] & (np.abs(est[:, i]) - half[:, i] > np.abs(est[:, c]) + half[:, c])
        return larger, bigger


def _rule(grid: Grid, gain: int, path: tuple[tuple[str, ...], tuple[str, ...]], min_effect: float) -> Rule:
    """The rule for this grid; the gain the credit is about runs along `path` (the claim's cells)."""
    terms = tuple(effect_terms(len(grid.factors)))
    before, after = path

    def code(levels: tuple[str, ...], k: int) -> float:
        return -0.5 if levels[k] == grid.levels[grid.factors[k]][0] else 0.5

    weights = tuple(math.prod(code(after, k) for k in t) - math.prod(code(before, k) for k in t) for t in terms)
    moved = sum(1 for k in range(len(grid.factors)) if before[k] != after[k])
    credits = grid.attribution.credits
    credited = grid.factors.index(credits) if credits is not None else None
    return Rule(
        terms=terms, credited=credited, gain=gain, min_effect=min_effect, weights=weights, shared_by=max(1, moved)
    )


def _estimates(grid: Grid) -> tuple[Any, Any]:
    import numpy as np

    est = np.array([[math.log(e.ratio) for e in grid.effects]])
    half = np.array([[math.log(e.ci[1]) - math.log(e.ratio) for e in grid.effects]])
    return est, half


def judged(
    grid: Grid, gain: int, sd_log: float, path: tuple[tuple[str, ...], tuple[str, ...]], min_effect: float
) -> Grid:
    """In order: interacts, supported, misattributed, inconclusive (with the trials needed)."""
    rule = _rule(grid, gain, path, min_effect)
    est, half = _estimates(grid)
    verdict = GRID_VERDICTS[int(rule.decide(est, half)[0])]
    gained = stats.exp(float(est[0] @ rule.weights))
    grid = replace(grid, gain=gained)
    mains = {e.factors[0]: e for e in grid.effects if len(e.factors) == 1}
    real_gains = sorted(
        (e for e in mains.values() if e.verdict == "supported" and (e.ratio - 1) * gain > 0),
        key=lambda e: -e.size,
    )
    earned = real_gains[0].factors[0] if real_gains else None
    credited = grid.attribution.credits
    if verdict == "interacts":
        inter = max(
            (
                e
                for e in grid.effects
                if len(e.factors) > 1 and e.verdict == "supported" and all(e.size > mains[f].size for f in e.factors)
            ),
            key=lambda e: e.size,
        )
        reason = (
            f"the interaction {inter.name} ({_pct(inter.ratio)}) is larger than the main effects of "
            f"{' and '.join(inter.factors)}: their gains cannot be credited separately"
        )
        return replace(grid, verdict="interacts", earned=earned, reason=reason)
    if verdict == "supported" and credited is None:
        reason = f"no factor is credited; {earned} has the largest supported main effect in the gain's direction"
        return replace(grid, verdict="supported", earned=earned, reason=reason)
    if verdict == "supported" and credited is not None:
        mine = mains[credited]
        reason = (
            f"the credited factor, {credited}, has a real effect in the gain's direction, "
            f"{_interval(mine)}, and no other effect is clearly larger"
        )
        return replace(grid, verdict="supported", earned=credited, reason=reason)
    if verdict == "misattributed" and credited is not None:
        found = _misattributed(grid, rule, gain, credited)
        if found is not None:
            return found
    return _inconclusive(grid, rule, sd_log, credited, earned)


def _misattributed(grid: Grid, rule: Rule, gain: int, credited: str) -> Grid | None:
    """Name the factor that earned the gain, and say why the credited one cannot have."""
    mains = {e.factors[0]: e for e in grid.effects if len(e.factors) == 1}
    mine = mains[credited]
    share = math.exp(math.log(grid.gain or 1.0) / rule.shared_by)
    short = mine.ci[1] < share if gain > 0 else mine.ci[0] > share
    others = [
        e
        for f, e in mains.items()
        if f != credited
        and e.verdict == "supported"
        and (e.ratio - 1) * gain > 0
        and (short or (e.ci[0] > mine.ci[1] if gain > 0 else e.ci[1] < mine.ci[0]))
    ]
    if not others:  # the rule's arrays and the effects' own verdicts agree; this guards rounding only
        return None
    earned = max(others, key=lambda e: e.size)
    gained = _pct(grid.gain or 1.0)
    whole = (
        f"the whole gain of {gained}"
        if rule.shared_by == 1
        else f"{_pct(share)}, what it would give if the {rule.shared_by} factors that changed shared the gain "
        f"of {gained} equally"
    )
    why = (
        f"even its interval falls short of {whole}" if short else f"its interval lies below that of {earned.factors[0]}"
    )
    reason = (
        f"the publisher credits {credited}, but the effect of {credited}, {_interval(mine)}, cannot account for "
        f"the gain: {why}. The effect of {earned.factors[0]} is real and clearly larger, {_interval(earned)}"
    )
    return replace(grid, verdict="misattributed", earned=earned.factors[0], reason=reason)


def _inconclusive(grid: Grid, rule: Rule, sd_log: float, credited: str | None, earned: str | None) -> Grid:
    what = f"the effect of {credited}" if credited else "any factor's effect"
    reason = f"the intervals are too wide to tell {what} from the others"
    grid = replace(grid, verdict="inconclusive", earned=earned, reason=reason)
    if sd_log == 0:
        return grid
    present = max(len(c.values) for c in grid.cells)
    settling = grid_settling(grid, rule, sd_log, present)
    if settling.trials is not None:
        return replace(grid, trials_needed=settling.trials, settles_as=settling.outcome)
    mains = [e for e in grid.effects if len(e.factors) == 1]
    focus = grid.effect(credited) if credited else max(mains, key=lambda e: e.size)
    assert focus is not None
    bounds = (1 + rule.min_effect, 1 - rule.min_effect)
    bound = min(bounds, key=lambda b: abs(math.log(focus.ratio) - math.log(b)))
    who = f"the credited effect of {credited}" if credited else f"the largest main effect, {focus.name}"
    where = (
        f"sits on the bound {_pct(bound)}"
        if _pct(focus.ratio) == _pct(bound)
        else f"is {abs(focus.ratio - bound) * 100:.1f} points from the bound {_pct(bound)}"
    )
    unsettled = (
        f"more trials per cell will not settle it: no number of trials per cell up to {power.MOST:,} would decide "
        f"it with 80% probability; the estimate of {who}, {_pct(focus.ratio)}, {where} (the smallest change worth "
        "calling), and no other effect is clearly larger"
    )
    return replace(grid, unsettled=unsettled)


def grid_settling(grid: Grid, rule: Rule, sd_log: float, present: int) -> power.Settling:
    """Trials per cell at which the grid's verdict would be decided with 80% probability, if the
    effects and the pooled spread stay as measured (each effect's standard error at m trials
    per cell: sd_log * 2^order / sqrt(m 2^k), df = (m - 1) 2^k)."""
    import numpy as np

    z, _ = power.draws()
    cells = 2 ** len(grid.factors)
    est0 = np.array([math.log(e.ratio) for e in grid.effects])
    scale = np.array([2.0 ** len(t) for t in rule.terms])
    noise = z[:, : len(est0)]
    inconclusive = GRID_VERDICTS.index("inconclusive")

    def best_at(m: int) -> tuple[str | None, float]:
        df = (m - 1) * cells
        se = sd_log * scale / math.sqrt(m * cells)
        est = est0 + noise * se
        half = stats.t_quantile(grid.confidence, df) * se * power.spread_factor(df)[:, None]
        counts = np.bincount(rule.decide(est, half), minlength=len(GRID_VERDICTS))
        counts[inconclusive] = 0
        best = int(np.argmax(counts))
        return (GRID_VERDICTS[best], float(counts[best]) / power.DRAWS) if counts[best] else (None, 0.0)

    return power.first_settling(present, best_at)


def _interval(e: Effect | None) -> str:
    if e is None:
        return ""
    return f"{_pct(e.ratio)} [{_pct(e.ci[0])}, {_pct(e.ci[1])}]"


def _pct(ratio: float) -> str:
    return change(ratio)
