"""Numbers as the pages and the CLI write them: signed changes, never a negative zero ("−0.0%"),
and confidence levels, one way everywhere."""

from __future__ import annotations

import math

# A figure or ratio past 1e300 in magnitude, or nearer 0 than 1e-300 (and not 0), is "out of
# range": results.csv's values are 0 or magnitudes from 1e-100 to 1e100, so only an interval over
# trials that spread across hundreds of orders of magnitude gets there (stats.exp saturates near
# the floats' ends, 1.8e308 and 5.6e-309). Pages write it "out of range", charts draw it as
# missing, JSON writes null.
RANGE_HIGH, RANGE_LOW = 1e300, 1e-300
OUT_OF_RANGE = "out of range"


def in_range(value: float) -> bool:
    """A figure, ratio or bound the pages print: finite, and 0 or of a magnitude strictly
    between 1e-300 and 1e300."""
    return math.isfinite(value) and (value == 0 or RANGE_LOW < abs(value) < RANGE_HIGH)


def signed(value: float, places: int = 1, unit: str = "%") -> str:
    """`value` with its sign and `places` decimals; a value that would round to zero keeps enough
    significant digits to show its sign (-0.0003 -> '-0.0003%'), and zero itself is '0.0%'.
    A value that is not finite is 'out of range'; one past 1e15, whose digits in fixed form
    would run on past what a float holds, is written in exponent form ('+1.0e+201%')."""
    if not math.isfinite(value):
        return OUT_OF_RANGE
    if abs(value) >= 1e15:
        return f"{value:+.{places}e}{unit}"
    shown = f"{value:+.{places}f}"
    if float(shown) != 0:
        return shown + unit
    if value == 0:
        return f"{0:.{places}f}{unit}"
    return f"{value:+.1g}{unit}" if "e" not in f"{value:+.1g}" else f"{value:+.{places}e}{unit}"


def change(ratio: float, places: int = 1) -> str:
    """A ratio as a signed percent change: 1.077 -> '+7.7%', 0.9997 -> '-0.03%'; a ratio past
    1e300 or below 1e-300 (`in_range`) -> 'out of range'."""
    if not in_range(ratio):
        return OUT_OF_RANGE
    return signed((ratio - 1) * 100, places)


def level(confidence: float) -> str:
    """A confidence level, for every page, chart and CLI line that names one: 0.95 -> '95%',
    1 - 0.05 / 4 -> '98.75%', 1 - 0.05 / 3 -> '98.33%'. Four significant digits, more where four
    would round a level below 1 up to '100%'."""
    digits = 4
    while (shown := f"{confidence * 100:.{digits}g}") == "100" and confidence < 1 and digits < 15:
        digits += 1
    return shown + "%"


def times(ratio: float) -> str:
    """A ratio as a multiple, labelled as one: three decimals below 10, so a change of 1% near 1
    shows (2.386 -> '2.386x', 1.0063 -> '1.006x'); from 10 on three significant digits ('12.3x'),
    from 999.5 on whole numbers ('1,234x'), below 0.001 three significant digits; outside
    `in_range`, 'out of range'."""
    if not in_range(ratio):
        return OUT_OF_RANGE
    size = abs(ratio)
    if size >= 999.5:
        return f"{ratio:,.0f}x"
    if size >= 10 or 0 < size < 0.001:
        return f"{ratio:#.3g}".rstrip(".") + "x"
    return f"{ratio:.3f}x"


def points(difference: float) -> str:
    """A difference of two proportions in signed percentage points: 0.39 -> '+39.0 pp'."""
    return signed(difference * 100, unit=" pp")
