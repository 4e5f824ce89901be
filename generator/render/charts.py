"""Altair chart builders. Each returns an `alt.Chart` (or layer/facet); none saves.

A chart is built over a named data source, `table`, and depends only on its
labels (metric, unit, condition order), so one built chart serves every run
with the same labels: Altair's construction and validation are slow, so
`template()` caches the spec and `spec()` inlines each run's rows. Field names
are fixed; publisher strings only ever appear as data values and titles,
which Vega draws as text.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
DATA = "table"


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


def _base(width: Any = "container") -> alt.Chart:
    return alt.Chart(alt.NamedData(name=DATA)).properties(width=width, height=HEIGHT)


def _x(order: Sequence[str]) -> alt.X:
    return alt.X("condition:N", sort=list(order), title="condition", axis=alt.Axis(labelAngle=0))


def trials_chart(order: tuple[str, ...], metric: str, unit: str | None, level: str) -> Any:
    """Every trial one dot, the mean and its confidence interval beside; one panel per condition with its
    own y scale, so the spread within a condition stays visible."""
    base = _base(FACET_WIDTH)
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
    bars = summary.mark_rule(color=BLUE, strokeWidth=2, xOffset=8).encode(y="low:Q", y2="high:Q", tooltip=tooltip)
    means = summary.mark_tick(color=BLUE, thickness=2, size=14, orient="horizontal", xOffset=8).encode(
        y="value:Q", tooltip=tooltip
    )
    return (
        alt.layer(dots, bars, means)
        .facet(column=alt.Column("condition:N", sort=list(order), title=None), data=alt.NamedData(name=DATA))
        .resolve_scale(y="independent")
    )


def trials_rows(points: Sequence[Point], intervals: Sequence[Interval]) -> list[dict[str, Any]]:
    rows = [{**p.__dict__, "kind": "trial"} for p in points]
    rows += [
        {
            "condition": i.condition,
            "value": i.estimate,
            "low": i.low,
            "high": i.high,
            "n": i.n,
            "kind": "mean",
        }
        for i in intervals
        if i.low is not None
    ]
    return rows


def sequence_chart(order: tuple[str, ...], metric: str, unit: str | None) -> Any:
    """Each trial's deviation from its condition's median, against trial index: warmup and
    drift show as slopes, on one axis for every condition."""
    return (
        _base()
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
    """Pooled rate per condition with its Wilson interval."""
    y = alt.Y("estimate:Q", title=rate, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    tooltip = [
        alt.Tooltip("condition:N"),
        alt.Tooltip("estimate:Q", title=f"{rate} (pooled)", format=".1%"),
        alt.Tooltip("low:Q", title=f"Wilson {level} low", format=".1%"),
        alt.Tooltip("high:Q", title=f"Wilson {level} high", format=".1%"),
    ]
    bars = _base().mark_rule(color=BLUE, strokeWidth=2).encode(x=_x(order), y="low:Q", y2="high:Q", tooltip=tooltip)
    dots = _base().mark_circle(size=80, color=BLUE).encode(x=_x(order), y=y, tooltip=tooltip)
    return alt.layer(bars, dots)


TEMPLATES: dict[str, str] = {}  # "<builder> <labels as JSON>" -> its spec; the build cache saves it


def template(builder: Callable[..., Any], *labels: Any) -> str:
    """The Vega-Lite spec of `builder(*labels)` without data, built once per labels."""
    key = f"{builder.__name__} {json.dumps(labels)}"
    known = TEMPLATES.get(key)
    if known is None:
        known = TEMPLATES[key] = json.dumps(builder(*labels).to_dict(validate=True))
    return known


def _finite(value: Any) -> Any:
    """JSON has no Infinity or NaN: a non-finite number is drawn as missing."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def spec(
    builder: Callable[..., Any],
    labels: tuple[Any, ...],
    rows: Sequence[dict[str, Any]],
    domain: tuple[float, float] | None = None,
) -> bytes:
    """The chart's Vega-Lite JSON with its rows inlined (the page never fetches data), and the
    axis domain put in place of DOMAIN_MARK (so one cached template serves every domain)."""
    text = template(builder, *labels)
    if domain is not None:
        text = text.replace(json.dumps(list(DOMAIN_MARK)), json.dumps(list(domain)))
    out = json.loads(text)
    out["datasets"] = {DATA: [{k: _finite(v) for k, v in row.items()} for row in rows]}
    return json.dumps(out, sort_keys=True, separators=(",", ":")).encode()


VERDICT_COLORS = {
    "supported": "#1a9850",
    "contradicted": "#d73027",
    "overstated": "#9e2a83",
    "within noise": "#4575b4",
    "inconclusive": "#fdae61",
    "no trial data": "#999999",
}


def forest_domain(values: Sequence[float]) -> tuple[float, float]:
    """A log axis that holds every interval end, band edge and claimed ratio, and 1, with a
    margin of a fifth of the span on each side (so a 2% and a 300% effect both read)."""
    low, high = math.log(min([1.0, *values])), math.log(max([1.0, *values]))
    pad = max((high - low) / 5, 0.005)
    return round(math.exp(low - pad), 4), round(math.exp(high + pad), 4)


