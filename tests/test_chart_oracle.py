"""The chart oracle: every chart spec a build generates is rendered with vl-convert (Vega in
process, no browser) into its scenegraph, and what each panel draws is checked against the
run folders themselves (results.csv and run.yaml, read here with the csv module, not by the
code under test): the count and the values of the points in each panel, each mark mapped back
through its panel's axis. It covers the repository's own publication and a generated one with
several conditions per run (two condition columns, an excluded trial, a reported run, claims
at several conditions, a report sweep)."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import vl_convert as vlc
import yaml

from helpers import MANIFEST, RESULTS, generate, measured_run, publication, run_yaml, write_tree

ROOT = Path(__file__).resolve().parent.parent
WHITE, SLATE = "#ffffff", "#1e2029"  # Material's default and slate page backgrounds


# -- reading a rendered chart -------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    kind: str  # the Vega mark type: symbol, rule, rect, text, line, area
    x: float  # in the panel's pixels
    y: float
    item: Mapping[str, Any]

    def field(self, name: str) -> str:
        """A field of the mark's aria description ('name: value; ...'), as Vega wrote it."""
        for part in str(self.item.get("description", "")).split("; "):
            if part.startswith(name + ": "):
                return part[len(name) + 2 :]
        raise AssertionError(f"no {name!r} in {self.item.get('description')!r}")

    @property
    def first(self) -> float:
        """The first encoded value of the description (the y value of a dot, unrounded)."""
        return float(str(self.item["description"]).split("; ")[0].rpartition(": ")[2])


@dataclass
class Panel:
    title: str | None
    marks: list[Mark] = field(default_factory=list)
    ticks: dict[str, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))
    tick_marks: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    axis_titles: dict[str, str] = field(default_factory=dict)
    legend: list[str] = field(default_factory=list)
    legend_limits: list[float] = field(default_factory=list)  # 0: the label is never cut off
    legend_symbols: list[Mapping[str, Any]] = field(default_factory=list)

    def of(self, kind: str) -> list[Mark]:
        return [m for m in self.marks if m.kind == kind]


def _collect(group: Mapping[str, Any], ox: float, oy: float, panel: Panel, orient: str = "") -> None:
    for node in group.get("items", []):
        role, kind = node.get("role", ""), node.get("marktype", "")
        for item in node.get("items", []):
            x, y = ox + item.get("x", 0), oy + item.get("y", 0)
            if kind == "group":
                _collect(item, x, y, panel, item.get("orient", orient) if role == "axis" else orient)
            elif role == "mark":
                panel.marks.append(Mark(kind, x, y, item))
            elif role == "axis-label" and item.get("opacity", 1) > 0:
                panel.ticks[orient].append((y if orient in ("left", "right") else x, str(item["text"])))
            elif role == "axis-tick":
                panel.tick_marks[orient] += 1
            elif role == "axis-title":
                panel.axis_titles[orient] = " ".join(item["text"]) if isinstance(item["text"], list) else item["text"]
            elif role == "legend-label":
                panel.legend.append(str(item["text"]))
                panel.legend_limits.append(item.get("limit", 0))
            elif role == "legend-symbol":
                panel.legend_symbols.append(item)


def panels(spec: Mapping[str, Any]) -> list[Panel]:
    """What Vega draws for `spec`, panel by panel: one per facet cell (titled by its header),
    or the whole view."""
    root = vlc.vegalite_to_scenegraph(dict(spec))["scenegraph"]["items"][0]
    nodes = {node.get("name"): node for node in root.get("items", [])}
    if "cell" not in nodes:
        whole = Panel(None)
        _collect(root, 0.0, 0.0, whole)
        return [whole]
    titles = {}
    for header in nodes["column_header"]["items"]:
        texts: list[str] = []
        _texts(header, texts)
        titles[header.get("x", 0)] = texts[0]
    out = []
    for cell in nodes["cell"]["items"]:
        panel = Panel(titles[cell.get("x", 0)])
        _collect(cell, 0.0, 0.0, panel)
        out.append(panel)
    return out


def _texts(node: Mapping[str, Any], out: list[str]) -> None:
    for child in node.get("items", []):
        if child.get("marktype") == "text":
            out += [str(i["text"]) for i in child["items"]]
        for item in child.get("items", []):
            _texts(item, out)


def number(label: str) -> float:
    """An axis label as Vega printed it: '1,400', '−7.7%', '+5%'."""
    text = label.replace(",", "").replace("\u2212", "-").replace("+", "")  # d3 prints U+2212
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


def digits(text: str) -> tuple[int, int]:
    """A number's decimal places and significant digits as written, trailing zeros dropped
    ('2,180' -> (0, 3), '0.70' -> (1, 1), '0' -> (0, 1))."""
    _, figures, exponent = Decimal(text.replace(",", "").replace("\u2212", "-")).normalize().as_tuple()
    assert isinstance(exponent, int), text
    return max(0, -exponent), len(figures)


def own_digits(where: str, labels: list[tuple[float, str]], data: list[float]) -> None:
    """No axis label carries a digit the figure's own values do not: neither a decimal place
    finer than the finest value's, nor more significant digits than the longest value has
    (a constant 2180 was labelled "2,179.9999999999986" to "2,180.0000000000023")."""
    places = max(digits(repr(v))[0] for v in data)
    significant = max(digits(repr(v))[1] for v in data)
    for _, text in labels:
        got = digits(text)
        assert got[0] <= places and got[1] <= significant, (
            f"{where}: the label {text!r} carries more digits than the values ({places} places, {significant} "
            f"significant): {[t for _, t in labels]}"
        )


def inverse(ticks: list[tuple[float, str]], log: bool = False) -> tuple[Callable[[float], float], float]:
    """The axis read backwards: pixel -> value (from its first and last labels), and the value
    of one pixel at the middle of the axis; every other label must sit on the same line."""
    points = sorted((pos, number(text)) for pos, text in ticks)
    assert points, "an axis without labels cannot be read"
    if len(points) == 1:  # every value drawn is the same one: only its label's place reads
        ((p0, v0),) = points
        return (lambda pos: v0 if abs(pos - p0) <= 1 else math.nan), 1e-12
    (p0, v0), (p1, v1) = points[0], points[-1]
    f, g = (math.log, math.exp) if log else ((lambda v: v), (lambda v: v))

    def at(pos: float) -> float:
        return g(f(v0) + (pos - p0) / (p1 - p0) * (f(v1) - f(v0)))

    for pos, value in points:
        assert at(pos) == pytest.approx(value, rel=1e-6, abs=1e-9), f"axis labels off their scale: {points}"
    middle = (p0 + p1) / 2
    return at, abs(at(middle + 1) - at(middle))


