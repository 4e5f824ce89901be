"""Which factor earned a gain: a 2^k factorial grid of runs, fitted on the log scale.

Every trial of every cell enters one ordinary least squares fit (statsmodels) of
log(value) on the factors, each coded -1/2 at its base level (the level of the grid's
first run) and +1/2 at the other, and on every product of two or more of those codes.
The model is saturated in the cell means, so each coefficient is exact arithmetic on the
cells' mean logs: a main effect is the ratio other level / base level averaged (geometric
mean) over the other factors' levels; a two-factor interaction is the ratio by which one
factor's effect changes when the other switches; higher orders repeat that. Intervals are
t intervals from the pooled residual variance (N - 2^k degrees of freedom), which assumes
the cells share one spread on the log scale. Each effect gets the claims' verdict rule.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from ..errors import Problem
from ..format.models import Attribution
from ..format.signed import change
from ..ledger.records import Ledger, Report, Run
from ..ledger.references import condition_problem, run_reference_problem
from ..ledger.yamlio import line_for
from . import stats
from .comparison import Settings, direction_of, environment, side
from .verdicts import Verdict, band_of, judge, tost_level

GridVerdict = Literal["no trial data", "interacts", "misattributed", "supported", "inconclusive"]
GRID_VERDICTS: tuple[GridVerdict, ...] = get_args(GridVerdict)  # in the order the rule tries them
JOINER = " × "


@dataclass(frozen=True)
class Cell:
    run: str
    levels: tuple[str, ...]  # each factor's value in this run, in the order of `factors`
    values: tuple[float, ...]  # per-trial values at the grid's condition (excluded trials left out)
    mean: float | None
    low: float | None  # the mean's interval
    high: float | None


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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

    def effect(self, *factors: str) -> Effect | None:
        return next((e for e in self.effects if e.factors == factors), None)


# ---- checking the grid against the runs -----------------------------------------------------


def _where(report: Report, i: int, *field: str | int) -> tuple[int | None, str]:
    loc: tuple[str | int, ...] = ("attributions", i, *field)
    return line_for(loc, report.lines), ".".join(map(str, loc))


def grid_problems(ledger: Ledger) -> list[Problem]:
    """Every problem with the attributions of all reports, located in their front matter."""
    problems: list[Problem] = []
    used = {c.id: r.path for r in ledger.reports for c in r.meta.claims}
    for report in ledger.reports:
        for i, attribution in enumerate(report.meta.attributions):
            if attribution.id in used:
                message = f"id {attribution.id!r} is already used in {used[attribution.id]}; ids are unique"
                problems.append(Problem(report.path, *_where(report, i, "id"), message))
                continue
            used[attribution.id] = report.path
            problems += _problems(ledger, report, i, attribution)
    return problems


def _problems(ledger: Ledger, report: Report, i: int, a: Attribution) -> list[Problem]:
    found: list[Problem] = []
    for j, ref in enumerate(a.runs):
        problem = run_reference_problem(ref, ledger.runs, ledger.failed_runs)
        if problem:
            found.append(Problem(report.path, *_where(report, i, "runs", j), problem))
    if found or any(ref in ledger.failed_runs for ref in a.runs):
        return found
    runs = [ledger.runs[ref] for ref in a.runs]
    if len(set(a.runs)) != len(a.runs):
        twice = sorted({r for r in a.runs if a.runs.count(r) > 1})
        return [Problem(report.path, *_where(report, i, "runs"), f"lists {', '.join(twice)} twice; one run per cell")]
    benchmarks = sorted({r.meta.benchmark for r in runs})
    if len(benchmarks) > 1:
        message = f"mixes benchmarks {', '.join(map(repr, benchmarks))}; a grid compares runs of one benchmark"
        return [Problem(report.path, *_where(report, i, "runs"), message)]
    for run in runs:
        if a.metric not in run.meta.metrics and a.metric not in run.meta.rates:
            message = f"{a.metric!r} is neither a metric nor a rate of run {run.id!r}"
            found.append(Problem(report.path, *_where(report, i, "metric"), message))
        elif (problem := condition_problem(run, run.id, {str(k): v for k, v in a.at.items()})) is not None:
            found.append(Problem(report.path, *_where(report, i, "at"), problem))
    return found or _level_problems(report, i, a, runs)


def _level_problems(report: Report, i: int, a: Attribution, runs: Sequence[Run]) -> list[Problem]:
    """Two levels per factor, and every combination of levels exactly once."""
    found = []
    table = {run.id: _levels_of(run, a) for run in runs}
    for f, (name, key) in enumerate(a.factors.items()):
        seen = sorted({levels[f] for levels in table.values()})
        if len(seen) != 2:
            what = "does not vary" if len(seen) == 1 else f"has {len(seen)} levels"
            message = f"{key} {what} across the grid's runs ({', '.join(seen)}); a factor has exactly two levels"
            found.append(Problem(report.path, *_where(report, i, "factors", name), message))
    if found:
        return found
    cells: dict[tuple[str, ...], str] = {}
    for run_id, levels in table.items():
        if levels in cells:
            combo = _shown(a, levels)
            message = f"{cells[levels]!r} and {run_id!r} are the same cell ({combo}); each combination once"
            found.append(Problem(report.path, *_where(report, i, "runs"), message))
        cells.setdefault(levels, run_id)
    values = [sorted({levels[f] for levels in table.values()}) for f in range(len(a.factors))]
    for missing in itertools.product(*values):
        if missing not in cells:
            message = f"no run for {_shown(a, missing)}; measure that cell and list it under runs"
            found.append(Problem(report.path, *_where(report, i, "runs"), message))
    return found


def _levels_of(run: Run, a: Attribution) -> tuple[str, ...]:
    env = environment(run)
    return tuple(str(env.get(key, "(absent)")) for key in a.factors.values())


def _shown(a: Attribution, levels: Sequence[str]) -> str:
    return ", ".join(f"{name}={level}" for name, level in zip(a.factors, levels, strict=True))


# ---- the fit ----------------------------------------------------------------------------------


def attribute_all(ledger: Ledger, settings: Settings) -> list[Grid]:
    """Every attribution of every report, judged (the ledger must have been checked)."""
    return [attribute(ledger, r.slug, a, settings) for r in ledger.reports for a in r.meta.attributions]


def attribute(ledger: Ledger, report: str, a: Attribution, settings: Settings) -> Grid:
    """The grid's effects, their verdicts, and the attribution's verdict (a checked grid)."""
    runs = [ledger.runs[ref] for ref in a.runs]
    sides = [side(run, a.metric, a.at, settings.confidence) for run in runs]
    short = [s.run for s in sides if s.reported or s.n < 2]
    levels = [_levels_of(run, a) for run in runs]
    cells = [(run.id, lv, () if s.reported else s.values) for run, lv, s in zip(runs, levels, sides, strict=True)]
    noise = settings.noise if settings.noise is not None else max((s.cv or 0.0 for s in sides), default=0.0)
    gain = direction_of(runs[0], a.metric, None) or 1  # a metric without `better`: higher is the gain
    return fit_grid(a, report, cells, noise, gain, settings, short)


def fit_grid(
    a: Attribution,
    report: str,
    cells: Sequence[tuple[str, tuple[str, ...], tuple[float, ...]]],
    noise: float,
    gain: int,
    settings: Settings,
    short: Sequence[str] = (),
) -> Grid:
    """The grid judged from its cells: (run id, each factor's level, per-trial values), the
    first cell being the base; `gain` is +1 when higher is better, -1 when lower is."""
    factors = tuple(a.factors)
    base = cells[0][1]
    levels = {f: (base[k], next(lv[k] for _, lv, _ in cells if lv[k] != base[k])) for k, f in enumerate(factors)}
    found = tuple(_cell(run, lv, values, settings.confidence) for run, lv, values in cells)
    grid = Grid(a, report, factors, levels, found, (), "no trial data", None, "", confidence=settings.confidence)
    if short:
        return replace(grid, reason=f"fewer than two trials in {', '.join(short)}: no interval can be fitted")
    if any(v <= 0 for c in found for v in c.values):
        return replace(grid, reason="a value is zero or negative: ratios need positive values")
    band = band_of(noise, settings.min_effect)
    effects, df, sd_log = _fit(found, base, factors, settings, band, gain, a.credits)
    grid = replace(grid, effects=tuple(effects), noise=noise, band=band, df=df)
    return _judged(grid, gain, sd_log)


def _cell(run: str, levels: tuple[str, ...], values: tuple[float, ...], confidence: float) -> Cell:
    if len(values) < 2:
        return Cell(run, levels, values, values[0] if values else None, None, None)
    low, high, _ = stats.mean_interval(values, confidence)
    return Cell(run, levels, values, sum(values) / len(values), low, high)


def _fit(
    cells: Sequence[Cell],
    base: Sequence[str],
    factors: Sequence[str],
    settings: Settings,
    band: float,
    gain: int,
    credits: str | None,
) -> tuple[list[Effect], int, float]:
    import numpy as np
    from statsmodels.regression.linear_model import OLS  # imported only when a report has a grid (~0.8 s)

    terms = [combo for r in range(1, len(factors) + 1) for combo in itertools.combinations(range(len(factors)), r)]
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
        effects.append(Effect(names, ratio, bounds, tbounds, verdict))
    return effects, int(fit.df_resid), float(math.sqrt(fit.scale))


# ---- the attribution's verdict -----------------------------------------------------------------


def _judged(grid: Grid, gain: int, sd_log: float) -> Grid:
    """In order: interacts, supported, misattributed, inconclusive (with the trials needed)."""
    mains = {e.factors[0]: e for e in grid.effects if len(e.factors) == 1}
    real_gains = sorted(
        (e for e in mains.values() if e.verdict == "supported" and (e.ratio - 1) * gain > 0),
        key=lambda e: -e.size,
    )
    earned = real_gains[0].factors[0] if real_gains else None
    for inter in grid.effects:
        if (
            len(inter.factors) > 1
            and inter.verdict == "supported"
            and all(inter.size > mains[f].size for f in inter.factors)
        ):
            reason = (
                f"the interaction {inter.name} ({_pct(inter.ratio)}) is larger than the main effects of "
                f"{' and '.join(inter.factors)}: their gains cannot be credited separately"
            )
            return replace(grid, verdict="interacts", earned=earned, reason=reason)
    credited = grid.attribution.credits
    if credited is None:
        if earned is not None:
            reason = f"no factor is credited; {earned} has the largest supported main effect in the gain's direction"
            return replace(grid, verdict="supported", earned=earned, reason=reason)
        return _inconclusive(grid, None, sd_log)
    mine = mains[credited]
    larger = [e for e in grid.effects if e.factors != (credited,) and e.size >= mine.size]
    if mine.verdict == "supported" and not larger:
        reason = f"the credited factor, {credited}, has the largest effect in the grid, and it is supported"
        return replace(grid, verdict="supported", earned=credited, reason=reason)
    if earned is not None and earned != credited and mains[earned].size > mine.size:
        reason = (
            f"the publisher credits {credited}, whose effect is smaller: {_pct(mine.ratio)} "
            f"[{_pct(mine.ci[0])}, {_pct(mine.ci[1])}] ({mine.verdict}), against {_pct(mains[earned].ratio)} "
            f"for {earned}"
        )
        return replace(grid, verdict="misattributed", earned=earned, reason=reason)
    return _inconclusive(grid, credited, sd_log, earned)


def _inconclusive(grid: Grid, credited: str | None, sd_log: float, earned: str | None = None) -> Grid:
    per_group = stats.trials_needed(sd_log, max(grid.band or 0.0, 0.001), grid.confidence)
    k = len(grid.factors)
    needed = max(2, math.ceil(per_group / 2 ** (k - 1)))
    what = f"the effect of {credited}" if credited else "any factor's effect"
    reason = f"the intervals are too wide to tell {what} from the others"
    return replace(grid, verdict="inconclusive", earned=earned, reason=reason, trials_needed=needed)


def _pct(ratio: float) -> str:
    return change(ratio)
