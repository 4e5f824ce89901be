"""The forest plot of claims and of a grid's effects: each row's interval and measured change
on a log axis labelled in percent change, the claimed value, the band of no difference and
the smallest change worth calling, with a key to every mark (built as a cached template, its
axis domain and ticks filled in per chart by ChartTemplates.spec)."""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import IDENTICAL_SIDES
from ..analysis.wording import pct
from ..format.signed import RANGE_HIGH, in_range, points, times
from . import text as t
from .chart_templates import DOMAIN_MARK, TICKS_MARK, ChartTemplates
from .charts import BLUE, GREY, _layer

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
    "incomplete run": "#a33a00",
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


LABEL_PX = 150  # the column of row labels, left of the plot: each line wrapped to fit it
LABEL_CHARS = 26  # characters of a label's line (10 px sans-serif: about 5.6 px each)
AXIS_PX = 330 - LABEL_PX - 10  # the narrowest plot: a 390 px phone less the page's margins and the labels
STEPS = tuple(m * 10.0**k for k in range(-4, 4) for m in (1, 2, 5))  # round steps of a percent axis
MULTIPLES = tuple(m * 10.0**k for k in range(-6, 7) for m in (1, 2, 5))  # a wide axis: 0.5x, 1x, 2x, 5x, 10x
MOST_TICKS = 3  # more ticks on a side of no change read no better, so fewer digits win
COVER = 1.5  # how far past its last tick, in its widest gaps, a side of the axis may run unlabelled


def _label_px(text: str) -> float:
    """About how wide an axis label is drawn (10 px sans-serif): '%' wide, '.' narrow."""
    return sum({"%": 8.9, ".": 2.8, ",": 2.8}.get(c, 5.6) for c in text)


def percent(ratio: float) -> str:
    """A ratio as the percent change the cards print (1.386 -> '+38.6%'), and 1 as the axis
    prints its line of no change, '0%'."""
    return "0%" if ratio == 1 else pct(ratio)


def tick_label(ratio: float, ratios: bool = False) -> str:
    """An axis label as the chart's labelExpr prints it: a round percent change ('-20%', '0%',
    '+150%') or on a rate claim's axis a round multiple ('0.5x', '1x', '2.5x')."""
    if ratios:
        return f"{ratio:,.6f}".rstrip("0").rstrip(".") + "x"
    change = f"{(ratio - 1) * 100:+,.6f}".rstrip("0").rstrip(".")
    return "0%" if ratio == 1 else change + "%"


def _linear(domain: tuple[float, float], step: float) -> list[float]:
    """No change and every whole number of `step`s from it inside the domain (none past 50)."""
    first, last = math.ceil((domain[0] - 1) / step), math.floor((domain[1] - 1) / step)
    if last - first > 50:
        return []
    ticks = (float(f"{1 + k * step:.12g}") for k in range(first, last + 1))
    return [v for v in ticks if v > 0 and domain[0] < v < domain[1]]


def _significant(ratio: float) -> int:
    """The significant digits of the change a tick stands for ('+150%' and '2.5x': 2)."""
    digits = f"{abs(ratio - 1):.10g}".replace(".", "").lstrip("0").split("e")[0]
    return len(digits.rstrip("0")) or 1


