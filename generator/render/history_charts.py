"""A series chart: each point (one run's mean, or the runs sharing an along-value) with its
interval, the run's trials as dots, reported and incomplete runs hollow, the segments' levels
as steps and each change as a vertical line that links to the compare page of its two runs.

The x axis is the series' order (build number or date), one step per point, labelled by the
along-value; the chart is built once per metric, unit and order (`chart_templates`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.history import Change, Followed
from ..analysis.history_levels import Level
from .charts import BLUE, GREY, HEIGHT, _title
from .text import path_url

if TYPE_CHECKING:
    import altair as alt
else:
    from .charts import alt  # altair, imported on first use

STEP_GREY = "#767676"  # the steps: 3:1 or more on Material's light and slate backgrounds (WCAG, graphics)
CHANGE_COLOURS = {"worse": "#d95f02", "better": "#1b9e77"}


def series_chart(metric: str, unit: str | None, order: str, level: str) -> Any:
    """The chart of one series (`order`: the x axis title, 'build number' or 'date')."""
    x = alt.X(
        "along:O",
        title=order,
        sort=alt.EncodingSortField(field="i", order="ascending"),
        axis=alt.Axis(labelAngle=-40, labelOverlap=True, labelLimit=120),
    )
    y = alt.Y("mean:Q", title=_title(metric, unit), scale=alt.Scale(zero=False))
    point_tip = [
        alt.Tooltip("run:N"),
        alt.Tooltip("along:N", title=order),
        alt.Tooltip("mean:Q", format=",.4~g"),
        alt.Tooltip("low:Q", title=f"{level} CI low", format=",.4~g"),
        alt.Tooltip("high:Q", title=f"{level} CI high", format=",.4~g"),
        alt.Tooltip("n:Q", title="n (trials)"),
        alt.Tooltip("status:N"),
    ]
    base = alt.Chart()
    trials = (
        base.transform_filter("datum.kind == 'trial'")
        .mark_circle(size=22, opacity=0.55, color=GREY, xOffset=-7)
        .encode(
            x=x,
            y=alt.Y("value:Q"),
            tooltip=[
                alt.Tooltip("run:N"),
                alt.Tooltip("value:Q", title=f"{metric} (one trial)", format=",.4~g"),
            ],
        )
    )
    points = base.transform_filter("datum.kind == 'point'")
    bars = (
        points.transform_filter("isValid(datum.low) && datum.low < datum.high")
        .mark_rule(color=BLUE, strokeWidth=2)
        .encode(x=x, y=alt.Y("low:Q"), y2="high:Q", tooltip=point_tip)
    )
    filled = (
        points.transform_filter("!datum.hollow")
        .mark_point(filled=True, size=70, opacity=1, color=BLUE, shape="circle")
        .encode(x=x, y=y, tooltip=point_tip)
    )
    hollow = (
        points.transform_filter("datum.hollow")
        .mark_point(filled=False, size=70, opacity=1, color=BLUE, shape="circle", strokeWidth=2)
        .encode(x=x, y=y, tooltip=point_tip)
    )
    steps = (
        base.transform_filter("datum.kind == 'level'")
        .mark_line(interpolate="step-after", color=STEP_GREY, strokeWidth=2, opacity=0.9)
        .encode(
            x=x,
            y=alt.Y("level:Q"),
            tooltip=[alt.Tooltip("level:Q", title="segment level", format=",.4~g")],
        )
    )
    colour = alt.Color(
        "verdict:N",
        title="change",
        scale=alt.Scale(domain=list(CHANGE_COLOURS), range=list(CHANGE_COLOURS.values())),
        legend=alt.Legend(orient="bottom", direction="horizontal", symbolType="stroke", symbolStrokeWidth=2.5),
    )
    changes = (
        base.transform_filter("datum.kind == 'change'")
        .mark_rule(strokeWidth=2, strokeDash=[5, 3])
        .encode(x=x, color=colour, href="href:N", tooltip=[alt.Tooltip("change:N")])
    )
    notes = (
        base.transform_filter("datum.kind == 'note'")
        .mark_rule(strokeWidth=1, strokeDash=[2, 3], color=GREY)
        .encode(x=x, tooltip=[alt.Tooltip("note:N")])
    )
    return alt.layer(notes, steps, changes, trials, bars, filled, hollow, data=alt.NamedData(name="table")).properties(
        width="container", height=HEIGHT + 40
    )


def along_labels(followed: Followed) -> list[str]:
    """Each point's x label: its build number (with its date where two points share one), else its date."""
    points = followed.series.points
    if all(p.build is not None for p in points):
        builds = [str(p.build) for p in points]
        return [b if builds.count(b) == 1 else f"{b} ({p.date})" for b, p in zip(builds, points, strict=True)]
    return [p.date for p in points]


