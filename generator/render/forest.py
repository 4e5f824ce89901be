"""The forest plot of claims and of a grid's effects: each row's interval and measured change
on a log axis labelled in percent change, the claimed value, the band of no difference and
the smallest change worth calling, with a key to every mark (built as a cached template, its
axis domain and ticks filled in per chart by ChartTemplates.spec)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import IDENTICAL_SIDES
from ..analysis.wording import pct
from ..format.signed import RANGE_HIGH, in_range, points, times
from .charts import BLUE, DOMAIN_MARK, GREY, TICKS_MARK, ChartTemplates, _layer

if TYPE_CHECKING:
    import altair as alt
else:
    from .charts import alt  # altair, imported on first use

VERDICT_COLORS = {
    "supported": "#1a9850",
    "contradicted": "#d73027",
    "overstated": "#b8449f",
    "within noise": "#4575b4",
    "inconclusive": "#b87700",
    "no trial data": "#888888",
}
CLAIMED, REFERENCE = "#e7298a", GREY


def forest_domain(values: Sequence[float]) -> tuple[float, float]:
    """A log axis that holds every interval end, band edge and claimed ratio, and 1, with a
    margin of a fifth of the span on each side (so a 2% and a 300% effect both read). A bound out
    of range (`in_range`: past 1e300 or below 1e-300) is drawn as missing and left out, and
    the axis itself stays inside that range."""
    shown = [v for v in values if in_range(v) and v > 0]
    low, high = math.log(min([1.0, *shown])), math.log(max([1.0, *shown]))
    pad = max((high - low) / 5, 0.005)
    edge = math.log(RANGE_HIGH)
    ends = math.exp(max(low - pad, -edge)), math.exp(min(high + pad, edge))
    return float(f"{ends[0]:.4g}"), min(float(f"{ends[1]:.4g}"), RANGE_HIGH)  # never rounded to 0


AXIS_PX = 330  # the narrowest axis: a 390 px phone less the page's margins and the chart's padding


def _label_px(text: str) -> float:
    """About how wide an axis label is drawn (10 px sans-serif): '%' wide, '.' narrow."""
    return sum({"%": 8.9, ".": 2.8, ",": 2.8}.get(c, 5.6) for c in text)


def percent(ratio: float) -> str:
    """A ratio as the percent change the cards print (1.386 -> '+38.6%'), and 1 as the axis
    prints its line of no change, '0%'."""
    return "0%" if ratio == 1 else pct(ratio)


def tick_label(ratio: float, ratios: bool = False) -> str:
    """An axis label: the percent change, or on a rate claim's axis the ratio as a multiple."""
    return times(ratio) if ratios else percent(ratio)


def forest_ticks(rows: Sequence[Mapping[str, Any]], domain: tuple[float, float], ratios: bool = False) -> list[float]:
    """Where the axis is labelled: at no change (0%), then at each row's interval ends and its
    claimed value (at its ratio when it has no interval), in that order, each kept when it stands
    clear of the ticks kept before it. Every tick is labelled; none sits unlabelled under a mark."""
    span = math.log(domain[1]) - math.log(domain[0])

    def clear(a: float, b: float) -> bool:
        room = abs(math.log(a) - math.log(b)) / span * AXIS_PX  # a / b underflows for ends 1e-250 and 1e250
        return room >= (_label_px(tick_label(a, ratios)) + _label_px(tick_label(b, ratios))) / 2 + 4

    kept = [1.0]
    for row in rows:
        has_interval = isinstance(row.get("low"), float)
        for key in ("low", "high", "claimed") if has_interval else ("ratio", "claimed"):
            value = row.get(key)
            if isinstance(value, float) and domain[0] < value < domain[1] and all(clear(value, k) for k in kept):
                kept.append(value)
    return sorted(kept)


def forest_label(row: Mapping[str, Any]) -> str:
    """A row's label, in full, on lines of its own: the claim (or effect), the condition it is
    judged at, and its verdict with the change, its interval and the change claimed."""
    name, _, at = str(row["claim"]).partition(" @ ")
    if isinstance(row.get("points"), float):
        return "\n".join([name, *([f"at {at}"] if at else []), rate_figures(row)])
    figures = f"{row['verdict']}: {percent(float(row['ratio']))}"
    low, high = row.get("low"), row.get("high")
    if isinstance(low, float) and isinstance(high, float):
        figures += f" [{percent(low)}, {percent(high)}]" if low != high else f" ({IDENTICAL_SIDES})"
    if isinstance(row.get("claimed"), float):
        figures += f"; claimed {percent(float(row['claimed']))}"
    return "\n".join([name, *([f"at {at}"] if at else []), figures])


