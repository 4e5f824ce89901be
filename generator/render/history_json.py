"""ledger/history.json: every series of the publication, its points, changes and candidates,
for machines (FORMAT.md, "History"). Fields in a fixed order, so the same publication gives the
same bytes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..analysis.history import Change, Followed
from ..analysis.series import Point
from ..format.signed import in_range

HISTORY_JSON = "ledger/history.json"


def _number(value: float | None) -> float | None:
    """JSON has no Infinity or NaN, and a figure out of range is none: written as null."""
    return value if value is not None and in_range(value) else None


def _point(p: Point) -> dict[str, Any]:
    """A point: its first run (runs that share an along-value are one point), its date, the
    mean and its interval (null for a reported figure or a point of several runs) and its trials."""
    return {
        "run": p.runs[0],
        "date": p.date,
        "mean": _number(p.mean),
        "low": _number(p.low),
        "high": _number(p.high),
        "n": p.n,
    }


def _change(c: Change) -> dict[str, Any]:
    return {
        "before": c.before,
        "after": c.after,
        "ratio": _number(c.ratio),
        "low": _number(c.low),
        "high": _number(c.high),
        "verdict": c.verdict,
    }


def history_rows(followed: Sequence[Followed]) -> list[dict[str, Any]]:
    """The series of history.json, in the order history gives them (benchmark, metric,
    condition, environment)."""
    return [
        {
            "benchmark": f.series.benchmark,
            "metric": f.series.metric,
            "condition": dict(f.series.condition),
            "environment": dict(f.series.environment),
            "points": [_point(p) for p in f.series.points],
            "changes": [_change(c) for c in f.changes],
            "candidates": [_change(c) for c in f.candidates],
        }
        for f in followed
    ]


def history_json(followed: Sequence[Followed]) -> bytes:
    """ledger/history.json's bytes: `{"series": [...]}`, one space of indent, UTF-8."""
    data = {"series": history_rows(followed)}
    return (json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode()
