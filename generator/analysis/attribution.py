"""Which factor earned a gain: a 2^k factorial grid of runs, fitted on the log scale.

Every trial of every cell enters one ordinary least squares fit (statsmodels) of
log(value) on the factors, each coded -1/2 at its base level and +1/2 at the other, and on
every product of two or more of those codes. The model is saturated in the cell means, so
each coefficient is exact arithmetic on the cells' mean logs: a main effect is the ratio
other level / base level averaged (geometric mean) over the other factors' levels; a
two-factor interaction is the ratio by which one factor's effect changes when the other
switches; higher orders repeat that. Intervals are t intervals from the pooled residual
variance (N - 2^k degrees of freedom), which assumes the cells share one spread on the log
scale. Each effect gets the claims' verdict rule.

A factor's base level is its level in the baseline of the claims that take the grid apart
(the claims comparing two of its runs that differ in that factor), else the attribution's
`base:`, else the level at which the metric is worse (so its effect reads as a gain). The
order of `runs:` never enters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from ..format.front_matter import Attribution
from ..format.signed import change
from ..ledger.records import Ledger
from . import power, stats
from .comparison import Settings, direction_of, side
from .orientation import Orientation, levels_of, orientation
from .verdicts import Verdict, band_of, judge, tost_level

GridVerdict = Literal["no trial data", "interacts", "misattributed", "supported", "inconclusive"]
GRID_VERDICTS: tuple[GridVerdict, ...] = get_args(GridVerdict)
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
JOINER = " × "


@dataclass(frozen=True, kw_only=True)
class Cell:
    run: str
    levels: tuple[str, ...]  # each factor's value in this run, in the order of `factors`
    values: tuple[float, ...]  # per-trial values at the grid's condition (excluded trials left out)
    mean: float | None
    low: float | None  # the mean's interval
    high: float | None


@dataclass(frozen=True, kw_only=True)
class Effect:
    factors: tuple[str, ...]  # one factor: a main effect; more: their interaction
    ratio: float
    ci: tuple[float, float]
    tost: tuple[float, float]
    verdict: Verdict

    @property
    def name(self) -> str:
        return JOINER.join(self.factors)

    @property
    def size(self) -> float:
        return abs(math.log(self.ratio))


@dataclass(frozen=True, kw_only=True)
class Grid:
    attribution: Attribution
    report: str  # the slug of the report that declares it
    factors: tuple[str, ...]
    levels: Mapping[str, tuple[str, str]]  # factor -> (base level, other level)
    cells: tuple[Cell, ...]
    effects: tuple[Effect, ...]
    verdict: GridVerdict
    earned: str | None  # the factor the grid credits: the largest real main effect in the gain's direction
    reason: str
    noise: float | None = None
    band: float | None = None
    df: int | None = None
    trials_needed: int | None = None  # per cell, when inconclusive
    confidence: float = stats.CONFIDENCE
    unsettled: str | None = None  # inconclusive, and more trials per cell will not settle it: why
    settles_as: str | None = None  # the verdict the trials needed would most likely give
    oriented: Mapping[str, str] = field(default_factory=dict)  # factor -> what chose its base level, in words
    gain: float | None = None  # the ratio of the gain the credit is about: the claim's cells, else all factors

    def effect(self, *factors: str) -> Effect | None:
        return next((e for e in self.effects if e.factors == factors), None)


# ---- the fit ----------------------------------------------------------------------------------


def attribute_all(ledger: Ledger, settings: Settings) -> list[Grid]:
    """Every attribution of every report, judged (the ledger must have been checked)."""
    return [attribute(ledger, r.slug, a, settings) for r in ledger.reports for a in r.meta.attributions]


def attribute(ledger: Ledger, report: str, a: Attribution, settings: Settings) -> Grid:
    """The grid's effects, their verdicts, and the attribution's verdict (a checked grid)."""
    runs = [ledger.runs[ref] for ref in sorted(a.runs)]  # the order of `runs:` never matters
    sides = [side(run, a.metric, a.at, settings.confidence) for run in runs]
    short = [s.run for s in sides if s.reported or s.n < 2]
    levels = [levels_of(run, a) for run in runs]
    cells = [(run.id, lv, () if s.reported else s.values) for run, lv, s in zip(runs, levels, sides, strict=True)]
    noise = settings.noise if settings.noise is not None else max((s.cv or 0.0 for s in sides), default=0.0)
    gain = direction_of(runs[0], a.metric, None) or 1  # a metric without `better`: higher is the gain
    return fit_grid(
        a, report, cells, noise=noise, gain=gain, settings=settings, short=short, oriented=orientation(ledger, a)
    )


def fit_grid(
    a: Attribution,
    report: str,
    cells: Sequence[tuple[str, tuple[str, ...], tuple[float, ...]]],
    *,
    noise: float,
    gain: int,
    settings: Settings,
    short: Sequence[str] = (),
    oriented: Orientation | None = None,
    settle: bool = True,
) -> Grid:
    """The grid judged from its cells: (run id, each factor's level, per-trial values), in any
    order; `gain` is +1 when higher is better, -1 when lower is. `oriented` holds the base
    levels the claims chose (else `a.base`); any other factor's base is its worse level.
    `settle=False` skips the search for the trials that would settle an inconclusive grid."""
    factors = tuple(a.factors)
    oriented = oriented or Orientation(base={f: str(v) for f, v in a.base.items()}, why={}, path=None)
    cells = sorted(cells)
    found = tuple(_cell(run, lv, values, settings.confidence) for run, lv, values in cells)
    pairs = {f: tuple(sorted({c.levels[k] for c in found})) for k, f in enumerate(factors)}
    base = tuple(oriented.base.get(f, pairs[f][0]) for f in factors)
    levels = {f: _pair(pairs[f], base[k]) for k, f in enumerate(factors)}
    unoriented = "nothing: with no usable trials it cannot read as a gain (levels in sorted order)"
    why = {f: oriented.why.get(f, "base: in the attribution") if f in oriented.base else unoriented for f in factors}
    grid = Grid(
        attribution=a,
        report=report,
        factors=factors,
        levels=levels,
        cells=found,
        effects=(),
        verdict="no trial data",
        earned=None,
        reason="",
        confidence=settings.confidence,
        oriented=why,
    )
    if short:
        return replace(grid, reason=f"fewer than two trials in {', '.join(short)}: no interval can be fitted")
    if any(v <= 0 for c in found for v in c.values):
        return replace(grid, reason="a value is zero or negative: ratios need positive values")
    band = band_of(noise, settings.min_effect)
    fit = _fit(found, base, factors, settings=settings, band=band, gain=gain, credits=a.credits)
    flip = [k for k, f in enumerate(factors) if f not in oriented.base and (fit[0][k].ratio - 1) * gain < 0]
    if flip:  # a factor nothing orients reads as a gain: its base is the level at which the metric is worse
        base = tuple(levels[f][1] if k in flip else levels[f][0] for k, f in enumerate(factors))
        levels = {f: _pair(pairs[f], base[k]) for k, f in enumerate(factors)}
        fit = _fit(found, base, factors, settings=settings, band=band, gain=gain, credits=a.credits)
    effects, df, sd_log = fit
    gains = "nothing: it reads as a gain (its base is the level at which the metric is worse)"
    why = {f: w if f in oriented.base else gains for f, w in why.items()}
    path = oriented.path or (base, tuple(levels[f][1] for f in factors))
    grid = replace(grid, levels=levels, effects=tuple(effects), noise=noise, band=band, df=df, oriented=why)
    return _judged(grid, gain, sd_log if settle else 0.0, path, settings.min_effect)


def _pair(levels: tuple[str, ...], base: str) -> tuple[str, str]:
    return (base, next(v for v in levels if v != base))


def _cell(run: str, levels: tuple[str, ...], values: tuple[float, ...], confidence: float) -> Cell:
    if len(values) < 2:
        return Cell(run=run, levels=levels, values=values, mean=values[0] if values else None, low=None, high=None)
    low, high, _ = stats.mean_interval(values, confidence)
    return Cell(run=run, levels=levels, values=values, mean=sum(values) / len(values), low=low, high=high)


def _terms(k: int) -> list[tuple[int, ...]]:
    """Every main effect, then every interaction, in the order of the factors."""
    return [combo for r in range(1, k + 1) for combo in itertools.combinations(range(k), r)]


def _fit(
    cells: Sequence[Cell],
    base: Sequence[str],
    factors: Sequence[str],
    *,
    settings: Settings,
    band: float,
    gain: int,
    credits: str | None,
) -> tuple[list[Effect], int, float]:
    import numpy as np
    from statsmodels.regression.linear_model import OLS  # imported only when a report has a grid (~0.8 s)

    terms = _terms(len(factors))
    rows, ys = [], []
    for cell in cells:
        codes = [-0.5 if cell.levels[k] == base[k] else 0.5 for k in range(len(factors))]
        for value in cell.values:
            rows.append([1.0, *(math.prod(codes[k] for k in term) for term in terms)])
            ys.append(math.log(value))
    fit = OLS(np.array(ys), np.array(rows)).fit()
    ci = np.exp(fit.conf_int(alpha=1 - settings.confidence))
    tost = np.exp(fit.conf_int(alpha=1 - tost_level(settings.confidence)))
    effects = []
    for t, term in enumerate(terms, start=1):
        names = tuple(factors[k] for k in term)
        ratio = float(math.exp(fit.params[t]))
        direction = gain if names == (credits,) else (1 if ratio > 1 else -1 if ratio < 1 else 0)
        bounds, tbounds = (float(ci[t][0]), float(ci[t][1])), (float(tost[t][0]), float(tost[t][1]))
        verdict = judge(bounds, tbounds, direction, None, settings.min_effect, band).verdict
        effects.append(Effect(factors=names, ratio=ratio, ci=bounds, tost=tbounds, verdict=verdict))
    return effects, int(fit.df_resid), float(math.sqrt(fit.scale))


# ---- the attribution's verdict -----------------------------------------------------------------


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
    terms = tuple(_terms(len(grid.factors)))
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


def _judged(
    grid: Grid, gain: int, sd_log: float, path: tuple[tuple[str, ...], tuple[str, ...]], min_effect: float
) -> Grid:
    """In order: interacts, supported, misattributed, inconclusive (with the trials needed)."""
    rule = _rule(grid, gain, path, min_effect)
    est, half = _estimates(grid)
    verdict = GRID_VERDICTS[int(rule.decide(est, half)[0])]
    gained = math.exp(float(est[0] @ rule.weights))
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
    whole = (
        f"the whole {_pct(grid.gain or 1.0)} gain"
        if rule.shared_by == 1
        else (f"an even share ({_pct(share)}) of the {_pct(grid.gain or 1.0)} gain")
    )
    why = f"its interval lies short of {whole}" if short else f"its interval lies below that of {earned.factors[0]}"
    reason = (
        f"the publisher credits {credited}, whose effect, {_interval(mine)}, cannot account for the gain ({why}); "
        f"{earned.factors[0]} has a real and clearly larger effect, {_interval(earned)}"
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
    unsettled = (
        f"more trials per cell will not settle it: the estimate of {who}, {_pct(focus.ratio)}, sits on the bound "
        f"{_pct(bound)} (the smallest change worth calling), and no other effect is clearly larger"
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