def rate_figures(row: Mapping[str, Any]) -> str:
    """A rate claim's row in one unit: percentage points first, then the ratio it is judged by,
    labelled as one ("supported: +39.0 pp (ratio 2.386x [2.101x, 2.710x])"); no interval of no width."""
    low, high = row.get("low"), row.get("high")
    ratio = f"ratio {times(float(row['ratio']))}"
    if isinstance(low, float) and isinstance(high, float):
        ratio += f" [{times(low)}, {times(high)}]" if low != high else f"; {IDENTICAL_SIDES}"
    if isinstance(row.get("claimed"), float):
        ratio += f"; claimed {times(float(row['claimed']))}"
    return f"{row['verdict']}: {points(float(row['points']))} ({ratio})"


KEY = (
    "interval and measured change, coloured by verdict",
    "claimed change",
    "band of no difference",
    "smallest change worth calling",
)
_KEY_SHAPES = ("M-1,0H1M0,-0.6L0.6,0L0,0.6L-0.6,0Z", "cross", "square", "M-1,0H-0.55M-0.2,0H0.2M0.55,0H1")
_KEY_COLORS = (GREY, CLAIMED, BLUE, GREY)
ROW_STEP = 72  # a forest row: up to three lines of label, then its interval
RULE_OFFSET = 20  # the interval's place below the middle of its row


def forest_spec(
    rows: Sequence[dict[str, Any]],
    min_effect: float,
    metric: str,
    axis: str = "candidate vs baseline",
    *,
    templates: ChartTemplates,
) -> bytes:
    """The forest plot of `rows` (claim, verdict, ratio, low, high, claimed; the first row also
    noise_lo/noise_hi, the band of no difference) with its axis fitted and labelled."""
    keys = ("low", "high", "claimed", "noise_lo", "noise_hi", "ratio")
    ends = [v for r in rows for k, v in r.items() if k in keys and isinstance(v, float) and v > 0]
    domain = forest_domain([*ends, 1 - min_effect, 1 + min_effect])
    claimed = any(isinstance(r.get("claimed"), float) for r in rows)
    ratios = bool(rows) and all(isinstance(r.get("points"), float) for r in rows)  # rate claims: a ratio axis
    labels = (min_effect, metric, axis, claimed, ratios)
    labelled = [{**r, "label": forest_label(r)} for r in rows]
    return templates.spec(forest_chart, labels, labelled, domain, forest_ticks(rows, domain, ratios))


def key_names(min_effect: float) -> tuple[str, ...]:
    """The key's entries, in the order of KEY: the shaded band says what it decides and its width
    (the margin `verdicts.judge` calls supported and contradicted by), the dashed band that it is
    the one "within noise" is judged by, drawn where it is wider."""
    return (
        KEY[0],
        KEY[1],
        f"smaller than worth calling (±{min_effect:.1%}, shaded): supported and contradicted lie wholly outside",
        "band for within noise (dashed, where wider): the TOST interval must lie inside",
    )


def _key(entries: list[str], names: Sequence[str]) -> tuple[Any, Any]:
    """The key to a forest plot's marks, drawn by the claimed change's layer: one legend (colour
    and shape over the same entries) whose every entry looks like the mark it names."""
    shapes = dict(zip(names, _KEY_SHAPES, strict=True))
    colors = dict(zip(names, _KEY_COLORS, strict=True))
    legend = alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=0, symbolStrokeWidth=2)
    color = alt.Color("key:N", scale=alt.Scale(domain=entries, range=[colors[k] for k in entries]), legend=legend)
    shape = alt.Shape("key:N", scale=alt.Scale(domain=entries, range=[shapes[k] for k in entries]), legend=legend)
    return color, shape