def order_of(followed: Followed) -> str:
    return "build number" if all(p.build is not None for p in followed.series.points) else "date"


def status(followed: Followed, index: int, incomplete: frozenset[str]) -> str:
    p = followed.series.points[index]
    if any(run in incomplete for run in p.runs):
        return "incomplete run: drawn, not segmented"
    excluded = [n for n in followed.excluded if n.run in p.runs]
    if excluded:
        return f"excluded by {excluded[0].file}: {excluded[0].text}"
    if p.runs[0] in followed.outliers:
        return "outlier: one-run excursion, set aside"
    if p.n == 0:
        return "reported figure: trials not reported"
    return "measured" if len(p.runs) == 1 else f"{len(p.runs)} runs of one {order_of(followed)}: their mean"


def change_words(c: Change, unit: str) -> str:
    """'worse: ×0.9 [0.88, 0.92] from RUN to RUN' as a tooltip says it."""
    return f"{c.verdict}: {c.ratio:.4g}x [{c.low:.4g}, {c.high:.4g}] from {c.before} to {c.after}{unit}"


def series_rows(
    followed: Followed,
    trials: Mapping[int, Sequence[tuple[str, float]]],
    segments: Sequence[Level],
    incomplete: frozenset[str],
    compare: str,
    claims: Sequence[tuple[str, str]] = (),
) -> list[dict[str, Any]]:
    """The chart's rows: every point, its trials (`trials`: point index -> (run, value)), each
    segment's level at each of its points, each annotation and claim (`claims`: (run, words))
    at its run, and each change at its `after` point, linked to the
    compare page (`compare`: the relative URL of compare/ from the series page)."""
    labels = along_labels(followed)
    points = followed.series.points
    rows: list[dict[str, Any]] = []
    for i, p in enumerate(points):
        rows.append(
            {
                "kind": "point",
                "i": i,
                "along": labels[i],
                "run": p.runs[0],
                "mean": p.mean,
                "low": p.low,
                "high": p.high,
                "n": p.n,
                "hollow": p.hollow or not p.segmented,  # reported, incomplete or excluded
                "status": status(followed, i, incomplete),
            }
        )
        rows += [{"kind": "trial", "i": i, "along": labels[i], "run": run, "value": v} for run, v in trials.get(i, ())]
    for segment in segments:
        rows += [{"kind": "level", "i": i, "along": labels[i], "level": segment.level} for i in segment.points]
    first = {run: i for i, p in enumerate(points) for run in p.runs}
    for n in followed.annotations:
        at = first[n.run]
        rows.append({"kind": "note", "i": at, "along": labels[at], "note": f"{n.run}: {n.text} ({n.file})"})
    for run, words in claims:
        at = first[run]
        rows.append({"kind": "note", "i": at, "along": labels[at], "note": f"{run}: {words}"})
    for c in followed.changes:
        at = first[c.after]
        href = f"{compare}?a={path_url(c.before)}&b={path_url(c.after)}"
        words = change_words(c, "" if c.kind == "step" else " (latest segment against the best earlier one)")
        if c.accepted is not None:
            words += f"; accepted by {c.accepted.file}: {c.accepted.text}"
        rows.append(
            {"kind": "change", "i": at, "along": labels[at], "verdict": c.verdict, "href": href, "change": words}
        )
    return rows
