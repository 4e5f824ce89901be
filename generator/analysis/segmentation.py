"""Where a series of runs changes level: an exact penalised segmentation of its log means.

The search is PELT (Killick, Fearnhead and Eckley, "Optimal detection of changepoints with a
linear computational cost", JASA 2012) as `ruptures` implements it, with `jump=1` and
`min_size=1`, so every boundary is considered and the optimum is exact. Its cost is a
weighted Gaussian cost on the log of each point's mean: the weighted sum of squares about the
segment's weighted mean, with weight 1 / (run-to-run variance + the point's own variance of
its mean). That is twice the negative log-likelihood of a segment of constant level with known
variances, so a penalty in the same units reads as a likelihood-ratio threshold.

- The run-to-run variance is estimated from the series itself, robustly: the Qn scale
  (Rousseeuw and Croux 1993, statsmodels' `qn_scale`) of the successive differences of the
  log means, squared and halved for the two points in each difference, less the typical
  point's own variance. A level shift moves one difference of many, so it barely moves the
  estimate. It is never taken below FLOOR_SD (on the log scale), so identical points are one
  segment rather than a division by zero.
- A point of one trial has no variance of its own: it is weighted by the run-to-run variance
  alone, so a series of such points still segments.
- A lone point that leaves the level of its neighbours and comes back is an outlier candidate,
  never two changes: it is set aside and the rest is segmented again.

What it cannot know: a change smaller than the run-to-run noise over the runs on each side of
it is not found; a slow drift of small steps may be found as one step or none (the latest
segment is therefore also compared with the best earlier one, in `changes`); and a series'
noise that itself changes over time is taken as one level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import ruptures
from ruptures.base import BaseCost
from statsmodels.robust.scale import qn_scale

PENALTY_PER_LOG_POINT = (
    4.0  # a boundary must lower the cost by 4 ln(points): twice BIC's 2 ln(m) for its two parameters
)
MEDIAN_TO_SD = 0.6744897501960817  # the median of |Z| for a standard normal Z
FLOOR_SD = 0.001  # the least run-to-run noise assumed: 0.1% on the log scale


def penalty(points: int) -> float:
    """The cost a boundary must save to be kept, for a series of `points` points: PENALTY_PER_LOG_POINT x ln(points)."""
    return PENALTY_PER_LOG_POINT * math.log(max(points, 2))


@dataclass(frozen=True)
class Segmentation:
    """Boundaries are indices into the points given: a boundary b starts a new level at point b.
    `outliers` are the points set aside as one-point excursions; `between` is the run-to-run
    variance estimated on the log scale."""

    boundaries: tuple[int, ...]
    outliers: tuple[int, ...]
    between: float


class WeightedLogCost(BaseCost):  # type: ignore[misc]
    """The weighted Gaussian cost of ruptures' interface: signal columns are (log mean, weight)."""

    model = "weighted-log-gaussian"
    min_size = 1

    def fit(self, signal: np.ndarray) -> WeightedLogCost:
        """Cumulative sums of w, w y and w y^2, so each segment's cost is O(1)."""
        self.signal = signal
        y, w = signal[:, 0], signal[:, 1]
        zero = np.zeros(1)
        self._w = np.concatenate([zero, np.cumsum(w)])
        self._wy = np.concatenate([zero, np.cumsum(w * y)])
        self._wyy = np.concatenate([zero, np.cumsum(w * y * y)])
        return self

    def error(self, start: int, end: int) -> float:
        """The weighted sum of squares of points [start, end) about their weighted mean."""
        w = self._w[end] - self._w[start]
        wy = self._wy[end] - self._wy[start]
        wyy = self._wyy[end] - self._wyy[start]
        return max(0.0, float(wyy - wy * wy / w))


def between_variance(log_means: Sequence[float], own: Sequence[float]) -> float:
    """The run-to-run variance of a series on the log scale, robust to level shifts: see the module."""
    if len(log_means) < 2:
        return FLOOR_SD**2
    steps = np.diff(np.asarray(log_means, dtype=float))
    spread = float(qn_scale(steps)) if len(steps) > 1 else abs(float(steps[0])) / MEDIAN_TO_SD
    total = spread * spread / 2
    return max(total - float(np.median(np.asarray(own, dtype=float))), FLOOR_SD**2)


def weights(own: Sequence[float], between: float) -> np.ndarray:
    """Each point's weight: 1 / (run-to-run variance + its own variance of the mean)."""
    return 1.0 / (between + np.asarray(own, dtype=float))


def best_boundaries(log_means: Sequence[float], w: Sequence[float], pen: float) -> tuple[int, ...]:
    """The exact penalised optimum by PELT (jump 1, segments of one point allowed)."""
    if len(log_means) < 2:
        return ()
    signal = np.column_stack([np.asarray(log_means, dtype=float), np.asarray(w, dtype=float)])
    ends = ruptures.Pelt(custom_cost=WeightedLogCost(), min_size=1, jump=1).fit(signal).predict(pen=pen)
    return tuple(int(end) for end in ends[:-1])


def _excursion(log_means: Sequence[float], boundaries: tuple[int, ...], count: int) -> int | None:
    """The first point that is a segment of its own between two segments, and which returns
    toward where it left (the steps into it and out of it have opposite signs)."""
    edges = (0, *boundaries, count)
    for left, start, end, right in zip(edges, edges[1:], edges[2:], edges[3:], strict=False):
        if end - start != 1:
            continue
        before = float(np.mean(log_means[left:start]))
        after = float(np.mean(log_means[end:right]))
        here = log_means[start]
        if (here - before) * (after - here) < 0:
            return start
    return None


def segment(log_means: Sequence[float], own: Sequence[float]) -> Segmentation:
    """Segment a series: estimate its run-to-run variance, search, set aside one-point
    excursions and search the rest again, until none is left."""
    between = between_variance(log_means, own)
    kept = list(range(len(log_means)))
    outliers: list[int] = []
    while True:
        y = [log_means[i] for i in kept]
        w = weights([own[i] for i in kept], between)
        found = best_boundaries(y, list(w), penalty(len(log_means)))
        lone = _excursion(y, found, len(y))
        if lone is None:
            return Segmentation(tuple(kept[b] for b in found), tuple(sorted(outliers)), between)
        outliers.append(kept.pop(lone))
