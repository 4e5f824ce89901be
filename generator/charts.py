"""Altair chart builders. Each returns an `alt.Chart`; none saves anything.

Field names are fixed (condition, trial, value, ...): publisher strings only
ever appear as data values and titles, which Vega draws as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

HEIGHT = 220
FACET_WIDTH = 110
BLUE, GREY, ORANGE = "#1f77b4", "#7f7f7f", "#d95f02"


@dataclass(frozen=True)
class Point:
    condition: str
    trial: int | None
    value: float


@dataclass(frozen=True)
class Interval:
    condition: str
    estimate: float
    low: float | None
    high: float | None
    n: int


def _title(metric: str, unit: str | None) -> str:
    return f"{metric} ({unit})" if unit else metric


def _base(data: pd.DataFrame) -> Any:
    return alt.Chart(data).properties(width="container", height=HEIGHT)


def trials_chart(
    points: Sequence[Point],
    intervals: Sequence[Interval],
    order: Sequence[str],
    metric: str,
    unit: str | None,
) -> Any:
    """Every trial one dot, the mean and its 95% CI beside; one panel per condition with its
    own y scale, so the spread within a condition stays visible."""
    rows = [{**p.__dict__, "kind": "trial"} for p in points]
    rows += [
        {
            "condition": i.condition,
            "trial": None,
            "value": i.estimate,
            "low": i.low,
            "high": i.high,
            "n": i.n,
            "kind": "mean",
        }
        for i in intervals
        if i.low is not None
    ]
    base = alt.Chart(pd.DataFrame(rows)).properties(width=FACET_WIDTH, height=HEIGHT)
    y = alt.Y("value:Q", title=_title(metric, unit), scale=alt.Scale(zero=False))
    dots = (
        base.transform_filter("datum.kind == 'trial'")
        .mark_circle(size=60, opacity=0.7, color=GREY, xOffset=-8)
        .encode(
            y=y,
            tooltip=[alt.Tooltip("trial:Q"), alt.Tooltip("value:Q", title=metric, format=",.4~g")],
        )
    )
    summary = base.transform_filter("datum.kind == 'mean'")
    tooltip = [
        alt.Tooltip("n:Q"),
        alt.Tooltip("value:Q", title="mean", format=",.4~g"),
        alt.Tooltip("low:Q", title="95% CI low", format=",.4~g"),
        alt.Tooltip("high:Q", title="95% CI high", format=",.4~g"),
    ]
    bars = summary.mark_rule(color=BLUE, strokeWidth=2, xOffset=8).encode(
        y="low:Q", y2="high:Q", tooltip=tooltip
    )
    means = summary.mark_tick(color=BLUE, thickness=2, size=14, orient="horizontal", xOffset=8).encode(
        y="value:Q", tooltip=tooltip
    )
    return (
        alt.layer(dots, bars, means)
        .facet(column=alt.Column("condition:N", sort=list(order), title=None))
        .resolve_scale(y="independent")
    )


def sequence_chart(points: Sequence[Point], order: Sequence[str], metric: str, unit: str | None) -> Any:
    """Each trial's deviation from its condition's median, against trial index: warmup and
    drift show as slopes, on one axis for every condition."""
    medians = {c: float(pd.Series([p.value for p in points if p.condition == c]).median()) for c in order}
    rows = [
        {**p.__dict__, "deviation": (p.value / medians[p.condition] - 1) if medians[p.condition] else 0.0}
        for p in points
    ]
    return (
        _base(pd.DataFrame(rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("trial:Q", title="trial", axis=alt.Axis(tickMinStep=1, format="d")),
            y=alt.Y("deviation:Q", title=f"{metric}: deviation from median", axis=alt.Axis(format="+.1%")),
            color=alt.Color("condition:N", sort=list(order), title="condition"),
            tooltip=[
                alt.Tooltip("condition:N"),
                alt.Tooltip("trial:Q"),
                alt.Tooltip("value:Q", title=_title(metric, unit), format=",.4~g"),
                alt.Tooltip("deviation:Q", title="from median", format="+.1%"),
            ],
        )
    )


def reported_chart(points: Sequence[Point], order: Sequence[str], metric: str, unit: str | None) -> Any:
    """Figures copied from a publication: one diamond each, never an interval."""
    return (
        _base(pd.DataFrame([p.__dict__ for p in points]))
        .mark_point(shape="diamond", size=120, filled=True, color=ORANGE)
        .encode(
            x=alt.X("condition:N", sort=list(order), title="condition", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("value:Q", title=_title(metric, unit) + " (reported)"),
            tooltip=[
                alt.Tooltip("condition:N"),
                alt.Tooltip("value:Q", title=f"{metric} (reported, trials not reported)", format=",.4~g"),
            ],
        )
    )


def rate_chart(intervals: Sequence[Interval], order: Sequence[str], rate: str) -> Any:
    """Pooled rate per condition with its Wilson 95% interval."""
    data = _base(pd.DataFrame([i.__dict__ for i in intervals if i.low is not None]))
    x = alt.X("condition:N", sort=list(order), title="condition", axis=alt.Axis(labelAngle=0))
    y = alt.Y("estimate:Q", title=rate, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    tooltip = [
        alt.Tooltip("condition:N"),
        alt.Tooltip("estimate:Q", title=f"{rate} (pooled)", format=".1%"),
        alt.Tooltip("low:Q", title="Wilson 95% low", format=".1%"),
        alt.Tooltip("high:Q", title="Wilson 95% high", format=".1%"),
    ]
    bars = data.mark_rule(color=BLUE, strokeWidth=2).encode(x=x, y="low:Q", y2="high:Q", tooltip=tooltip)
    dots = data.mark_circle(size=80, color=BLUE).encode(x=x, y=y, tooltip=tooltip)
    return alt.layer(bars, dots)
