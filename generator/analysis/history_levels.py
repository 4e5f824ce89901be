"""The level of each segment of a followed series, for drawing it as steps: the points between
two boundaries (each judged boundary, change or candidate, starts a segment at its `after`
run), less the outliers and the points left out of the segmentation (incomplete runs), at the
weighted mean of their log means with the segmentation's own weights."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .history import Followed
from .segmentation import weights
from .series import log_points


@dataclass(frozen=True)
class Level:
    points: tuple[int, ...]  # indices into the series' points, in order
    level: float  # exp of the weighted mean of the points' log means


def levels(followed: Followed) -> tuple[Level, ...]:
    """Every segment of a segmented series, in order; none for a series not segmented."""
    if followed.between is None:
        return ()
    series = followed.series
    kept, log_means, own = log_points(series)
    starts = {c.after for c in (*followed.changes, *followed.candidates) if c.kind == "step"}
    outliers = set(followed.outliers)
    w = weights(own, followed.between)
    parts: list[list[tuple[int, float, float]]] = []
    for index, y, weight in zip(kept, log_means, w, strict=True):
        first = series.points[index].runs[0]
        if first in outliers:
            continue
        if not parts or first in starts:
            parts.append([])
        parts[-1].append((index, y, float(weight)))
    return tuple(
        Level(tuple(i for i, _, _ in part), math.exp(sum(y * v for _, y, v in part) / sum(v for _, _, v in part)))
        for part in parts
    )
