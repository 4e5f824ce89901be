"""Altair chart builders. Each returns an `alt.Chart` (or layer/facet); none saves.

A chart is built over a named data source, `table`, and depends only on its
labels (metric, unit, condition order), so one built chart serves every run
with the same labels: Altair's construction and validation are slow, so
`chart_templates.ChartTemplates` keeps the spec and inlines each run's rows. The round
domains and ticks they are drawn on are `axes.py`. Field names
are fixed; publisher strings only ever appear as data values and titles,
which Vega draws as text.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .axes import constant_span
from .chart_templates import DATA, DOMAIN_MARK, TICKS_MARK

if TYPE_CHECKING:
    import altair as alt
else:

    class _Altair:
        """altair, imported on first use: a build that draws no new chart never pays for it."""

        def __getattr__(self, name: str) -> Any:
            import altair

            return getattr(altair, name)

    alt = _Altair()

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


def _data() -> alt.NamedData:
    return alt.NamedData(name=DATA)


def _base(width: Any = "container") -> alt.Chart:
    """A view over the chart's own data, `table`."""
    return alt.Chart(_data()).properties(width=width, height=HEIGHT)


def _layer(*layers: Any, **properties: Any) -> Any:
    """Layers that inherit `table` from the layer chart itself: each draws the rows it filters,
    and a facet above splits them (a layer naming its own data would escape the facet)."""
    return alt.layer(*layers, data=_data()).properties(**properties)


def _x(order: Sequence[str]) -> alt.X:
    return alt.X("condition:N", sort=list(order), title="condition", axis=alt.Axis(labelAngle=0))


def trials_chart(order: tuple[str, ...], metric: str, unit: str | None, level: str) -> Any:
    """Every trial one dot, the mean and its confidence interval beside; one panel per condition with its
    own y scale, so the spread within a condition stays visible."""
    base = alt.Chart().properties(width=FACET_WIDTH, height=HEIGHT)
    y = alt.Y("value:Q", title=_title(metric, unit), scale=alt.Scale(zero=False))
    dots = (
        base.transform_filter("datum.kind == 'trial'")
        .mark_circle(size=60, opacity=0.7, color=GREY, xOffset=-8)
        .encode(y=y, tooltip=[alt.Tooltip("trial:Q"), alt.Tooltip("value:Q", title=metric, format=",.4~g")])
    )
    summary = base.transform_filter("datum.kind == 'mean'")
    tooltip = [
        alt.Tooltip("n:Q"),
        alt.Tooltip("value:Q", title="mean", format=",.4~g"),
        alt.Tooltip("low:Q", title=f"{level} CI low", format=",.4~g"),
        alt.Tooltip("high:Q", title=f"{level} CI high", format=",.4~g"),
    ]
    bars = (
        summary.transform_filter("isValid(datum.low)")
        .mark_rule(color=BLUE, strokeWidth=2, xOffset=8)
        .encode(y="low:Q", y2="high:Q", tooltip=tooltip)
    )
    means = summary.mark_tick(color=BLUE, thickness=2, size=14, orient="horizontal", xOffset=8).encode(
        y="value:Q", tooltip=tooltip
    )
    # Invisible, and out of the accessibility tree: only widens the y scale of a one-value panel.
    padding = base.transform_filter("datum.kind == 'pad'").mark_line(opacity=0, aria=False).encode(y="value:Q")
    return (
        alt.layer(dots, bars, means, padding)
        .facet(column=alt.Column("condition:N", sort=list(order), title=None), data=_data())
        .resolve_scale(y="independent")
    )


def _pads(points: Sequence[Point]) -> list[dict[str, Any]]:
    """Two rows (drawn by no visible mark) around each condition whose trials all gave one
    value: its axis then spans `constant_span`, labelled in round steps. Without them the
    axis spans nothing: one label, or (before summaries were exact) the float noise between
    the value and its interval, labelled "2,179.9999999999986" to "2,180.0000000000023"."""
    values: dict[str, set[float]] = {}
    for p in points:
        values.setdefault(p.condition, set()).add(p.value)
    rows = []
    for condition, (value, *more) in values.items():
        span = constant_span(value) if not more and math.isfinite(value) else (value, value)
        if span[0] < span[1] and all(math.isfinite(v) for v in span):  # not at the floats' ends
            rows += [{"condition": condition, "value": v, "kind": "pad"} for v in span]
    return rows