# -- reading the run folders (independently of the code under test) -----------------------


def _same(cell: str, wanted: object) -> bool:
    try:
        return float(cell) == float(str(wanted))
    except ValueError:
        return cell == str(wanted)


def read_run(root: Path, run_id: str) -> tuple[dict[str, Any], list[dict[str, str]]]:
    folder = root / "runs" / run_id
    meta = yaml.safe_load((folder / "run.yaml").read_text())
    rows = list(csv.DictReader(io.StringIO((folder / "results.csv").read_text())))
    return meta, rows


def label(meta: Mapping[str, Any], row: Mapping[str, str]) -> str:
    return ", ".join(f"{c}={row[c]}" for c in meta.get("conditions") or []) or "all"


def _excluded(meta: Mapping[str, Any], row: Mapping[str, str]) -> bool:
    return any(
        row["trial"]
        and int(row["trial"]) == e["trial"]
        and all(_same(row[c], v) for c, v in (e.get("at") or {}).items())
        for e in meta.get("excluded") or []
    )


def trials(root: Path, run_id: str, figure: str) -> dict[str, list[tuple[int | None, float]]]:
    """The kept trials of a metric (or the per-trial values of a rate) by condition label."""
    meta, rows = read_run(root, run_id)
    rate = (meta.get("rates") or {}).get(figure)
    out: dict[str, list[tuple[int | None, float]]] = defaultdict(list)
    for row in rows:
        if _excluded(meta, row):
            continue
        trial = int(row["trial"]) if row["trial"] else None
        if rate is not None:
            num, den = float(row[rate["numerator"]]), float(row[rate["denominator"]])
            if den > 0:
                out[label(meta, row)].append((trial, num / den))
        elif row.get(figure, "") != "":
            out[label(meta, row)].append((trial, float(row[figure])))
    return dict(out)


def values(found: list[tuple[int | None, float]]) -> list[float]:
    return sorted(v for _, v in found)


# -- the oracle, chart kind by chart kind -----------------------------------------------


@dataclass
class Tally:
    """What the oracle checked: charts by kind, panels and points."""

    charts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    panels: int = 0
    points: int = 0
    wrong: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # kind -> "path: what"

    def verdict(self) -> str:
        """Every wrong chart, and how many of each kind, for the failure message."""
        counts = ", ".join(f"{len(v)} of {self.charts[k]} {k} charts" for k, v in self.wrong.items())
        return f"wrong: {counts}\n" + "\n".join(line for lines in self.wrong.values() for line in lines[:5])


def drawn(marks: list[Mark], read: Callable[[float], float], axis: str = "y") -> list[float]:
    return sorted(read(m.y if axis == "y" else m.x) for m in marks)


def close(got: list[float], want: list[float], pixel: float, where: str) -> None:
    assert len(got) == len(want), f"{where}: draws {len(got)} points, its rows are {len(want)}"
    for g, w in zip(got, want, strict=True):
        assert abs(g - w) <= 1.5 * pixel + 1e-9 * abs(w), f"{where}: a point drawn at {g:.6g}, its row says {w:.6g}"


def check_trials(root: Path, run_id: str, metric: str, spec: Mapping[str, Any], tally: Tally) -> None:
    want = trials(root, run_id, metric)
    got = panels(spec)
    assert sorted(p.title or "" for p in got) == sorted(want), f"{run_id} {metric}: panels"
    for p in got:
        where = f"{run_id} {metric} trials, panel {p.title}"
        expected = values(want[p.title or ""])
        dots = p.of("symbol")
        read, pixel = inverse(p.ticks["left"])
        own_digits(where, p.ticks["left"], expected)
        assert sorted(m.first for m in dots) == pytest.approx(expected, rel=1e-9), f"{where}: the values drawn"
        close(drawn(dots, read), expected, pixel, where)
        if len(expected) >= 2 and len(set(expected)) == 1:  # every trial identical: a point, no interval
            (tick,) = p.of("rect")
            assert p.of("rule") == [], f"{where}: an interval drawn for identical trials"
            close([read(tick.y + tick.item["height"] / 2)], expected[:1], pixel, f"{where}: the mean")
        elif len(expected) >= 2:
            (tick,), (rule,) = p.of("rect"), p.of("rule")
            mean = statistics.mean(expected)
            close([read(tick.y + tick.item["height"] / 2)], [mean], pixel, f"{where}: the mean")
            low, high = sorted((read(rule.y), read(rule.y + rule.item["y2"] - rule.item["y"])))
            slack = pixel + 1e-9 * abs(mean)
            assert low - slack <= mean <= high + slack, f"{where}: the interval misses the mean"
        tally.panels += 1
        tally.points += len(dots)


def check_sequence(root: Path, run_id: str, metric: str, spec: Mapping[str, Any], tally: Tally) -> None:
    want = trials(root, run_id, metric)
    (p,) = panels(spec)
    read_x, _ = inverse(p.ticks["bottom"])
    read_y, pixel = inverse(p.ticks["left"])
    dots = p.of("symbol")
    assert sorted({m.field("condition") for m in dots}) == sorted(want), f"{run_id} {metric} sequence"
    for at, found in want.items():
        mine = [m for m in dots if m.field("condition") == at]
        middle = statistics.median(v for _, v in found)
        assert sorted(round(read_x(m.x)) for m in mine) == sorted(t for t, _ in found if t is not None)
        close(
            drawn(mine, read_y),
            sorted(v / middle - 1 if middle else 0.0 for _, v in found),
            pixel,
            f"{run_id} {metric} at {at}",
        )
        tally.points += len(mine)
    tally.panels += 1


def check_reported(root: Path, run_id: str, metric: str, spec: Mapping[str, Any], tally: Tally) -> None:
    want = trials(root, run_id, metric)
    (p,) = panels(spec)
    read, pixel = inverse(p.ticks["left"])
    own_digits(f"{run_id} {metric} reported", p.ticks["left"], [v for f in want.values() for v in values(f)])
    dots = p.of("symbol")
    for at, found in want.items():
        mine = [m for m in dots if m.field("condition") == at]
        close(drawn(mine, read), values(found), pixel, f"{run_id} {metric} reported at {at}")
    assert len(dots) == sum(len(f) for f in want.values())
    tally.panels += 1
    tally.points += len(dots)


