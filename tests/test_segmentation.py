"""History's change detection: the exact search against brute force, and seeded simulations
whose error rates are bounded by a Wilson interval (95%) on the side the claim needs.

Reproduce the tables of the closing note with `python -m pytest tests/test_segmentation.py -v`;
each simulation's docstring gives what it measured."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from generator.analysis import changes, segmentation

MIN_EFFECT = 0.01
CONFIDENCE = 0.95


def simulated(
    rng: np.random.Generator, levels: Sequence[float], *, cv: float, trials: int, between: float
) -> tuple[list[float], list[float]]:
    """A series of runs: each run's level moves by the run-to-run noise (log-normal, SD `between`),
    its trials by the within-run noise (SD `cv`); a point is the log of the run's mean and the
    variance of that log mean (delta method: (SD / mean)^2 / n, unknown for one trial)."""
    log_means, own = [], []
    for level in levels:
        run = level + rng.normal(0, between)
        values = np.exp(run + rng.normal(0, cv, trials))
        mean = float(values.mean())
        log_means.append(math.log(mean))
        own.append(0.0 if trials == 1 else (float(values.std(ddof=1)) / mean) ** 2 / trials)
    return log_means, own


def analysed(log_means: list[float], own: list[float]) -> tuple[list[int], list[changes.Judged]]:
    """Segment, then judge on the points kept (outlier candidates set aside), with higher better;
    return the kept points' indices and the judgements (their before/after index the kept list)."""
    found = segmentation.segment(log_means, own)
    kept = [i for i in range(len(log_means)) if i not in found.outliers]
    w = segmentation.weights([own[i] for i in kept], found.between)
    boundaries = [kept.index(b) for b in found.boundaries]
    judged = changes.judge_all(
        [log_means[i] for i in kept],
        list(w),
        boundaries,
        direction=1,
        min_effect=MIN_EFFECT,
        confidence=CONFIDENCE,
    )
    return kept, judged


def at_most(hits: int, total: int, bound: float) -> None:
    """The 95% Wilson interval of hits/total lies at or below bound."""
    high = proportion_confint(hits, total, alpha=0.05, method="wilson")[1]
    assert high <= bound, f"{hits}/{total}: Wilson upper {high:.3f} > {bound}"


def at_least(hits: int, total: int, bound: float) -> None:
    """The 95% Wilson interval of hits/total lies at or above bound."""
    low = proportion_confint(hits, total, alpha=0.05, method="wilson")[0]
    assert low >= bound, f"{hits}/{total}: Wilson lower {low:.3f} < {bound}"


def brute_force(log_means: list[float], w: np.ndarray, pen: float) -> tuple[int, ...]:
    """Every set of boundaries tried; the one of least cost + pen x boundaries."""
    cost = segmentation.WeightedLogCost().fit(np.column_stack([log_means, w]))
    count = len(log_means)
    best: tuple[float, tuple[int, ...]] = (math.inf, ())
    for k in range(count):
        for chosen in itertools.combinations(range(1, count), k):
            edges = (0, *chosen, count)
            total = sum(cost.error(a, b) for a, b in itertools.pairwise(edges)) + pen * k
            best = min(best, (total, chosen))
    return best[1]


@pytest.mark.parametrize("seed", range(40))
def test_the_search_finds_the_exact_optimum_as_brute_force_does(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 11))
    levels = np.repeat(rng.normal(0, 0.1, 4), 3)[:count]
    log_means = list(levels + rng.normal(0, 0.03, count))
    own = list(rng.uniform(0, 0.0004, count))
    w = segmentation.weights(own, 0.0004)
    pen = float(rng.choice([0.5, 2.0, segmentation.penalty(count)]))
    assert segmentation.best_boundaries(log_means, list(w), pen) == brute_force(log_means, w, pen)


def test_fifty_identical_points_are_one_level_with_no_warning() -> None:
    with np.errstate(all="raise"):
        found = segmentation.segment([math.log(2179.9)] * 50, [0.0] * 50)
        _, judged = analysed([math.log(2179.9)] * 50, [0.0] * 50)
    assert (found.boundaries, found.outliers, judged) == ((), (), [])
    assert found.between == segmentation.FLOOR_SD**2


def test_a_slow_oscillation_is_not_a_staircase() -> None:
    """A sine of +-2% over 60 runs (a period of 60), as large as the run-to-run noise (2%, CV 2%
    within runs, 5 trials): at most one change is reported in 192 of 200 series (96%), never a
    step at every turn. (An oscillation several times the run-to-run noise is drawn as levels:
    the methods page says so.)"""
    rng = np.random.default_rng(3)
    levels = [0.02 * math.sin(2 * math.pi * i / 60) for i in range(60)]
    calm = 0
    for _ in range(200):
        log_means, own = simulated(rng, levels, cv=0.02, trials=5, between=0.02)
        calm += len([j for j in analysed(log_means, own)[1] if j.is_change]) <= 1
    at_least(calm, 200, 0.90)