def _references(scale: Any, min_effect: float) -> list[Any]:
    """The marks every row is read against: shaded, the changes smaller than worth calling (1 ±
    min_effect: an interval `verdicts.judge` calls supported or contradicted lies wholly outside
    it); dashed, the band "within noise" is judged by (carried by the first row), only where it
    is wider; and no change (a solid line)."""
    at = alt.X("at:Q", scale=scale)
    wider = f"datum.first && datum.noise_hi > {1 + min_effect!r}"
    return [
        alt.Chart(alt.Data(values=[{"lo": 1 - min_effect, "hi": 1 + min_effect}]))
        .mark_rect(opacity=0.15, color=BLUE)
        .encode(x=alt.X("lo:Q", scale=scale), x2="hi:Q"),
        alt.Chart()
        .transform_filter(wider)
        .mark_rule(strokeDash=[2, 2], color=GREY, strokeWidth=1.5)
        .encode(x=alt.X("noise_lo:Q", scale=scale)),
        alt.Chart()
        .transform_filter(wider)
        .mark_rule(strokeDash=[2, 2], color=GREY, strokeWidth=1.5)
        .encode(x=alt.X("noise_hi:Q", scale=scale)),
        alt.Chart(alt.Data(values=[{"at": 1}])).mark_rule(color=REFERENCE, strokeWidth=1.5).encode(x=at),
    ]


def forest_chart(
    min_effect: float, metric: str, axis: str = "candidate vs baseline", claimed: bool = True, ratios: bool = False
) -> Any:
    """Each claim's ratio and interval on a log axis fitted to the data and labelled in percent
    change, a line at no change, the shaded band of no difference, the smallest changes worth
    calling as dashed lines and the claimed change as a cross; coloured by verdict, each row
    labelled in full above its interval, with a key to every mark."""
    scale = alt.Scale(type="log", domain=list(DOMAIN_MARK), zero=False, nice=False)
    percent_label = "datum.value == 1 ? '0%' : replace(format(datum.value - 1, '+.1%'), '\u2212', '-')"
    ratio_label = (  # as format.signed.times writes a ratio
        "(datum.value >= 999.5 ? format(datum.value, ',.0f') : datum.value >= 10 || datum.value < 0.001 "
        "? format(datum.value, '.3g') : format(datum.value, '.3f')) + 'x'"
    )
    x_axis = alt.Axis(
        values=list(TICKS_MARK),
        labelExpr=ratio_label if ratios else percent_label,
        labelOverlap=False,
        labelFlush=False,
        grid=True,
    )
    title = [f"{metric}: {axis},", "ratio (log scale)" if ratios else "change in percent (log scale)"]
    x = alt.X("ratio:Q", title=title, scale=scale, axis=x_axis)
    y = alt.Y("claim:N", title=None, sort=None, axis=None, scale=alt.Scale(paddingInner=0, paddingOuter=0.2))
    verdicts = alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values()))
    # Coloured by verdict (each row's label names it, so no legend), through stroke and fill:
    # the colour channel is the key's.
    stroke, fill = (
        alt.Stroke("verdict:N", scale=verdicts, legend=None),
        alt.Fill("verdict:N", scale=verdicts, legend=None),
    )
    names = key_names(min_effect)
    key_color, key_shape = _key([k for k in names if claimed or k != KEY[1]], names)
    tooltip = [
        alt.Tooltip("claim:N"),
        alt.Tooltip("verdict:N"),
        alt.Tooltip("ratio:Q", title="ratio", format=".3f"),
        alt.Tooltip("low:Q", title="CI low (ratio)", format=".3f"),
        alt.Tooltip("high:Q", title="CI high (ratio)", format=".3f"),
    ]
    base = alt.Chart()
    layers = [
        *_references(scale, min_effect),
        base.mark_text(align="left", baseline="top", dy=-ROW_STEP // 2 + 6, lineBreak="\n", fontSize=11).encode(
            x=alt.value(0), y=y, text="label:N"
        ),
        base.transform_filter("isValid(datum.low)")
        .mark_rule(strokeWidth=3, yOffset=RULE_OFFSET)
        .encode(x=alt.X("low:Q", scale=scale), x2="high:Q", y=y, stroke=stroke, tooltip=tooltip),
        base.mark_point(filled=True, size=90, shape="diamond", opacity=1, strokeOpacity=0, yOffset=RULE_OFFSET).encode(
            x=x, y=y, fill=fill, tooltip=tooltip
        ),
        base.transform_filter("isValid(datum.claimed)")
        .transform_calculate(key=f"'{KEY[1]}'")
        .mark_point(size=120, filled=False, strokeWidth=2.5, opacity=1, yOffset=RULE_OFFSET)
        .encode(
            x=alt.X("claimed:Q", scale=scale),
            y=y,
            color=key_color,
            shape=key_shape,
            tooltip=[alt.Tooltip("claim:N"), alt.Tooltip("claimed:Q", title="claimed ratio", format=".3f")],
        ),
    ]
    return _layer(*layers, width="container", height=alt.Step(ROW_STEP))