def check_rate(root: Path, run_id: str, rate: str, spec: Mapping[str, Any], tally: Tally) -> None:
    """A rate with the trial as its unit: every kept trial's rate a dot, and per condition one
    dot at the mean of those rates (never the pooled tokens' proportion), with its interval
    around it, and no rule where every trial gave the same rate."""
    want = trials(root, run_id, rate)
    (p,) = panels(spec)
    read, pixel = inverse(p.ticks["left"])
    dots, rules = p.of("symbol"), p.of("rule")
    means = [m for m in dots if "n (trials): " in str(m.item.get("description", ""))]
    assert sorted(m.field("condition") for m in means) == sorted(want), f"{run_id} {rate}: one mean per condition"
    for at, found in want.items():
        where = f"{run_id} {rate} at {at}"
        kept = values(found)
        mine = [m for m in dots if m.field("condition") == at and m not in means]
        close(drawn(mine, read), kept, pixel, f"{where}: the trials")
        (mean,) = [m for m in means if m.field("condition") == at]
        close([read(mean.y)], [statistics.mean(kept)], pixel, f"{where}: the mean of the trials' rates")
        ruled = [r for r in rules if r.field("condition") == at]
        if len(set(kept)) == 1:
            assert ruled == [], f"{where}: an interval drawn for identical trials"
        elif len(kept) >= 2:
            (rule,) = ruled
            low, high = sorted((read(rule.y), read(rule.y + rule.item["y2"] - rule.item["y"])))
            assert low - pixel >= 0 and high + pixel <= 1 + 2 * pixel, f"{where}: the interval leaves [0, 1]"
            assert low - pixel <= statistics.mean(kept) <= high + pixel, f"{where}: the interval misses the mean"
    tally.panels += 1
    tally.points += len(dots)


@dataclass(frozen=True)
class Context:
    """What the charts of claims and grids are about (from the ledger); their values still
    come from the run folders."""

    root: Path
    metric: Mapping[str, str]  # claim or grid id -> metric
    condition: Mapping[str, str]  # claim id -> its one condition's label, when it has one
    sides: Mapping[str, int]  # claim id -> how many sides its trials chart draws (two per condition)
    rows: Mapping[str, list[tuple[str, float, float | None, float | None, float | None]]]  # chart -> rows
    cells: Mapping[str, list[tuple[str, str, str]]]  # grid id -> (run, first level, series)
    grid_at: Mapping[str, str]  # grid id -> the label of its condition in its runs
    statements: Mapping[str, str] = field(default_factory=dict)  # claim id -> its statement


def check_sides(ctx: Context, claim: str, spec: Mapping[str, Any], tally: Tally) -> None:
    (p,) = panels(spec)
    read, pixel = inverse(p.ticks["left"])
    dots = p.of("symbol")
    sides: dict[str, list[Mark]] = defaultdict(list)
    for m in dots:
        sides[m.field("side")].append(m)
    assert len(sides) == ctx.sides[claim], f"claim {claim}: {len(sides)} sides drawn of {ctx.sides[claim]}"
    assert sorted(p.legend) == sorted(sides) and p.legend_limits == [0] * len(sides), f"claim {claim}: legend"
    everything: list[float] = []
    for side, mine in sides.items():
        at, _, who = side.rpartition(" · ")
        run_id = who.split(": ", 1)[1]
        found = trials(ctx.root, run_id, ctx.metric[claim])[at or ctx.condition[claim]]
        close(drawn(mine, read), values(found), pixel, f"claim {claim}, {side}")
        everything += values(found)
        xs = {round(m.x) for m in mine}
        assert len(xs) == 1, f"claim {claim}: {side} drawn in {len(xs)} places"
    own_digits(f"claim {claim}", p.ticks["left"], everything)
    tally.panels += 1
    tally.points += len(dots)


def percent(ratio: float) -> str:
    """A ratio as the cards print its change, and 1 as '0%' (what a reader of the axis sees)."""
    return "0%" if ratio == 1 else f"{(ratio - 1) * 100:+.1f}%"


def multiple(ratio: float) -> str:
    """A rate claim's ratio as the cards print it, labelled as one: three decimals below 10
    (1 -> '1.000x', 2.3864 -> '2.386x'), three significant digits from 10 on."""
    return f"{ratio:.3f}x" if ratio < 10 else f"{ratio:.3g}x"