DOMAIN_MARK = (0.000123456, 98765.4321)  # stands for the axis domain in the cached template


def forest_chart(min_effect: float, metric: str, rows: int, axis: str = "candidate / baseline") -> Any:
    """Each claim's ratio and interval on a log axis fitted to the data, a line at 1, the shaded
    band of no difference, the smallest-change ticks and the claimed ratio as a cross; coloured
    by verdict. The band comes from the first row's `noise_lo`/`noise_hi`."""
    scale = alt.Scale(type="log", domain=list(DOMAIN_MARK), zero=False, nice=False)
    x = alt.X("ratio:Q", title=f"{metric}: {axis} (log scale)", scale=scale)
    y = alt.Y("claim:N", title=None, sort=None)
    color = alt.Color(
        "verdict:N",
        scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
        legend=alt.Legend(title="verdict", orient="bottom"),
    )
    tooltip = [
        alt.Tooltip("claim:N"),
        alt.Tooltip("verdict:N"),
        alt.Tooltip("ratio:Q", format=".3f"),
        alt.Tooltip("low:Q", title="CI low", format=".3f"),
        alt.Tooltip("high:Q", title="CI high", format=".3f"),
    ]
    base = _base()
    layers = []
    band = base.transform_filter("datum.first")
    layers.append(band.mark_rect(opacity=0.15, color=BLUE).encode(x=alt.X("noise_lo:Q", scale=scale), x2="noise_hi:Q"))
    marks = [{"at": 1 - min_effect}, {"at": 1 + min_effect}]
    layers.append(
        alt.Chart(alt.Data(values=marks)).mark_rule(strokeDash=[2, 2], color=GREY).encode(x=alt.X("at:Q", scale=scale))
    )
    layers.append(alt.Chart(alt.Data(values=[{"at": 1}])).mark_rule(color="black").encode(x=alt.X("at:Q", scale=scale)))
    layers.append(
        base.transform_filter("isValid(datum.low)")
        .mark_rule(strokeWidth=3)
        .encode(x=alt.X("low:Q", scale=scale), x2="high:Q", y=y, color=color, tooltip=tooltip)
    )
    layers.append(base.mark_point(filled=True, size=90, shape="diamond").encode(x=x, y=y, color=color, tooltip=tooltip))
    claimed = [alt.Tooltip("claim:N"), alt.Tooltip("claimed:Q", title="claimed ratio", format=".3f")]
    layers.append(
        base.transform_filter("isValid(datum.claimed)")
        .mark_point(shape="cross", size=120, color="black", filled=True)
        .encode(x=alt.X("claimed:Q", scale=scale), y=y, tooltip=claimed)
    )
    return alt.layer(*layers).properties(height=40 * rows + 30)


def sides_chart(metric: str, unit: str | None) -> Any:
    """Per-trial values of the baseline and candidate of one claim, side by side."""
    return (
        _base()
        .mark_circle(size=60, opacity=0.75)
        .encode(
            x=alt.X("side:N", title=None, sort=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("value:Q", title=_title(metric, unit), scale=alt.Scale(zero=False)),
            color=alt.Color("side:N", legend=None),
            tooltip=[alt.Tooltip("side:N"), alt.Tooltip("trial:Q"), alt.Tooltip("value:Q", format=",.4~g")],
        )
    )


def _means(metric: str, unit: str | None, x_field: str, x_title: str, level: str) -> tuple[Any, Any, list[Any]]:
    """The y axis, colour and tooltip shared by the charts of means with intervals."""
    y = alt.Y("mean:Q", title=_title(metric, unit), scale=alt.Scale(zero=False))
    color = alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom"))
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
    base = _base()
    lines = base.mark_line(point=alt.OverlayMarkDef(filled=True, size=70)).encode(
        x=x, y=y, color=color, tooltip=tooltip
    )
    bars = (
        base.transform_filter("isValid(datum.low)")
        .mark_rule(strokeWidth=2)
        .encode(x=x, y=alt.Y("low:Q"), y2="high:Q", color=color)
    )
    return alt.layer(bars, lines).properties(height=HEIGHT)


def sweep_chart(metric: str, unit: str | None, condition: str, level: str) -> Any:
    """A metric against a numeric condition (concurrency, request rate, prompt length): the mean
    as a line, its interval as a band; one line per value of the other conditions."""
    x = alt.X("x:Q", title=condition, scale=alt.Scale(zero=False, nice=False), axis=alt.Axis(tickMinStep=1))
    y, color, tooltip = _means(metric, unit, "x:Q", condition, level)
    base = _base()
    band = (
        base.transform_filter("isValid(datum.low)")
        .mark_area(opacity=0.2)
        .encode(x=x, y=alt.Y("low:Q"), y2="high:Q", color=color)
    )
    line = base.mark_line(point=alt.OverlayMarkDef(filled=True, size=50)).encode(x=x, y=y, color=color, tooltip=tooltip)
    return alt.layer(band, line).properties(height=HEIGHT)
