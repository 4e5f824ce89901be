"""Any two runs side by side, without a claim: what differs in their environment, and the
ratio B / A with its interval for every figure both have at every condition both measured.
`benchledger diff` prints it; the compare page computes the same in the browser from each
run's `pair_data()` (the per-trial values), with t quantiles from `t_table()`."""

from __future__ import annotations

import json
from typing import Any

from ..format.conditions import condition_label
from ..format.keys import as_yaml
from ..ledger.records import Run
from ..ledger.references import shared_conditions
from . import ratios, stats
from .comparison import MISSING, confounds, direction_of, environment, side

T_STEPS = 2000  # t quantiles at 1/df = 0, 1/2000, ..., 1: linear in 1/df between them


def side_by_side(a: Run, b: Run, confidence: float = stats.CONFIDENCE) -> dict[str, Any]:
    """The differences and figures of `diff`, as plain data."""
    differences = [{"key": c.key, "baseline": c.baseline, "candidate": c.candidate} for c in confounds(a, b, [])]
    names = [m for m in a.figures if m in b.figures]
    figures = []
    for at in shared_conditions(a, b):
        for name in names:
            sa, sb = side(a, name, at), side(b, name, at)
            row: dict[str, Any] = {"metric": name, "at": at, "n_baseline": sa.n, "n_candidate": sb.n}
            row |= {"reported_baseline": a.reported, "reported_candidate": b.reported}
            row |= {"ratio": None, "ci_low": None, "ci_high": None, "point_ratio": None}
            if a.reported or b.reported:  # a reported figure is one number, not trials: no interval
                figures.append(row | {"point_ratio": _point_ratio(sa.values, sb.values)})
                continue
            try:
                ratio = ratios.ratio_interval(sa.values, sb.values)
            except ValueError:
                pass  # fewer than two trials a side, or a zero: no ratio interval
            else:
                low, high = ratio.bounds(confidence)
                row |= {"ratio": ratio.ratio, "ci_low": low, "ci_high": high}
            figures.append(row)
    return {"baseline": a.id, "candidate": b.id, "differences": differences, "figures": figures}


def _point_ratio(a: tuple[float, ...], b: tuple[float, ...]) -> float | None:
    """B / A of two single figures (a reported run has one per condition): a ratio with no
    spread, which the page and `diff` mark as such."""
    if len(a) == 1 and len(b) == 1 and a[0] > 0 and b[0] >= 0:
        return b[0] / a[0]
    return None


def n_shown(n: int, reported: bool) -> str:
    """A side's count of trials, or that its figure was reported without trials (compare.js's
    count(), render.text.n_pair)."""
    return "not reported" if reported else str(n)


def no_interval(reported_a: bool, reported_b: bool) -> str:
    """Why a figure has no interval (compare.js's noInterval())."""
    if not (reported_a or reported_b):
        return "no interval"
    which = "A and B are" if reported_a and reported_b else "A is" if reported_a else "B is"
    return f"no interval: {which} reported, not trials"


def pair_data(run: Run) -> dict[str, Any]:
    """What the compare page needs of one run: its environment as shown by `diff` (dotted key
    -> text) and the per-trial values of every figure at every condition (exclusions applied)."""
    figures = []
    better = {name: {1: "higher", -1: "lower"}.get(direction_of(run, name, None)) for name in run.figures}
    for raw in run.results.condition_values():
        at = run.results.mapping(raw)
        label = condition_label(at.items())
        for name in run.figures:
            values = list(side(run, name, at).values)
            figures.append({"name": name, "at": list(raw), "label": label, "values": values, "better": better[name]})
    environment_of = sorted(environment(run).items())
    return {
        "id": run.id,
        "title": run.meta.title,
        "benchmark": run.meta.benchmark,
        "conditions": list(run.results.conditions),
        "reported": run.reported,  # one figure a source gave, not trials: no n, no interval
        "environment": {key: as_yaml(value) for key, value in environment_of},
        "equal_as": {key: _equal_as(value) for key, value in environment_of},
        "absent": MISSING,
        "figures": figures,
    }


def _equal_as(value: object) -> str:
    """A key under which two values are equal exactly when `confounds` finds them equal
    (Python's ==: 8 equals 8.0 and True equals 1)."""
    if isinstance(value, bool | int | float) and not (isinstance(value, float) and value != value):
        return f"n:{float(value)!r}"
    return "j:" + json.dumps(value, sort_keys=True, default=str)


def t_table(confidence: float) -> list[float]:
    """Two-sided t quantiles at `confidence` for 1/df = k / T_STEPS, k = 0..T_STEPS (df = inf .. 1)."""
    return [
        stats.t_quantile(confidence, T_STEPS / k) if k else stats.t_quantile(confidence, float("inf"))
        for k in range(T_STEPS + 1)
    ]
