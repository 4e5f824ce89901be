"""Sweep charts: a figure at each measured value of a numeric condition (concurrency, request
rate, prompt length), its mean as a point and its interval as a rule, and nothing between two
measured values, for one run (its page), for the two sides of a claim (the claim's page) or for
several runs a report names with `<!-- sweep METRIC: RUN, RUN -->`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ..analysis.comparison import side
from ..analysis.stats import IDENTICAL
from ..format.conditions import condition_label
from ..ledger.records import Ledger, Run, SweepDirective
from ..ledger.references import swept_condition
from . import blocks
from . import charts as ch
from . import text as t
from .axes import sweep_axis
from .chart_templates import ChartTemplates


@dataclass(frozen=True)
class Sweep:
    condition: str
    rows: tuple[dict[str, object], ...]  # x, series, mean, n, low, high
    rate: bool = False  # the figure is a rate: its table reads in percent, as the run page and cards do


def sweep(runs: Sequence[tuple[str, Run]], figure: str, confidence: float) -> Sweep | None:
    """The figure's mean and interval against the swept condition, one series per run (named by
    its label) and per value of the other conditions. Reported runs have no interval: they are
    left out, and so is a run without the figure."""
    measured = [(label, run) for label, run in runs if not run.reported and figure in run.figures]
    name = swept_condition([run for _, run in measured])
    if name is None:
        return None
    rows: list[dict[str, object]] = []
    for label, run in measured:
        k = run.results.conditions.index(name)
        for at in run.results.condition_values():
            mapping = run.results.mapping(at)
            summary = side(run, figure, mapping, confidence).summary
            if summary is None:
                continue
            rest = condition_label((c, v) for j, (c, v) in enumerate(mapping.items()) if j != k)
            series = ", ".join(part for part in (label, "" if rest == "all" else rest) if part) or figure
            rows.append(
                {"x": float(at[k]), "series": series, "mean": summary.mean, "n": summary.n}
                | {"low": summary.ci_low, "high": summary.ci_high}
            )
    rate = any(figure in run.meta.rates for _, run in measured)
    return Sweep(name, tuple(rows), rate) if rows else None


def unit_of(runs: Sequence[Run], figure: str) -> str | None:
    """The figure's unit in the first run that declares it as a metric (rates have none)."""
    return next((run.meta.metrics[figure].unit for run in runs if figure in run.meta.metrics), None)


def sweep_spec(found: Sweep, figure: str, unit: str | None, level: str, templates: ChartTemplates) -> bytes:
    """The chart's spec: an interval of no width (every trial identical) has no ends, so no
    rule is drawn and no tooltip shows one."""
    rows = [r | {"low": None, "high": None} if r["low"] == r["high"] else r for r in found.rows]
    domain, ticks = sweep_axis(rows)
    return templates.spec(ch.sweep_chart, (figure, unit, found.condition, level), rows, domain, ticks)


def measured_at(found: Sweep) -> list[float]:
    """The values of the swept condition that were measured, in order."""
    return sorted({float(str(r["x"])) for r in found.rows})


def sweep_caption(found: Sweep, level: str, of: str = "") -> str:
    """What a sweep chart shows (`of`: whose mean, " of tokens_per_second for both sides"), and
    that nothing was measured between its values."""
    at = [t.number(x) for x in measured_at(found)]
    values = ", ".join(at[:-1]) + " and " + at[-1] if len(at) > 1 else at[0]
    between = " Nothing was measured in between, so nothing is drawn there." if len(at) > 1 else ""
    return (
        f"The mean{of} at each measured {found.condition} ({values}), with its {level} interval "
        f"(none where every trial was identical).{between}"
    )


def sweep_table(found: Sweep, figure: str, level: str) -> Markup:
    """The numbers behind the chart, as an HTML table."""
    head = ["Series", found.condition, "n", f"{figure}: mean [{level} CI]"]
    shown = t.percent if found.rate else t.number
    rows = []
    for row in found.rows:
        x, mean, low, high = (row[k] for k in ("x", "mean", "low", "high"))
        assert isinstance(x, float) and isinstance(mean, float)
        interval = ""
        if isinstance(low, float) and isinstance(high, float):
            interval = f" ({IDENTICAL})" if low == high else f" [{shown(low)}, {shown(high)}]"
        rows.append([row["series"], t.number(x), row["n"], shown(mean) + interval])
    return blocks.table(head, rows, right=[1, 2], kind="sweep")


SWEEPS = "ledger/sweeps"  # ledger/sweeps/<report slug>/<k>.json: the k-th sweep directive's chart


@dataclass(frozen=True)
class ReportSweep:
    """A report's sweep directive, drawn: where its chart goes and what it shows."""

    directive: SweepDirective
    path: str  # of its chart, under docs_dir
    found: Sweep


def report_sweeps(ledger: Ledger, confidence: float) -> dict[str, tuple[ReportSweep, ...]]:
    """The sweep directives of every report (checked by `check`) that have something to draw,
    by report path."""
    out = {}
    for report in ledger.reports:
        placed = []
        for k, d in enumerate(report.sweeps, 1):
            found = sweep([(r, ledger.runs[r]) for r in d.runs if r in ledger.runs], d.figure, confidence)
            if found is not None:
                placed.append(ReportSweep(d, f"{SWEEPS}/{report.slug}/{k}.json", found))
        if placed:
            out[report.path] = tuple(placed)
    return out


def report_sweep_outputs(
    ledger: Ledger, placed: Mapping[str, Sequence[ReportSweep]], confidence: float, templates: ChartTemplates
) -> dict[str, bytes]:
    """The chart of every drawn sweep directive."""
    out = {}
    for s in (s for sweeps in placed.values() for s in sweeps):
        figure = s.directive.figure
        unit = unit_of([ledger.runs[r] for r in s.directive.runs if r in ledger.runs], figure)
        out[s.path] = sweep_spec(s.found, figure, unit, t.level(confidence), templates)
    return out


def insert_sweeps(markdown: str, placed: Sequence[ReportSweep], confidence: float, up: str) -> str:
    """Each drawn sweep directive of a report replaced by its chart and its numbers; `up`
    climbs from the page's URL to the site root."""
    level = t.level(confidence)
    for s in placed:
        figure = s.directive.figure
        caption = t.text(sweep_caption(s.found, level, f" of {figure}, one colour per run,"))
        block = (
            f'<figure class="bl-figure"><div class="bl-chart" data-bl-spec="{t.text(up + s.path)}" role="img" '
            f'aria-label="sweep chart of {t.text(figure)}"></div><figcaption>{caption}</figcaption></figure>'
            f"\n\n{blocks.details('The numbers behind the sweep', sweep_table(s.found, figure, level))}\n"
        )
        markdown = markdown.replace(s.directive.text, block, 1)
    return markdown