def forest_ticks(domain: tuple[float, float], ratios: bool = False) -> list[float]:
    """Where the axis is labelled: at round values that cover the domain, no change among them,
    each label clear of its neighbours on a phone's axis. Either whole steps of a round size
    (-10%, -5%, 0%, +5%) or, on a wide axis, round multiples (0.5x, 1x, 2x, 5x); whichever reads
    more ticks (up to MOST_TICKS), then the fewer digits."""
    span = math.log(domain[1]) - math.log(domain[0])

    def clear(a: float, b: float) -> bool:
        room = abs(math.log(a) - math.log(b)) / span * AXIS_PX  # a / b underflows for ends 1e-250 and 1e250
        return room >= (_label_px(tick_label(a, ratios)) + _label_px(tick_label(b, ratios))) / 2 + 4

    def side(values: list[float], skip: bool) -> list[float]:
        """From no change outward, each tick clear of the last one kept: every one while none
        collides (whole steps), or skipping those that do (round multiples)."""
        kept = [1.0]
        for v in sorted(values, key=lambda v: abs(math.log(v))):
            if clear(v, kept[-1]):
                kept.append(v)
            elif not skip:
                break
        return kept[1:]

    def best(sets: list[list[float]], end: float) -> list[float]:
        """The set that reaches the axis' end on its side (what is left past its last tick no
        wider than COVER of its widest gap), then the most ticks up to MOST_TICKS, then the fewest digits."""

        def covers(ticks: list[float]) -> bool:
            gaps = [abs(math.log(b) - math.log(a)) for a, b in itertools.pairwise([1.0, *ticks])]
            return bool(gaps) and abs(math.log(end) - math.log(ticks[-1])) <= COVER * max(gaps)

        return max(sets, key=lambda s: (covers(s), min(len(s), MOST_TICKS), -max(map(_significant, s), default=0)))

    ladders = [(_linear(domain, step), False) for step in reversed(STEPS)]
    ladders.append(([v for v in MULTIPLES if domain[0] < v < domain[1]], True))
    up = best([side([v for v in values if v > 1], skip) for values, skip in ladders], domain[1])
    down = best([side([v for v in values if v < 1], skip) for values, skip in ladders], domain[0])
    return sorted([*down, 1.0, *up])


STATEMENT_MAX = 60  # characters of a claim's statement on its forest row


def _lines(text: str) -> list[str]:
    return textwrap.wrap(text, LABEL_CHARS, break_on_hyphens=False) or [text]


def forest_label(row: Mapping[str, Any]) -> str:
    """A row's label, on lines of at most LABEL_CHARS: the claim's statement shortened (or the
    effect's name; the claim's id is in the tooltip), the condition it is judged at, then its
    verdict with the change, its interval and the change claimed, each on lines of its own."""
    name, _, at = str(row["claim"]).partition(" @ ")
    statement = row.get("statement")
    title = t.shortened(statement, STATEMENT_MAX) if isinstance(statement, str) and statement.strip() else name
    pieces = rate_figures(row) if isinstance(row.get("points"), float) else _figures(row)
    return "\n".join(line for piece in [title, *([f"at {at}"] if at else []), *pieces] for line in _lines(piece))


def _figures(row: Mapping[str, Any]) -> list[str]:
    """A row's verdict and change, its interval (or why it has none) and the change claimed."""
    out = [f"{row['verdict']}: {percent(float(row['ratio']))}"]
    low, high = row.get("low"), row.get("high")
    if isinstance(low, float) and isinstance(high, float):
        out.append(f"[{percent(low)}, {percent(high)}]" if low != high else f"({IDENTICAL_SIDES})")
    if isinstance(row.get("claimed"), float):
        out.append(f"claimed {percent(float(row['claimed']))}")
    return out


def rate_figures(row: Mapping[str, Any]) -> list[str]:
    """A rate claim's row in one unit: percentage points first, then the ratio it is judged by,
    labelled as one ("supported: +39.0 pp", "ratio 2.386x [2.101x, 2.710x]"); no interval of
    no width."""
    low, high = row.get("low"), row.get("high")
    out = [f"{row['verdict']}: {points(float(row['points']))}", f"ratio {times(float(row['ratio']))}"]
    if isinstance(low, float) and isinstance(high, float):
        if low != high:
            out[1] += f" [{times(low)}, {times(high)}]"
        else:
            out.append(IDENTICAL_SIDES)
    if isinstance(row.get("claimed"), float):
        out.append(f"claimed {times(float(row['claimed']))}")
    return out