def trials_rows(points: Sequence[Point], intervals: Sequence[Interval]) -> list[dict[str, Any]]:
    """The trials chart's rows: each trial, the pads, and each condition's mean with its
    interval; an interval of no width (every trial identical) has no ends, so no rule is drawn."""
    rows = [{**p.__dict__, "kind": "trial"} for p in points] + _pads(points)
    rows += [
        {
            "condition": i.condition,
            "value": i.estimate,
            "low": i.low if i.low != i.high else None,
            "high": i.high if i.low != i.high else None,
            "n": i.n,
            "kind": "mean",
        }
        for i in intervals
        if i.low is not None
    ]
    return rows


# At most one tick per whole trial: Vega's tickMinStep still asks for span + 1 ticks, which it
# rounds to a step of 0.5 for two or three trials ("1 2 2" or "1 2 2 3 3" once labels are
# whole); asking for no more ticks than the span holds keeps every step a whole number.
WHOLE_TICKS = {"expr": "max(1, min(ceil(width / 40), span(domain('x'))))"}


def sequence_chart(order: tuple[str, ...], metric: str, unit: str | None) -> Any:
    """Each trial's deviation from its condition's median, against trial index: warmup and
    drift show as slopes, on one axis for every condition."""
    return (
        _base()
        .mark_line(point=True)
        .encode(
            x=alt.X("trial:Q", title="trial", axis=alt.Axis(tickMinStep=1, format="d", tickCount=WHOLE_TICKS)),
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


def sequence_rows(points: Sequence[Point]) -> list[dict[str, Any]]:
    medians = {c: statistics.median(p.value for p in points if p.condition == c) for c in {p.condition for p in points}}
    return [
        {**p.__dict__, "deviation": p.value / medians[p.condition] - 1 if medians[p.condition] else 0.0} for p in points
    ]


def reported_chart(order: tuple[str, ...], metric: str, unit: str | None) -> Any:
    """Figures copied from a publication: one diamond each, never an interval."""
    return (
        _base()
        .mark_point(shape="diamond", size=120, filled=True, color=ORANGE)
        .encode(
            x=_x(order),
            y=alt.Y("value:Q", title=_title(metric, unit) + " (reported)"),
            tooltip=[
                alt.Tooltip("condition:N"),
                alt.Tooltip("value:Q", title=f"{metric} (reported, trials not reported)", format=",.4~g"),
            ],
        )
    )


def rate_chart(order: tuple[str, ...], rate: str, level: str) -> Any:
    """A rate with the trial as its unit: every trial's rate a grey dot, and per condition the
    mean of the trials' rates (blue) with its t interval over the trials; no rule where the
    trials gave one rate (there is no interval to draw). The axis runs from 0% to 100%."""
    y = alt.Y("value:Q", title=f"{rate} per trial", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    x = _x(order)
    trial_tip = [alt.Tooltip("condition:N"), alt.Tooltip("value:Q", title=f"{rate} (one trial)", format=".1%")]
    tooltip = [
        alt.Tooltip("condition:N"),
        alt.Tooltip("n:Q", title="n (trials)"),
        alt.Tooltip("value:Q", title=f"{rate}: mean of the trials", format=".1%"),
        alt.Tooltip("low:Q", title=f"{level} CI low", format=".1%"),
        alt.Tooltip("high:Q", title=f"{level} CI high", format=".1%"),
    ]
    trials = (
        alt.Chart()
        .transform_filter("datum.kind == 'trial'")
        .mark_circle(size=50, opacity=0.6, color=GREY, xOffset=-8)
        .encode(x=x, y=y, tooltip=trial_tip)
    )
    means = alt.Chart().transform_filter("datum.kind == 'mean'")
    bars = (
        means.transform_filter("isValid(datum.low)")
        .mark_rule(color=BLUE, strokeWidth=2, xOffset=8)
        .encode(x=x, y="low:Q", y2="high:Q", tooltip=tooltip)
    )
    dots = means.mark_circle(size=80, color=BLUE, opacity=1, xOffset=8).encode(x=x, y=y, tooltip=tooltip)
    return _layer(trials, bars, dots, width="container", height=HEIGHT)


# Marks drawn over the page's own background, light or dark (Material's slate): each keeps a
# contrast of 3:1 or more on both (WCAG's for graphics), so no interval fades into white and
# neither the cross nor the line of no change turns black on dark grey.
def sides_chart(metric: str, unit: str | None) -> Any:
    """Per-trial values of the baseline and candidate of one claim, side by side, each side (and
    condition) named in full in the legend: on a phone the x axis has no room for run ids."""
    legend = alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=0, symbolOpacity=1)
    return (
        _base()
        .mark_circle(size=60, opacity=0.75)
        .encode(
            x=alt.X("side:N", title=None, sort=None, axis=None),
            y=alt.Y("value:Q", title=_title(metric, unit), scale=alt.Scale(zero=False)),
            color=alt.Color("side:N", sort=None, legend=legend),
            tooltip=[alt.Tooltip("side:N"), alt.Tooltip("trial:Q"), alt.Tooltip("value:Q", format=",.4~g")],
        )
    )


def _means(
    metric: str, unit: str | None, x_field: str, x_title: str, level: str, symbol: str = "stroke"
) -> tuple[Any, Any, list[Any]]:
    """The y axis, colour and tooltip shared by the charts of means with intervals (`symbol`: the
    legend's, a stroke for lines, a circle for points)."""
    y = alt.Y("mean:Q", title=_title(metric, unit), scale=alt.Scale(zero=False))
    # One series a line of its own, labelled in full, its symbol the line's own colour (not the
    # band's pale fill): a long run id is never cut off and no series goes unnamed.
    legend = alt.Legend(
        orient="bottom",
        direction="vertical",
        columns=1,
        labelLimit=0,
        symbolType=symbol,
        symbolOpacity=1,
        symbolStrokeWidth=2.5,
    )
    color = alt.Color("series:N", title=None, legend=legend)
    tooltip = [
        alt.Tooltip("series:N"),
        alt.Tooltip(x_field, title=x_title),
        alt.Tooltip("mean:Q", format=",.4~g"),
        alt.Tooltip("low:Q", title=f"{level} CI low", format=",.4~g"),
        alt.Tooltip("high:Q", title=f"{level} CI high", format=",.4~g"),
        alt.Tooltip("n:Q"),
    ]
    return y, color, tooltip


def interaction_chart(metric: str, unit: str | None, factor: str, level: str) -> Any:
    """Each cell's mean and interval against the first factor's two levels, one line per
    combination of the other factors: parallel lines mean no interaction."""
    x = alt.X("level:N", title=factor, sort=None, axis=alt.Axis(labelAngle=0))
    y, color, tooltip = _means(metric, unit, "level:N", factor, level)
    base = alt.Chart()
    lines = base.mark_line(point=alt.OverlayMarkDef(filled=True, size=70, opacity=1)).encode(
        x=x, y=y, color=color, tooltip=tooltip
    )
    bars = (
        base.transform_filter("isValid(datum.low) && datum.low < datum.high")  # none of no width
        .mark_rule(strokeWidth=2)
        .encode(x=x, y=alt.Y("low:Q"), y2="high:Q", color=color)
    )
    return _layer(bars, lines, width="container", height=HEIGHT)


def sweep_chart(metric: str, unit: str | None, condition: str, level: str) -> Any:
    """A metric against a numeric condition (concurrency, request rate, prompt length), at the
    measured values only: the x axis is ordinal, one tick per measured value and nothing between,
    and each series' mean is a point with its interval as a rule beside the others' (no line, no
    band: nothing was measured between two values). The y domain and ticks are `sweep_axis`'s."""
    x = alt.X(
        "x:O",
        title=condition,
        sort="ascending",
        scale=alt.Scale(type="band", paddingInner=0.3, paddingOuter=0.15),
        axis=alt.Axis(labelAngle=0, format=",~g", formatType="number"),
    )
    offset = alt.XOffset("series:N", sort="ascending")  # the legend's order, left to right
    _, color, tooltip = _means(metric, unit, "x:Q", condition, level, symbol="circle")
    y = alt.Y(
        "mean:Q",
        title=_title(metric, unit),
        scale=alt.Scale(zero=False, nice=False, domain=list(DOMAIN_MARK)),
        axis=alt.Axis(values=list(TICKS_MARK), format=",.12~r"),
    )
    base = alt.Chart()
    bars = (
        base.transform_filter("isValid(datum.low)")
        .mark_rule(strokeWidth=2)
        .encode(x=x, xOffset=offset, y=alt.Y("low:Q"), y2="high:Q", color=color, tooltip=tooltip)
    )
    points = base.mark_circle(size=60, opacity=1).encode(x=x, xOffset=offset, y=y, color=color, tooltip=tooltip)
    return _layer(bars, points, width="container", height=HEIGHT)
