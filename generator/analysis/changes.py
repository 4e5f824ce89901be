"""What a boundary of a series is: a change, judged segment against segment on run means.

Each boundary found by `segmentation` is judged by the two segments around it: the ratio of
their weighted mean levels (after / before, on the log scale), with a t interval whose
variance is each segment's 1 / (sum of weights), the weights of the segmentation (run-to-run
variance plus each point's own variance of its mean). So the noise between runs that the
series showed is part of every interval: pooling the trials of many runs would ignore it.

The change verdicts (apart from claim verdicts):
- `worse` or `better` (by the metric's direction) when the two-sided interval excludes 1 and
  the ratio is at least `min_effect` away from 1;
- `within noise` when the interval holds 1 and the TOST interval (level 1 - 2 alpha) lies
  inside 1 +- min_effect;
- `unsettled` otherwise.

A boundary where one straight line through both segments fits as well as two levels is a
stretch of a slope (a slow drift or oscillation), not a change: it stays a candidate. The
latest segment is also judged against the best earlier segment, so a drift of steps each too
small to be a change is still caught when it adds up.

What it cannot know: the interval assumes runs are independent around their segment's level
(runs of one evening that share a warm machine are not), and a boundary's position is
estimated, so the interval is somewhat too narrow for a change the data barely shows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from scipy import special  # the t quantile is special.stdtrit, which scipy.stats' t.ppf calls (0.3 s less to import)

ChangeVerdict = Literal["worse", "better", "within noise", "unsettled"]
CHANGE_VERDICTS: tuple[ChangeVerdict, ...] = get_args(ChangeVerdict)
Kind = Literal["step", "latest vs best"]


@dataclass(frozen=True)
class Judged:
    """One boundary judged. `before` and `after` are point indices: the last point of the
    earlier segment and the first point of the later one."""

    before: int
    after: int
    ratio: float
    low: float
    high: float
    verdict: ChangeVerdict
    kind: Kind = "step"
    sloped: bool = False  # a line through both segments fits them as well as two levels do

    @property
    def is_change(self) -> bool:
        """Worse or better, and a level shift rather than a stretch of a slope."""
        return self.verdict in ("worse", "better") and not self.sloped


def verdict_of(
    ci: tuple[float, float], tost: tuple[float, float], ratio: float, *, direction: int, min_effect: float
) -> ChangeVerdict:
    """The change verdict of a ratio after / before; direction +1 when higher is better, -1 when lower is."""
    low, high = ci
    if (low > 1 or high < 1) and abs(ratio - 1) >= min_effect:
        return "better" if (ratio > 1) == (direction > 0) else "worse"
    if low <= 1 <= high and tost[0] >= 1 - min_effect and tost[1] <= 1 + min_effect:
        return "within noise"
    return "unsettled"


def judge_segments(
    log_means: Sequence[float],
    w: Sequence[float],
    before: range,
    after: range,
    *,
    direction: int,
    min_effect: float,
    confidence: float,
    df: int,
    kind: Kind = "step",
) -> Judged:
    """Judge the segment `after` against the segment `before` (ranges of point indices)."""
    y, weight = np.asarray(log_means, dtype=float), np.asarray(w, dtype=float)
    wa, wb = weight[before.start : before.stop], weight[after.start : after.stop]
    ya, yb = y[before.start : before.stop], y[after.start : after.stop]
    difference = float(np.dot(wb, yb) / wb.sum() - np.dot(wa, ya) / wa.sum())
    se = math.sqrt(1 / float(wa.sum()) + 1 / float(wb.sum()))
    two_sided = float(special.stdtrit(max(df, 1), 1 - (1 - confidence) / 2))
    one_sided = float(special.stdtrit(max(df, 1), confidence))
    ci = (math.exp(difference - two_sided * se), math.exp(difference + two_sided * se))
    tost = (math.exp(difference - one_sided * se), math.exp(difference + one_sided * se))
    ratio = math.exp(difference)
    verdict = verdict_of(ci, tost, ratio, direction=direction, min_effect=min_effect)
    sloped = kind == "step" and along_a_slope(y, weight, range(before.start, after.stop), after.start)
    return Judged(before.stop - 1, after.start, ratio, ci[0], ci[1], verdict, kind, sloped)


def along_a_slope(y: np.ndarray, w: np.ndarray, span: range, at: int) -> bool:
    """Whether one weighted straight line through the points of `span` fits them at least as
    well as two levels split at `at` (both have two parameters): then the boundary is a
    stretch of a slow drift or oscillation, not a step."""
    x = np.arange(span.start, span.stop, dtype=float)
    ys, ws = y[span.start : span.stop], w[span.start : span.stop]
    if len(ys) < 3:
        return False
    line = np.polyfit(x, ys, 1, w=np.sqrt(ws))
    line_cost = float(np.sum(ws * (ys - np.polyval(line, x)) ** 2))
    step_cost = sum(
        float(np.sum(ws[part] * (ys[part] - np.average(ys[part], weights=ws[part])) ** 2))
        for part in (slice(0, at - span.start), slice(at - span.start, None))
    )
    return line_cost <= step_cost


def judge_all(
    log_means: Sequence[float],
    w: Sequence[float],
    boundaries: Sequence[int],
    *,
    direction: int,
    min_effect: float,
    confidence: float,
) -> list[Judged]:
    """Every boundary judged between its neighbouring segments, then the latest segment
    against the best earlier one when that is not its neighbour."""
    edges = [0, *boundaries, len(log_means)]
    segments = [range(a, b) for a, b in itertools.pairwise(edges)]
    df = len(log_means) - len(segments)
    judged = [
        judge_segments(log_means, w, a, b, direction=direction, min_effect=min_effect, confidence=confidence, df=df)
        for a, b in itertools.pairwise(segments)
    ]
    if len(segments) >= 2:
        level = [
            float(np.average(np.asarray(log_means)[s.start : s.stop], weights=np.asarray(w)[s.start : s.stop]))
            for s in segments[:-1]
        ]
        chosen = int(np.argmax(level) if direction > 0 else np.argmin(level))
        if chosen == len(segments) - 2 and judged[-1].is_change:
            return judged  # the best earlier level is the latest's neighbour, already judged a change
        judged.append(
            judge_segments(
                log_means,
                w,
                segments[chosen],
                segments[-1],
                direction=direction,
                min_effect=min_effect,
                confidence=confidence,
                df=df,
                kind="latest vs best",
            )
        )
    return judged
