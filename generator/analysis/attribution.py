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
order of `runs:` never enters. The records are grid_records.py; the verdict rule, applied to
the fitted effects, is grid_verdict.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from ..format.front_matter import Attribution
from ..ledger.records import Ledger
from . import stats
from .comparison import Settings, direction_of, side
from .grid_records import Cell, Effect, Grid, effect_terms
from .grid_verdict import judged
from .orientation import Orientation, levels_of, orientation
from .verdicts import band_of, judge, tost_level


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
    return judged(grid, gain, sd_log if settle else 0.0, path, settings.min_effect)


def _pair(levels: tuple[str, ...], base: str) -> tuple[str, str]:
    return (base, next(v for v in levels if v != base))


def _cell(run: str, levels: tuple[str, ...], values: tuple[float, ...], confidence: float) -> Cell:
    if len(values) < 2:
        return Cell(run=run, levels=levels, values=values, mean=values[0] if values else None, low=None, high=None)
    low, high, _ = stats.mean_interval(values, confidence)
    return Cell(run=run, levels=levels, values=values, mean=sum(values) / len(values), low=low, high=high)


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

    terms = effect_terms(len(factors))
    rows, ys = [], []
    for cell in cells:
        codes = [-0.5 if cell.levels[k] == base[k] else 0.5 for k in range(len(factors))]
        for value in cell.values:
            rows.append([1.0, *(math.prod(codes[k] for k in term) for term in terms)])
            ys.append(math.log(value))
    fit = OLS(np.array(ys), np.array(rows)).fit()
    limit = stats.LOG_MAX  # as stats.exp: a bound past the floats saturates (read "out of range"), never inf
    ci = np.exp(np.clip(fit.conf_int(alpha=1 - settings.confidence), -limit, limit))
    tost = np.exp(np.clip(fit.conf_int(alpha=1 - tost_level(settings.confidence)), -limit, limit))
    effects = []
    for t, term in enumerate(terms, start=1):
        names = tuple(factors[k] for k in term)
        ratio = stats.exp(float(fit.params[t]))
        direction = gain if names == (credits,) else (1 if ratio > 1 else -1 if ratio < 1 else 0)
        bounds, tbounds = (float(ci[t][0]), float(ci[t][1])), (float(tost[t][0]), float(tost[t][1]))
        verdict = judge(bounds, tbounds, direction, None, settings.min_effect, band).verdict
        effects.append(Effect(factors=names, ratio=ratio, ci=bounds, tost=tbounds, verdict=verdict))
    return effects, int(fit.df_resid), float(math.sqrt(fit.scale))