def contrast(a: str, b: str) -> float:
    def lum(h: str) -> float:
        c = [int(h[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    low, high = sorted((lum(a), lum(b)))
    return (high + 0.05) / (low + 0.05)


def round_tick(text: str, ratios: bool) -> bool:
    """A forest tick at a round value: the change it stands for has at most two significant
    digits ('-15%', '+150%', '0.5x', '2.5x'; never '-7.7%' at an interval's end, nor '2.386x')."""
    change = Decimal(text[:-1].replace(",", "").replace("+", "")) - (1 if ratios else 0)
    return change == 0 or len(change.normalize().as_tuple().digits) <= 2


def tick_value(text: str, ratios: bool) -> float:
    """The ratio a forest tick stands for: '2.5x' -> 2.5, '-15%' -> 0.85."""
    return float(text[:-1].replace(",", "")) if ratios else 1 + number(text)


def covered(chart: str, ticks: list[float], drawn_x: list[float]) -> None:
    """The ticks cover what is drawn, not only its ends: at least two, and nothing drawn farther
    beyond the outermost ticks than the widest gap between two neighbours."""
    assert len(ticks) >= 2, f"{chart}: one tick cannot be read"
    gap = max(b - a for a, b in itertools.pairwise(ticks))
    assert all(ticks[0] - gap <= x <= ticks[-1] + gap for x in drawn_x), f"{chart}: ticks {ticks}, drawn {drawn_x}"


def short(statement: str) -> str:
    """A claim's statement as its forest row reads it: the first sentence, at most 60 characters,
    cut at a word with an ellipsis."""
    first = " ".join(statement.split()).split(". ")[0].rstrip(".")
    if len(first) <= 60:
        return first
    words = first[:60].split(" ")
    return " ".join(words[:-1] if len(words) > 1 else words)[:59].rstrip(" ,;:") + "…"


def row_labels(spec: Mapping[str, Any]) -> list[tuple[float, str, list[str]]]:
    """The forest's row labels as Vega draws them: x (in the plot's pixels, 0 at its left edge),
    alignment and lines."""
    out: list[tuple[float, str, list[str]]] = []

    def walk(group: Mapping[str, Any], ox: float, orient: str) -> None:
        for node in group.get("items", []):
            for item in node.get("items", []):
                x = ox + item.get("x", 0)
                if node.get("marktype") == "group":
                    walk(item, x, item.get("orient", orient) if node.get("role") == "axis" else orient)
                elif node.get("role") == "axis-label" and orient == "left":
                    text = item["text"]
                    out.append((x, str(item.get("align")), list(text) if isinstance(text, list) else [str(text)]))

    walk(vlc.vegalite_to_scenegraph(dict(spec))["scenegraph"]["items"][0], 0.0, "")
    return out


def check_forest(ctx: Context, chart: str, spec: Mapping[str, Any], tally: Tally) -> None:
    (p,) = panels(spec)
    want = ctx.rows[chart]
    rules = p.of("rule")
    one = [m for m in rules if m.item.get("description") == "at: 1"]
    assert len(one) == 1, f"{chart}: one line at no change"
    # Shaded: the changes smaller than worth calling (1 ± min_effect), what supported and
    # contradicted are judged by; dashed, only where wider, the band "within noise" is judged by.
    (shade,) = [m for m in p.of("rect") if str(m.item.get("description", "")).startswith("lo: ")]
    edges = sorted((m for m in rules if "strokeDash" in m.item), key=lambda m: m.x)
    assert len(edges) in (0, 2), f"{chart}: the within-noise band, each side, or none"
    # The log scale from the line at 1 and the shaded band's edge at 1 + min_effect (known ratios).
    step = math.log(float(shade.field("hi"))) / (shade.x + shade.item["width"] - one[0].x)
    assert all(not shade.x < m.x < shade.x + shade.item["width"] for m in edges), f"{chart}: dashed inside shade"

    def read(x: float) -> float:
        return math.exp((x - one[0].x) * step)

    pixel = read(one[0].x + 1) - 1
    diamonds = [m for m in p.of("symbol") if m.item.get("shape") == "diamond"]
    close(sorted(read(m.x) for m in diamonds), sorted(r for _, r, *_ in want), 2 * pixel, f"{chart}: ratios")
    crosses = [m for m in p.of("symbol") if m.item.get("shape") == "cross"]
    claimed = sorted(c for *_, c in want if c is not None)
    close(sorted(read(m.x) for m in crosses), claimed, 2 * pixel, f"{chart}: claimed values")
    intervals = sorted((read(m.x), read(m.item["x2"] + m.x - m.item["x"])) for m in rules if "x2" in m.item)
    ends = sorted((lo, hi) for _, _, lo, hi, _ in want if lo is not None and hi is not None)
    assert len(intervals) == len(ends), f"{chart}: {len(intervals)} intervals for {len(ends)} rows"
    for (a, b), (lo, hi) in zip(intervals, ends, strict=True):
        assert abs(a - lo) <= 2 * pixel * lo and abs(b - hi) <= 2 * pixel * hi, f"{chart}: interval"
    # The axis: percent change (a rate claim's: its ratio, labelled as one, never a percent change
    # beside percentages), every tick labelled, at round values that cover what is drawn.
    ratios = "ratio (log scale)" in p.axis_titles["bottom"]
    shown = multiple if ratios else percent
    labels = dict((text, pos) for pos, text in p.ticks["bottom"])
    assert p.tick_marks["bottom"] == len(p.ticks["bottom"]), f"{chart}: a tick without its label"
    zero = "1x" if ratios else "0%"
    assert zero in labels, f"{chart}: no label at {zero}: {sorted(labels)}"
    assert abs(labels[zero] - one[0].x) <= 1, f"{chart}: {zero} is not at the line of no change"
    for text, pos in labels.items():
        assert round_tick(text, ratios), f"{chart}: the tick {text!r} is not a round value: {sorted(labels)}"
        assert abs(read(pos) - tick_value(text, ratios)) <= 2 * pixel * read(pos), f"{chart}: {text} off its place"
    marks = [*diamonds, *crosses, *(m for m in rules if "x2" in m.item)]
    drawn_x = [x for m in marks for x in (m.x, m.item.get("x2", m.item["x"]) + m.x - m.item["x"])]
    covered(chart, sorted(labels.values()), drawn_x)
    assert ratios or "change in percent" in p.axis_titles["bottom"]
    # Each row named by its claim's statement (shortened; the id only in the tooltip) or its
    # effect, with its figures, in a column left of the plot: no label crosses a gridline or mark.
    rows_ = row_labels(spec)
    assert all(align == "right" and x < 0 for x, align, _ in rows_), f"{chart}: a label inside the plot: {rows_}"
    assert all(m.x >= -0.5 for m in p.marks), f"{chart}: a mark left of the plot, under the labels"
    texts = [" ".join(lines) for _, _, lines in rows_]
    assert ratios == all(" pp ratio " in t for t in texts), f"{chart}: a rate claim's axis is its ratio: {texts}"
    for name, ratio, low, high, _ in want:
        head, _, at = name.partition(" @ ")
        numbers = f"{shown(ratio)} [{shown(low)}, {shown(high)}]" if low is not None and high is not None else ""
        if low is not None and low == high:  # every trial identical on both sides: no interval to draw
            numbers = f"{shown(ratio)} {'' if ratios else '('}exact: every trial identical on both sides"
        start = short(ctx.statements[head]) if head in ctx.statements else head
        start += f" at {at}" if at else ""
        assert any(t.startswith(start + " ") and numbers in t for t in texts), f"{chart}: {start} {numbers} in {texts}"
        assert all(not t.startswith(head + " ") for t in texts) or head not in ctx.statements, f"{chart}: an id"
    assert len(set(texts)) == len(texts) == len(want)
    key = ["interval and measured change, coloured by verdict", "claimed change"][: 1 + bool(claimed)]
    assert p.legend[:-2] == key and p.legend[-2].startswith("smaller than worth calling (±")
    assert p.legend[-1] == "band for within noise (dashed, where wider): the TOST interval must lie inside"
    assert p.legend_limits == [0] * len(p.legend)
    for m in [*crosses, *one, *diamonds, *(m for m in rules if "x2" in m.item)]:
        colour = str(m.item.get("stroke") or m.item.get("fill"))
        assert contrast(colour, WHITE) >= 3 and contrast(colour, SLATE) >= 3, f"{chart}: {colour} unreadable"
    assert spec["width"] == "container"
    tally.panels += 1
    tally.points += len(diamonds) + len(crosses)


def _at(label_: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in label_.split(", ")) if label_ != "all" else {}


def check_sweep(ctx: Context, chart: str, figure: str, spec: Mapping[str, Any], tally: Tally, own: str = "") -> None:
    """At each measured value of the swept condition, and nowhere else: one tick per measured
    value, one point per series there (its condition's mean) and one interval rule through it
    unless every trial was identical; no line and no band between values. Every series named
    in the legend in full, in its points' colour."""
    (p,) = panels(spec)
    swept = p.axis_titles["bottom"]
    assert not p.of("line") and not p.of("area"), f"{chart}: a line or band drawn between measured values"
    read_y, pixel = inverse(p.ticks["left"])
    dots = p.of("symbol")
    series = sorted({m.field("series") for m in dots})
    assert sorted(p.legend) == series, f"{chart}: legend {p.legend}, series {series}"
    fills = {m.field("series"): m.item["fill"] for m in dots}
    for text, symbol in zip(p.legend, p.legend_symbols, strict=True):
        assert symbol.get("opacity", 1) == 1 and symbol["fill"] == fills[text], f"{chart}: {text}"
    runs = sorted((r.name for r in (ctx.root / "runs").iterdir()), key=len, reverse=True)
    measured: dict[str, dict[float, list[float]]] = {}
    for s in series:
        run_id = next((r for r in runs if r in s), own)
        rest = s.split(run_id, 1)[1].lstrip(", ") if run_id in s else ("" if s == figure else s)
        measured[s] = {}
        for at, found in trials(ctx.root, run_id, figure).items():
            where = _at(at)
            x = float(where.pop(swept))
            if ", ".join(f"{k}={v}" for k, v in where.items()) == rest:
                measured[s][x] = [v for _, v in found]
    loads = sorted({x for m in measured.values() for x in m})
    ticks = sorted((number(text), pos) for pos, text in p.ticks["bottom"])
    assert [x for x, _ in ticks] == loads, f"{chart}: ticks at {[x for x, _ in ticks]}, measured at {loads}"
    assert p.tick_marks["bottom"] == len(loads), f"{chart}: {p.tick_marks['bottom']} ticks for {len(loads)} loads"
    own_digits(f"{chart} x", p.ticks["bottom"], loads)
    drawn_values = [v for m in measured.values() for vs in m.values() for v in [*vs, statistics.mean(vs)]]
    own_digits(f"{chart} y", p.ticks["left"], drawn_values)  # the trials, and the means drawn
    half = min((b - a for (_, a), (_, b) in itertools.pairwise(ticks)), default=math.inf) / 2

    def load_of(mark: Mark) -> float:
        (x, pos) = min(ticks, key=lambda t: abs(t[1] - mark.x))
        assert abs(pos - mark.x) < half, f"{chart}: a mark between two measured values"
        return x

    rules = p.of("rule")
    spread = 0
    for s, means in measured.items():
        mine = sorted((m for m in dots if m.field("series") == s), key=lambda m: m.x)
        assert [load_of(m) for m in mine] == sorted(means), f"{chart}: {s} drawn at {[load_of(m) for m in mine]}"
        close([read_y(m.y) for m in mine], [statistics.mean(means[x]) for x in sorted(means)], pixel, f"{chart}: {s}")
        for m in mine:
            through = [r for r in rules if abs(r.x - m.x) <= 0.5 and r.field("series") == s]
            values_here = means[load_of(m)]
            if len(values_here) < 2 or len(set(values_here)) == 1:
                assert not through, f"{chart}: {s} at {load_of(m)}: an interval drawn for identical trials"
            else:
                (rule,) = through
                low, high = sorted((read_y(rule.y), read_y(rule.y + rule.item["y2"] - rule.item["y"])))
                assert low - pixel <= read_y(m.y) <= high + pixel, f"{chart}: {s}: the interval misses the mean"
                spread += 1
    assert len(rules) == spread, f"{chart}: {len(rules)} interval rules for {spread} conditions with spread"
    tally.panels += 1
    tally.points += len(dots)


def check_cells(ctx: Context, grid: str, spec: Mapping[str, Any], tally: Tally) -> None:
    (p,) = panels(spec)
    read, pixel = inverse(p.ticks["left"])
    dots = p.of("symbol")
    cells = ctx.cells[grid]
    assert len(dots) == len(cells), f"grid {grid}: {len(dots)} points for {len(cells)} cells"
    factor = p.axis_titles["bottom"]  # the x axis: the first factor's two levels
    for run_id, level, series in cells:
        (m,) = [m for m in dots if m.field("series") == series and m.field(factor) == level]
        expected = statistics.mean(v for _, v in trials(ctx.root, run_id, ctx.metric[grid])[ctx.grid_at[grid]])
        close([read(m.y)], [expected], pixel, f"grid {grid}: {run_id}")
    tally.panels += 1
    tally.points += len(dots)


def context(root: Path) -> Context:
    from generator.analysis.attribution import attribute_all
    from generator.analysis.audit import audit
    from generator.analysis.claims import chain, evaluate_all
    from generator.analysis.comparison import Settings

    checked = audit(root, stale_is_error=False)
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    evaluations = evaluate_all(checked.ledger, Settings(), states)
    grids = attribute_all(checked.ledger, Settings())
    metric = {i: ev.claim.metric or "" for i, ev in evaluations.items()}
    condition = {i: ev.conditions[0].label for i, ev in evaluations.items() if len(ev.conditions) == 1}
    sides = {i: 2 * len(ev.conditions) for i, ev in evaluations.items()}
    rows: dict[str, list[tuple[str, float, float | None, float | None, float | None]]] = {}
    for claim_id in evaluations:
        out = []
        for ev in (evaluations[i] for i in chain(claim_id, checked.ledger)):
            claimed = ev.comparison.claimed_ratio if ev.comparison is not None else None
            for c in ev.conditions:
                if c.ratio is not None:
                    name = f"{ev.claim.id} @ {c.label}" if len(ev.conditions) > 1 else ev.claim.id
                    out.append((name, c.ratio, c.ci_low, c.ci_high, claimed))
        rows[f"claims/{claim_id}/charts/forest.json"] = out
    cells, grid_at = {}, {}
    for g in grids:
        metric[g.attribution.id] = g.attribution.metric
        rows[f"claims/{g.attribution.id}/charts/effects.json"] = [
            (e.name, e.ratio, e.ci[0], e.ci[1], None) for e in g.effects
        ]
        rest = g.factors[1:]
        cells[g.attribution.id] = [
            (c.run, c.levels[0], ", ".join(f"{f}={v}" for f, v in zip(rest, c.levels[1:], strict=True)))
            for c in g.cells
        ]
        meta, rows_ = read_run(root, g.attribution.runs[0])
        grid_at[g.attribution.id] = next(
            label(meta, r) for r in rows_ if all(_same(r[k], v) for k, v in g.attribution.at.items())
        )
    statements = {i: ev.claim.statement for i, ev in evaluations.items()}
    return Context(root, metric, condition, sides, rows, cells, grid_at, statements)


RUN_CHART = re.compile(r"runs/(?P<run>[^/]+)/charts/(?P<name>.+)-(?P<kind>trials|sequence|reported|sweep)\.json")
RATE_CHART = re.compile(r"runs/(?P<run>[^/]+)/charts/rate-(?P<name>.+)\.json")
CLAIM_CHART = re.compile(r"claims/(?P<id>[^/]+)/charts/(?P<file>.+)\.json")
REPORT_SWEEP = re.compile(r"ledger/sweeps/.+\.json")


def charts(out: Mapping[str, bytes]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(out):
        if path.endswith(".json") and ("/charts/" in path or path.startswith("ledger/sweeps/")):
            yield path, json.loads(out[path])


def oracle(root: Path, out: Mapping[str, bytes]) -> Tally:
    """Every chart of `out` checked against the run folders under `root`; what is wrong is
    collected chart by chart (a failure names them all, not the first)."""
    ctx, tally = context(root), Tally()
    for path, spec in charts(out):
        kind, check = _dispatch(root, ctx, path, spec, tally)
        tally.charts[kind] += 1
        try:
            check()
        except (AssertionError, LookupError, ValueError, ArithmeticError) as error:  # a missing label or panel
            tally.wrong[kind].append(f"{path}: {type(error).__name__}: {str(error).splitlines()[0]}")
    return tally


def _dispatch(
    root: Path, ctx: Context, path: str, spec: dict[str, Any], tally: Tally
) -> tuple[str, Callable[[], None]]:
    """The kind of the chart at `path` and its check."""
    if m := RUN_CHART.fullmatch(path):
        run_id, name, kind = m["run"], m["name"], m["kind"]
        if kind == "sweep":
            return kind, lambda: check_sweep(ctx, path, name, spec, tally, own=run_id)
        check = {"trials": check_trials, "sequence": check_sequence, "reported": check_reported}[kind]
        return kind, lambda: check(root, run_id, name, spec, tally)
    if m := RATE_CHART.fullmatch(path):
        return "rate", lambda: check_rate(root, m["run"], m["name"], spec, tally)
    if m := CLAIM_CHART.fullmatch(path):
        name = m["file"]
        if name.startswith("trials-"):
            return "sides", lambda: check_sides(ctx, name.removeprefix("trials-"), spec, tally)
        if name in ("forest", "effects"):
            return name, lambda: check_forest(ctx, path, spec, tally)
        if name == "cells":
            return name, lambda: check_cells(ctx, m["id"], spec, tally)
        if name == "sweep":
            return "claim sweep", lambda: check_sweep(ctx, path, ctx.metric[m["id"]], spec, tally)
    if REPORT_SWEEP.fullmatch(path):
        return "report sweep", lambda: check_sweep(ctx, path, _sweep_figure(root, path), spec, tally)
    raise AssertionError(f"{path}: a chart the oracle does not know; teach it before shipping it")


def _sweep_figure(root: Path, path: str) -> str:
    """The figure of a report's k-th sweep directive, read from the report itself."""
    slug, k = path.removeprefix("ledger/sweeps/").rsplit("/", 1)
    text = (root / "site_src" / "reports" / f"{slug}.md").read_text()
    figures = re.findall(r"^<!-- sweep ([^:]+):", text, flags=re.M)
    return str(figures[int(k.removesuffix(".json")) - 1])


# -- the publications -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def example() -> dict[str, bytes]:
    return generate(ROOT)


def test_every_chart_of_the_example_publication_draws_its_own_rows(example: dict[str, bytes]) -> None:
    tally = oracle(ROOT, example)
    assert not tally.wrong, tally.verdict()
    assert dict(tally.charts) == {
        "trials": 74,
        "sequence": 74,
        "sweep": 74,
        "reported": 10,
        "rate": 7,
        "sides": 11,  # the four claims on reported figures have no trials to draw
        "forest": 15,
        "effects": 2,
        "cells": 2,
        "claim sweep": 9,
        "report sweep": 1,
    }
    assert tally.panels > 0 and tally.points > 0


def test_each_panel_of_a_faceted_trials_chart_draws_its_own_five_trials(example: dict[str, bytes]) -> None:
    spec = json.loads(example["runs/2026-11-29-testbed-nmax2/charts/tokens_per_second-trials.json"])
    by_panel = {p.title: sorted(m.first for m in p.of("symbol")) for p in panels(spec)}
    assert by_panel == {
        "concurrency=1": [820.133, 855.347, 864.192, 900.886, 921.284],
        "concurrency=4": [1350.65, 1450.31, 1453.3, 1478.37, 1527.52],
    }
    assert [len(p.of("rect")) for p in panels(spec)] == [1, 1]  # one mean each, not both


def test_the_overstated_claims_forest_is_labelled_at_round_percents_with_its_statement_left_of_the_plot(
    example: dict[str, bytes],
) -> None:
    """The axis was labelled only at the interval's ends ('-16.0%', '-7.7%', '-2.4%', '0%') and
    the row's label, the claim's id, was drawn inside the plot across its gridlines. Now round
    ticks cover the axis, and the row reads the claim's statement, shortened, in a column of its
    own left of the plot."""
    spec = json.loads(example["claims/testbed-throughput-nmax4-vs-nmax3/charts/forest.json"])
    (p,) = panels(spec)
    assert [text for _, text in sorted(p.ticks["bottom"])] == ["-15%", "-10%", "-5%", "0%", "+5%"]
    ((x, align, lines),) = row_labels(spec)
    assert lines == [
        *("On the test bed, n_max 4", "generates fewer tokens per", "second…"),
        *("overstated: -5.1%", "[-7.7%, -2.4%]", "claimed -16.0%"),
    ]
    assert align == "right" and x < 0 <= min(m.x for m in p.marks)
    assert p.of("text") == []  # nothing written inside the plot
    assert p.legend == [
        "interval and measured change, coloured by verdict",
        "claimed change",
        "smaller than worth calling (±1.0%, shaded): supported and contradicted lie wholly outside",
        "band for within noise (dashed, where wider): the TOST interval must lie inside",
    ]


def test_a_rate_claims_forest_is_labelled_at_round_multiples(example: dict[str, bytes]) -> None:
    """The ratio axis read '1.000x' and '2.386x' (no change and the one row's ratio); now round
    multiples cover it."""
    spec = json.loads(example["claims/testbed-acceptance-nmax2-vs-nmax12/charts/forest.json"])
    (p,) = panels(spec)
    assert [text for _, text in sorted(p.ticks["bottom"])] == ["1x", "1.5x", "2x", "2.5x"]
    ((_, _, lines),) = row_labels(spec)
    assert lines[:3] == ["On the test bed, n_max 2", "accepts a larger share of", "drafted…"]


def test_a_forest_row_names_its_claim_by_statement_and_keeps_the_id_for_the_tooltip(
    example: dict[str, bytes],
) -> None:
    spec = json.loads(example["claims/testbed-drafting-matched/charts/forest.json"])
    (p,) = panels(spec)
    assert [lines[:3] for _, _, lines in row_labels(spec)] == [
        ["Drafting with n_max 2", "raises generation speed", "at…"],
        ["With both sides on the", "same GGML_NATIVE=OFF build", "(the…"],
    ]
    assert all("testbed-drafting" not in line for _, _, lines in row_labels(spec) for line in lines)
    diamonds = sorted(m.field("claim") for m in p.of("symbol") if m.item.get("shape") == "diamond")
    assert diamonds == ["testbed-drafting-matched", "testbed-drafting-native"]


def test_two_conditions_of_one_claim_are_labelled_in_full_and_apart(example: dict[str, bytes]) -> None:
    spec = json.loads(example["claims/testbed-throughput-nmax2-vs-nmax12-every-load/charts/forest.json"])
    title = ["On the test bed, n_max 2", "generates more tokens per", "second…"]
    assert sorted(lines[:4] for _, _, lines in row_labels(spec)) == [
        [*title, "at concurrency=1"],
        [*title, "at concurrency=4"],
    ]


def test_a_statement_is_drawn_as_text_never_as_markup(tmp_path: Path) -> None:
    """A statement is data: Vega draws '<b>' and '&' as the characters they are."""
    a, b = "2026-09-01-first", "2026-09-02-second"
    claim = (
        f"claims:\n  - id: marked\n    date: 2026-09-04\n    statement: 'B <b>is</b> & fast. Second.'\n"
        f"    metric: tokens_per_second\n    baseline: {a}\n    candidate: {b}\n    at: {{concurrency: 8}}\n"
    )
    report = f"---\ntitle: Claims\ndate: 2026-09-04\n{claim}---\n\n# Claims\n"
    root = write_tree(
        tmp_path / "pub", publication(measured_run(a), measured_run(b), extra={"site_src/reports/c.md": report})
    )
    spec = json.loads(generate(root)["claims/marked/charts/forest.json"])
    ((_, _, lines),) = row_labels(spec)
    assert lines[0] == "B <b>is</b> & fast"
    svg = vlc.vegalite_to_svg(spec)
    assert "B &lt;b&gt;is&lt;/b&gt; &amp; fast" in svg and "<b>" not in svg


def test_the_report_sweep_names_every_line_in_full(example: dict[str, bytes]) -> None:
    (p,) = panels(json.loads(example["ledger/sweeps/play-1-testbed/1.json"]))
    assert p.legend == [f"2026-11-29-testbed-{n}" for n in ("nmax12", "nmax2", "nmax3", "nmax4", "nodraft")]
    assert [s["opacity"] for s in p.legend_symbols] == [1] * 5
    assert p.legend_limits == [0] * 5  # never cut off


def test_claims_on_reported_figures_get_no_trials_chart(example: dict[str, bytes]) -> None:
    for claim in ("play1-acceptance-inversion", "play1-nmax2-throughput", "play1-hip-vs-vulkan", "shortlist-c8"):
        assert f"claims/{claim}/charts/trials-{claim}.json" not in example
        assert "## Trials behind" not in example[f"claims/{claim}/index.md"].decode()


# A generated publication: two condition columns (3 x 2 conditions), four trials each with
# values far apart per condition, one excluded trial, a reported run, claims at one and at
# several conditions (a metric and a rate) and a report sweep across two runs.
A, B, R = "2026-10-01-base", "2026-10-02-cand", "2026-10-03-reported"


def _results(scale: float) -> str:
    lines = ["trial,concurrency,context,tokens_per_second,draft_tokens,draft_accepted"]
    for trial in range(1, 5):
        for c in (1, 2, 4):
            for ctx in (512, 4096):
                tps = scale * (100 * c + (7 if ctx == 512 else 0)) + trial * 0.9
                lines.append(f"{trial},{c},{ctx},{tps:.3f},{1000 * c},{int(600 * c * scale) + 37 * trial * c}")
    return "\n".join(lines) + "\n"


def several_conditions(tmp_path: Path) -> Path:
    metrics = {
        "tokens_per_second": {"unit": "tok/s", "better": "higher"},
        "draft_tokens": {"unit": "tokens"},
        "draft_accepted": {"unit": "tokens"},
    }
    files: dict[str, str] = {}
    for run_id, scale, extra in (
        (A, 1.0, {}),
        (B, 1.2, {"excluded": [{"trial": 2, "at": {"concurrency": 4, "context": 512}, "reason": "a backup ran"}]}),
    ):
        files[f"runs/{run_id}/run.yaml"] = run_yaml(
            run_id, conditions=["concurrency", "context"], metrics=metrics, **extra
        )
        files[f"runs/{run_id}/manifest.yaml"] = MANIFEST
        files[f"runs/{run_id}/results.csv"] = _results(scale)
    reported = {"kind": "reported", "citation": "A forum post", "url": "https://example.org/p"}
    files[f"runs/{R}/run.yaml"] = run_yaml(
        R, source=reported, metrics={"tokens_per_second": metrics["tokens_per_second"]}, rates={}
    )
    files[f"runs/{R}/manifest.yaml"] = MANIFEST
    files[f"runs/{R}/results.csv"] = "trial,concurrency,tokens_per_second\n,1,95.5\n,4,380.2\n"
    claims = [
        {
            "id": "faster-everywhere",
            "statement": "The candidate is faster at every load.",
            "metric": "tokens_per_second",
            "baseline": A,
            "candidate": B,
            "at": [{"concurrency": 1, "context": 512}, {"concurrency": 4, "context": 512}],
            "claimed": "+25%",
        },
        {
            "id": "accepts-more",
            "statement": "The candidate accepts more drafts.",
            "metric": "acceptance",
            "baseline": A,
            "candidate": B,
            "at": {"concurrency": 2, "context": 4096},
        },
    ]
    meta = {"title": "Several conditions", "date": "2026-10-04", "claims": claims}
    body = f"# Several conditions\n\n<!-- sweep tokens_per_second: {A}, {B} -->\n"
    report = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n" + body
    tree: dict[str, str | bytes] = {**publication(files, extra={"site_src/reports/several.md": report})}
    return write_tree(tmp_path / "pub", tree)


def test_every_chart_of_a_publication_with_several_conditions_per_run_draws_its_own_rows(tmp_path: Path) -> None:
    root = several_conditions(tmp_path)
    out = generate(root)
    tally = oracle(root, out)
    assert not tally.wrong, tally.verdict()
    assert dict(tally.charts) == {
        "trials": 6,
        "sequence": 6,
        "sweep": 6,
        "reported": 1,
        "rate": 2,
        "sides": 2,
        "forest": 2,
        "claim sweep": 2,
        "report sweep": 1,
    }
    spec = json.loads(out[f"runs/{B}/charts/tokens_per_second-trials.json"])
    counts = {p.title: len(p.of("symbol")) for p in panels(spec)}
    assert counts == {
        "concurrency=1, context=512": 4,
        "concurrency=1, context=4096": 4,
        "concurrency=2, context=512": 4,
        "concurrency=2, context=4096": 4,
        "concurrency=4, context=512": 3,  # trial 2 is excluded
        "concurrency=4, context=4096": 4,
    }


RESULTS_HEAD = RESULTS.splitlines(keepends=True)[0]


def test_a_condition_whose_trials_are_identical_is_a_point_on_a_round_axis(tmp_path: Path) -> None:
    """Every trial at 0.7, or at 2,048 tokens: the panel's axis spanned nothing (one label), or
    the float noise between the trials and a mean or interval 2e-16 off them ("0.7000000000000001",
    "2,179.9999999999986"), and a rule of no width stood for an interval. Now the mean is the value,
    the axis spans ±2.5 steps of its last digit, labelled on that digit, and no rule is drawn."""
    run_id = "2026-09-01-constant"
    run = measured_run(run_id)
    run[f"runs/{run_id}/results.csv"] = RESULTS_HEAD + "".join(
        f"{trial},1,0.7,2048,1490\n{trial},8,{100 + trial}.5,16384,11790\n" for trial in range(1, 6)
    )
    root = write_tree(tmp_path / "pub", publication(run))
    out = generate(root)
    spec = json.loads(out[f"runs/{run_id}/charts/tokens_per_second-trials.json"])
    by_title = {p.title: p for p in panels(spec)}
    constant = by_title["concurrency=1"]
    assert [text for _, text in sorted(constant.ticks["left"], reverse=True)] == ["0.5", "0.6", "0.7", "0.8", "0.9"]
    read, pixel = inverse(constant.ticks["left"])
    close(drawn(constant.of("symbol"), read), [0.7] * 5, pixel, "the identical trials")
    (tick,) = constant.of("rect")
    close([read(tick.y + tick.item["height"] / 2)], [0.7], pixel, "their mean")
    assert constant.of("rule") == [], "an interval of no width is drawn as no interval"
    assert len(by_title["concurrency=8"].of("rule")) == 1  # the condition with spread keeps its interval
    tokens = {p.title: p for p in panels(json.loads(out[f"runs/{run_id}/charts/draft_tokens-trials.json"]))}
    assert [text for _, text in sorted(tokens["concurrency=1"].ticks["left"], reverse=True)] == [
        *("2,020", "2,030", "2,040", "2,050", "2,060", "2,070")
    ]
    assert [text for _, text in sorted(tokens["concurrency=8"].ticks["left"], reverse=True)] == [
        *("16,100", "16,200", "16,300", "16,400", "16,500", "16,600")
    ]
    assert [p.of("rule") for p in tokens.values()] == [[], []]
    tally = oracle(root, out)
    assert not {k: v for k, v in tally.wrong.items() if k in ("trials", "sweep")}, tally.verdict()
    assert (tally.charts["trials"], tally.charts["sweep"]) == (3, 3)


@pytest.mark.parametrize(
    ("run_id", "at", "labels"),
    [
        ("2026-11-29-testbed-nmax3", "concurrency=4", ["2,160", "2,170", "2,180", "2,190", "2,200"]),
        ("2026-11-30-grid-nmax2-1t", "concurrency=1", ["410", "420", "430", "440", "450"]),
    ],
)
def test_a_deterministic_counter_is_a_point_on_round_ticks(
    example: dict[str, bytes], run_id: str, at: str, labels: list[str]
) -> None:
    """draft_tokens at temperature 0 (every trial 2180): the axis read "2,179.9999999999986 …
    2,180.0000000000023" and a "95% CI" rule filled the panel, beside a table that says "no
    run-to-run variation". Now: one mean tick at the value, no rule, labels on its tens."""
    spec = json.loads(example[f"runs/{run_id}/charts/draft_tokens-trials.json"])
    (p,) = [p for p in panels(spec) if p.title == at]
    assert [text for _, text in sorted(p.ticks["left"], reverse=True)] == labels
    (value,) = {m.first for m in p.of("symbol")}
    assert len(p.of("symbol")) == 5 and p.of("rule") == []
    read, pixel = inverse(p.ticks["left"])
    (tick,) = p.of("rect")
    close([read(tick.y + tick.item["height"] / 2)], [value], pixel, f"{run_id} at {at}: the mean")


def test_the_digit_rule_refuses_labels_finer_than_the_values() -> None:
    """The oracle's own rule, on the labels the old chart drew around every trial at 2180."""
    noisy = [(0.0, "2,179.9999999999986"), (1.0, "2,180.0000000000000"), (2.0, "2,180.0000000000023")]
    with pytest.raises(AssertionError, match="carries more digits than the values"):
        own_digits("draft_tokens", noisy, [2180.0] * 5)
    own_digits("draft_tokens", [(0.0, "2,160"), (1.0, "2,180"), (2.0, "2,200")], [2180.0] * 5)
    with pytest.raises(AssertionError, match=r"'1\.5'"):
        own_digits("errors", [(0.0, "1"), (1.0, "1.5"), (2.0, "2")], [1.0, 2.0])


def test_a_forest_row_with_no_spread_says_so_instead_of_a_zero_width_interval() -> None:
    from generator.render.forest import forest_label

    row = {"claim": "acceptance @ concurrency=1", "verdict": "supported", "ratio": 2.386, "low": 2.386, "high": 2.386}
    assert forest_label(row) == (
        "acceptance\nat concurrency=1\nsupported: +138.6%\n(exact: every trial\nidentical on both sides)"
    )
    spread = {**row, "low": 2.2, "high": 2.5, "claimed": 2.0}
    assert (
        forest_label(spread) == "acceptance\nat concurrency=1\nsupported: +138.6%\n[+120.0%, +150.0%]\nclaimed +100.0%"
    )
