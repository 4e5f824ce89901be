"""Load conditions (the columns that index results.csv): how they sort, match and read."""

from __future__ import annotations

import math
from collections.abc import Iterable


def condition_label(pairs: Iterable[tuple[str, object]]) -> str:
    """'concurrency=8, context=4096', or 'all' for a run without conditions."""
    return ", ".join(f"{name}={value}" for name, value in pairs) or "all"


def condition_key(value: str) -> tuple[int, float, str]:
    """Sort numbers numerically and labels after them, alphabetically."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def same_condition(written: object, value: str) -> bool:
    """Does an `at:` value (from YAML) select a CSV condition value? 8 matches '8' and '8.0'."""
    if isinstance(written, bool) or written is None:
        return str(written).lower() == value.lower()
    try:
        return float(str(written)) == float(value)
    except ValueError:
        return str(written) == value


def condition_value(text: str) -> int | float | str:
    """A condition value as written in results.csv, read as a number when it is one."""
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        return value if math.isfinite(value) else text
    return text