def test_runs_of_one_trial_still_segment() -> None:
    """Series of one-trial runs (no variance of their own, weighted by the run-to-run noise
    alone) with a 20% slowdown at run 15 of 30, CV 3%: found as worse within one run of it in
    at least 90% of 200 series."""
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(200):
        log_means, own = simulated(rng, [0.0] * 15 + [math.log(0.8)] * 15, cv=0.03, trials=1, between=0.0)
        kept, judged = analysed(log_means, own)
        found += any(abs(kept[j.after] - 15) <= 1 and j.verdict == "worse" for j in judged if j.is_change)
    at_least(found, 200, 0.90)


FLAT = [
    (runs, cv, trials, times)
    for runs in (30, 100)
    for cv in (0.02, 0.05, 0.10)
    for trials in (1, 3, 10)
    for times in (1, 3)
]


@pytest.mark.parametrize(("runs", "cv", "trials", "times"), FLAT)
def test_a_flat_series_reports_a_change_in_at_most_5_percent(runs: int, cv: float, trials: int, times: int) -> None:
    """Flat series of 30 and 100 runs, CV 2-10% within runs, 1/3/10 trials, run-to-run noise
    1x and 3x the within-run noise; 400 series each. Measured: 0 to 2.5% report any change."""
    rng = np.random.default_rng(runs * 1000 + int(cv * 100) * 10 + trials + times)
    reported = 0
    for _ in range(400):
        log_means, own = simulated(rng, [0.0] * runs, cv=cv, trials=trials, between=cv * times)
        reported += any(j.is_change for j in analysed(log_means, own)[1])
    at_most(reported, 400, 0.05)


@pytest.mark.parametrize(("runs", "where"), [(30, 0.5), (30, 0.8), (100, 0.5), (100, 0.8)])
def test_a_ten_percent_step_is_found_located_and_covered(runs: int, where: float) -> None:
    """A 10% step at CV 3% (within and between runs), 5 trials a run, 300 series: found in
    96-100%, located within one run in 94-97% of those, its interval holding 1.10 in 96-99%."""
    rng = np.random.default_rng(runs + int(where * 10))
    at = int(runs * where)
    found = located = covered = 0
    for _ in range(300):
        log_means, own = simulated(rng, [0.0] * at + [math.log(1.1)] * (runs - at), cv=0.03, trials=5, between=0.03)
        kept, judged = analysed(log_means, own)
        steps = [j for j in judged if j.kind == "step" and j.is_change]
        if not steps:
            continue
        found += 1
        nearest = min(steps, key=lambda j: abs(kept[j.after] - at))
        if abs(kept[nearest.after] - at) <= 1:
            located += 1
            covered += nearest.low <= 1.1 <= nearest.high
    at_least(found, 300, 0.90)
    at_least(located, found, 0.90)
    at_least(covered, located, 0.90)


def test_a_drift_of_small_steps_is_caught_by_latest_against_best() -> None:
    """Four 3% slowdowns, one every 5 runs from run 20, in a series of 40 (CV 3%, 5 trials):
    the latest level is judged worse than the best earlier one in 100% of 300 series."""
    rng = np.random.default_rng(6)
    levels = [-min(max((i - 15) // 5, 0), 4) * math.log(1.03) for i in range(40)]
    caught = 0
    for _ in range(300):
        log_means, own = simulated(rng, levels, cv=0.03, trials=5, between=0.03)
        judged = analysed(log_means, own)[1]
        latest = max((j.after for j in judged), default=None)
        caught += any(j.after == latest and j.verdict == "worse" for j in judged)
    at_least(caught, 300, 0.80)


def test_a_one_run_excursion_that_reverts_is_not_a_change() -> None:
    """One run 30% faster in the middle of 30 (CV 3%, 5 trials): reported as a change in 0 of
    300 series; where the search gives it a level of its own, it is set aside instead."""
    rng = np.random.default_rng(7)
    levels = [0.0] * 30
    levels[15] = math.log(1.3)
    reported = 0
    for _ in range(300):
        log_means, own = simulated(rng, levels, cv=0.03, trials=5, between=0.03)
        reported += any(j.is_change for j in analysed(log_means, own)[1])
    at_most(reported, 300, 0.05)
    quiet = [0.0, 0.01, -0.01, 0.0, 0.005, -0.005, 0.0, 0.26, 0.0, 0.01, -0.01, 0.0, 0.005, -0.005, 0.0]
    assert segmentation.segment(quiet, [0.00005] * 15).outliers == (7,)


def test_a_change_reads_worse_or_better_by_the_metric_and_small_ones_within_noise() -> None:
    assert changes.verdict_of((1.08, 1.12), (1.085, 1.115), 1.10, direction=1, min_effect=0.01) == "better"
    assert changes.verdict_of((1.08, 1.12), (1.085, 1.115), 1.10, direction=-1, min_effect=0.01) == "worse"
    assert changes.verdict_of((1.002, 1.008), (1.003, 1.007), 1.005, direction=1, min_effect=0.01) == "unsettled"
    assert changes.verdict_of((0.995, 1.006), (0.996, 1.005), 1.0, direction=1, min_effect=0.01) == "within noise"
    assert changes.verdict_of((0.9, 1.1), (0.92, 1.08), 1.0, direction=1, min_effect=0.01) == "unsettled"
