"""Signed changes as the pages and the CLI write them, never a negative zero ("−0.0%")."""

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
