"""Axes of the site's charts: the domain around one value and round ticks no finer than the
digits the values are written to (no label reads 2,179.9999999999986)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from ..format.signed import in_range

PAD_STEPS = 2.5  # a panel of one value spans it ±2.5 steps of its last digit: ticks fall on that digit
MAX_STEP_DIGITS = 3  # ... a step of at most the value's third significant digit


def constant_step(value: float) -> float:
    """The tick step of an axis that draws one value: its last significant digit as written
    (2,180 -> 10, 0.7 -> 0.1, 0 -> 1), at most its third (1,367 -> 10, not 1), so no label
    carries a digit the value does not."""
    if not math.isfinite(value):
        raise ValueError(f"an axis cannot be drawn around {value}")
    exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
    last = 10.0 ** int(exponent)
    if value == 0:
        return last
    return max(last, 10.0 ** (math.floor(math.log10(abs(value))) - (MAX_STEP_DIGITS - 1)))


def constant_span(value: float) -> tuple[float, float]:
    """The axis domain around one value: ±PAD_STEPS steps (Vega's six ticks of a 220 px axis
    then fall on the step), shifted to stop at 0 rather than cross it (a count of 0 errors
    spans 0 to 5, never -2)."""
    step = constant_step(value)
    low, high = value - PAD_STEPS * step, value + PAD_STEPS * step
    if value >= 0 > low:
        return 0.0, 2 * PAD_STEPS * step
    if value <= 0 < high:
        return -2 * PAD_STEPS * step, 0.0
    return low, high


def sweep_domain(rows: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The y extent of a sweep: every mean and interval end, or `constant_span` of the one value
    they all are."""
    ends = [v for r in rows for v in (r.get("low"), r.get("mean"), r.get("high")) if isinstance(v, float | int)]
    ends = [float(v) for v in ends if in_range(v)]  # a bound out of range is drawn as missing
    if not ends:
        return 0.0, 1.0
    low, high = min(ends), max(ends)
    if low == high:
        span = constant_span(low)
        return span if span[0] < span[1] and all(math.isfinite(v) for v in span) else (low, high)
    return low, high


MAX_TICKS = 7


def resolution(values: Iterable[float]) -> float:
    """The finest digit the values are written to (1,000 and 2,500 -> 100; 0.7 -> 0.1)."""
    exponents = [int(Decimal(repr(float(v))).normalize().as_tuple().exponent) for v in values if math.isfinite(v)]
    return 10.0 ** min(exponents) if exponents else 1.0


def round_ticks(low: float, high: float, finest: float) -> list[float]:
    """At most MAX_TICKS ticks from a multiple at or below `low` to one at or above `high`, a step
    of 1, 2 or 5 times a power of ten and never finer than `finest`: no label carries a digit the
    values do not."""
    span = high - low
    step = max(finest, 10.0 ** (math.floor(math.log10(span)) - 1)) if span > 0 else finest
    power = 10.0 ** math.floor(math.log10(step))
    for k in itertools.count():
        step = (1, 2, 5)[k % 3] * power * 10 ** (k // 3)
        if step >= finest * (1 - 1e-9) and math.ceil(high / step - 1e-9) - math.floor(low / step + 1e-9) < MAX_TICKS:
            break
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    places = max(0, -math.floor(math.log10(step)))
    return [round(k * step, places) for k in range(first, last + 1)]


def sweep_axis(rows: Sequence[Mapping[str, Any]]) -> tuple[tuple[float, float], list[float]]:
    """A sweep's y domain and ticks: round ticks around every mean and interval end, no finer
    than the means are written to."""
    low, high = sweep_domain(rows)
    means = [float(r["mean"]) for r in rows if isinstance(r.get("mean"), float | int)]
    ticks = round_ticks(low, high, resolution(means)) if in_range(low) and in_range(high) else [low, high]
    return (ticks[0], ticks[-1]), ticks
