"""Numbers as the pages and the CLI write them: signed changes, never a negative zero ("−0.0%"),
and confidence levels, one way everywhere."""

from __future__ import annotations


def signed(value: float, places: int = 1, unit: str = "%") -> str:
    """`value` with its sign and `places` decimals; a value that would round to zero keeps enough
    significant digits to show its sign (-0.0003 -> '-0.0003%'), and zero itself is '0.0%'."""
    shown = f"{value:+.{places}f}"
    if float(shown) != 0:
        return shown + unit
    if value == 0:
        return f"{0:.{places}f}{unit}"
    return f"{value:+.1g}{unit}" if "e" not in f"{value:+.1g}" else f"{value:+.{places}e}{unit}"


def change(ratio: float, places: int = 1) -> str:
    """A ratio as a signed percent change: 1.077 -> '+7.7%', 0.9997 -> '-0.03%'."""
    return signed((ratio - 1) * 100, places)


def level(confidence: float) -> str:
    """A confidence level, for every page, chart and CLI line that names one: 0.95 -> '95%',
    1 - 0.05 / 4 -> '98.75%', 1 - 0.05 / 3 -> '98.33%'. Four significant digits, more where four
    would round a level below 1 up to '100%'."""
    digits = 4
    while (shown := f"{confidence * 100:.{digits}g}") == "100" and confidence < 1 and digits < 15:
        digits += 1
    return shown + "%"