def _labelled(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with its label; two rows that would read the same are told apart by their ids."""
    labels = [forest_label(r) for r in rows]
    return [
        {**r, "label": text if labels.count(text) == 1 else f"{text}\n{r['claim']}"}
        for r, text in zip(rows, labels, strict=True)
    ]


KEY = (
    "interval and measured change, coloured by verdict",
    "claimed change",
    "band of no difference",
    "smallest change worth calling",
)
_KEY_SHAPES = ("M-1,0H1M0,-0.6L0.6,0L0,0.6L-0.6,0Z", "cross", "square", "M-1,0H-0.55M-0.2,0H0.2M0.55,0H1")
_KEY_COLORS = (GREY, CLAIMED, BLUE, GREY)
LINE_PX = 12  # a line of a row's label
ROW_PAD = 14  # between two rows' labels


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
    labelled = _labelled(rows)
    step = max((str(r["label"]).count("\n") + 1 for r in labelled), default=1) * LINE_PX + ROW_PAD
    labels = (min_effect, metric, axis, claimed, ratios, step)
    return templates.spec(forest_chart, labels, labelled, domain, forest_ticks(domain, ratios))


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
    min_effect: float,
    metric: str,
    axis: str = "candidate vs baseline",
    claimed: bool = True,
    ratios: bool = False,
    step: int = 5 * LINE_PX + ROW_PAD,
) -> Any:
    """Each claim's ratio and interval on a log axis fitted to the data and labelled at round
    values in percent change, a line at no change, the shaded band of no difference, the
    smallest changes worth calling as dashed lines and the claimed change as a cross; coloured
    by verdict, each row `step` pixels high and labelled in the column left of the plot (the
    label's lines split at newlines), with a key to every mark."""
    scale = alt.Scale(type="log", domain=list(DOMAIN_MARK), zero=False, nice=False)
    percent_label = "datum.value == 1 ? '0%' : replace(format(datum.value - 1, '+,~%'), '\u2212', '-')"
    ratio_label = "format(datum.value, ',~f') + 'x'"  # as tick_label writes a round multiple
    x_axis = alt.Axis(
        values=list(TICKS_MARK),
        labelExpr=ratio_label if ratios else percent_label,
        labelOverlap=False,
        labelFlush=False,
        grid=True,
    )
    title = [f"{metric}: {axis},", "ratio (log scale)" if ratios else "change in percent (log scale)"]
    x = alt.X("ratio:Q", title=title, scale=scale, axis=x_axis)
    rows_axis = alt.Axis(
        labelExpr="split(datum.value, '\\n')",
        labelLimit=LABEL_PX,
        labelFontSize=10,
        labelPadding=8,
        ticks=False,
        domain=False,
        grid=False,
    )
    y = alt.Y("label:N", title=None, sort=None, axis=rows_axis, scale=alt.Scale(paddingInner=0, paddingOuter=0.1))
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
        base.transform_filter("isValid(datum.low)")
        .mark_rule(strokeWidth=3)
        .encode(x=alt.X("low:Q", scale=scale), x2="high:Q", y=y, stroke=stroke, tooltip=tooltip),
        base.mark_point(filled=True, size=90, shape="diamond", opacity=1, strokeOpacity=0).encode(
            x=x, y=y, fill=fill, tooltip=tooltip
        ),
        base.transform_filter("isValid(datum.claimed)")
        .transform_calculate(key=f"'{KEY[1]}'")
        .mark_point(size=120, filled=False, strokeWidth=2.5, opacity=1)
        .encode(
            x=alt.X("claimed:Q", scale=scale),
            y=y,
            color=key_color,
            shape=key_shape,
            tooltip=[alt.Tooltip("claim:N"), alt.Tooltip("claimed:Q", title="claimed ratio", format=".3f")],
        ),
    ]
    return _layer(*layers, width="container", height=alt.Step(step))
