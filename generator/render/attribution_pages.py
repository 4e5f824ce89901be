"""Pages about attribution grids: a page per grid (effects forest plot, interaction plot,
cells), the grids panel of a report and of the claims ledger, and the grid a claim's two
runs belong to. Renderers return strings; `attribution_outputs` the generated files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup

from ..analysis.claims import Evaluation
from ..analysis.comparison import Settings
from ..analysis.credit import same_at
from ..analysis.grid_records import Grid
from ..analysis.stats import IDENTICAL
from ..analysis.wording import pct
from ..format.conditions import condition_label
from ..ledger.records import Ledger
from . import charts as ch
from . import text as t
from .chart_templates import ChartTemplates
from .forest import forest_spec
from .templating import generated_mark, render
from .verdict_text import badge, verdict_badges

CLAIMS = "claims"


def attribution_outputs(
    ledger: Ledger,
    grids: Sequence[Grid],
    evaluations: Mapping[str, Evaluation],
    settings: Settings,
    templates: ChartTemplates,
) -> dict[str, bytes]:
    """Each grid's page and charts, under claims/<id>/ (ids are unique across claims and grids)."""
    out: dict[str, bytes] = {}
    level = t.level(settings.confidence)
    for grid in grids:
        base = f"{CLAIMS}/{grid.attribution.id}"
        effects = None
        rows = _effect_rows(grid)
        if rows:
            effects = "charts/effects.json"
            metric, axis = grid.attribution.metric, "other level vs base level"
            out[f"{base}/{effects}"] = forest_spec(rows, settings.min_effect, metric, axis, templates=templates)
        interaction = "charts/cells.json"
        unit = _unit(ledger, grid)
        cell_labels = (grid.attribution.metric, unit, grid.factors[0], str(level))
        out[f"{base}/{interaction}"] = templates.spec(ch.interaction_chart, cell_labels, _cell_rows(grid))
        claims = [ev for ev in evaluations.values() if related(ev, [grid])]
        out[f"{base}/index.md"] = attribution_page(ledger, grid, effects, interaction, claims, settings).encode()
    return out


def related(ev: Evaluation, grids: Sequence[Grid]) -> list[Grid]:
    """The grids that hold both runs of a comparison claim on the same metric."""
    claim = ev.claim
    if claim.kind != "comparison":
        return []
    return [
        g
        for g in grids
        if {claim.baseline, claim.candidate} <= set(g.attribution.runs)
        and claim.metric == g.attribution.metric
        and any(same_at(c.at, g.attribution.at) for c in ev.conditions)  # a grid at another load says nothing
    ]


def sentence(grid: Grid) -> str:
    """Which factor earned the gain, by the factor's name and its levels, in a plain sentence ("The
    gain comes from draft: setting it to none instead of noise-0.02 changes tokens_per_second by
    +119.5% [+100.1%, +140.7%]."), or that no single factor did."""
    if grid.earned is None:
        return "No single factor earned the gain: the grid cannot credit it to one of its factors."
    e = grid.effect(grid.earned)
    assert e is not None
    base, other = grid.levels[grid.earned]
    metric = grid.attribution.metric
    return (
        f"The gain comes from {grid.earned}: setting it to {other} instead of {base} changes {metric} by "
        f"{_interval(e.ratio, e.ci)}."
    )


def attribution_page(
    ledger: Ledger,
    grid: Grid,
    effects: str | None,
    interaction: str,
    claims: Sequence[Evaluation],
    settings: Settings,
) -> str:
    a = grid.attribution
    report = next(r for r in ledger.reports if r.slug == grid.report)
    limits = list(dict.fromkeys([*report.meta.limits, *a.limits]))
    return render(
        "attribution.md.j2",
        mark=Markup(generated_mark("the reports' front matter")),
        title=t.text(a.statement),
        badge=badge(grid.verdict),
        sentence=t.text(sentence(grid)),
        reason=t.text(_reason(grid)),
        metric=t.text(a.metric),
        at=t.text(condition_label(a.at.items()) if a.at else "its only condition"),
        factors=_factors(grid),
        credits=t.text(a.credits or "no factor"),
        source=Markup(f"[{t.text(report.meta.title)}]({t.path_url(f'../../reports/{report.slug}.md')})"),
        effects_spec=effects,
        band=f"±{grid.band:.1%}" if grid.band is not None else "not computed",
        level=t.level(settings.confidence),
        effects=_effects(grid),
        interaction_spec=interaction if grid.cells else None,
        cells=_cells(grid),
        claims=[
            _page_link(ev.claim.statement, f"../{ev.claim.id}/index.md") + Markup(" ") + verdict_badges(ev)
            for ev in claims
        ],
        limits=[t.text(limit) for limit in limits],
    )


def _reason(grid: Grid) -> str:
    """The grid's verdict explained, and how many trials per cell would settle it (or why none would)."""
    reason = t.minus(grid.reason[:1].upper() + grid.reason[1:] + ".")
    if grid.trials_needed:
        likely = f", most likely as {grid.settles_as}" if grid.settles_as else ""
        reason += f" About {grid.trials_needed:,} trials per cell would settle it{likely}."
    elif grid.unsettled:
        reason += t.minus(f" {grid.unsettled[:1].upper()}{grid.unsettled[1:]}.")
    return reason


def _factors(grid: Grid) -> list[dict[str, Markup]]:
    """Each factor: its name, the key it varies, its two levels and why they are oriented so."""
    keys = grid.attribution.factors
    return [
        {
            "name": t.text(f),
            "key": t.text(keys[f]),
            "base": t.text(lv[0]),
            "other": t.text(lv[1]),
            "why": t.text(grid.oriented.get(f, "")),
        }
        for f, lv in grid.levels.items()
    ]


def _effects(grid: Grid) -> list[dict[str, str | Markup]]:
    """Each effect's row of the effects table."""
    return [
        {
            "name": t.text(e.name),
            "ratio": t.number(e.ratio),
            "interval": f"[{t.number(e.ci[0])}, {t.number(e.ci[1])}] ({_interval(e.ratio, e.ci)})",
            "badge": badge(e.verdict),
        }
        for e in grid.effects
    ]


def _cells(grid: Grid) -> list[dict[str, object]]:
    """Each cell's row of the cells table: its levels, its run, n and its mean with interval."""
    return [
        {
            "levels": t.text(", ".join(f"{f}={v}" for f, v in zip(grid.factors, c.levels, strict=True))),
            "run": _page_link(c.run, f"../../runs/{c.run}/index.md"),
            "n": len(c.values),
            "mean": _mean(c.mean, c.low, c.high),
        }
        for c in grid.cells
    ]


def grids_panel(grids: Sequence[Grid], up: str) -> str:
    """A table of grids (verdict, what it credits) for a report page or the claims ledger;
    `up` climbs from the page to the site root."""
    if not grids:
        return ""
    rows = "".join(
        f"| [{t.text(g.attribution.statement)}]({up}claims/{g.attribution.id}/index.md) | {badge(g.verdict)} | "
        f"{t.text(sentence(g))} | {t.text(g.attribution.credits or '–')} |\n"
        for g in grids
    )
    return (
        f"\n\n**Attribution grids** ([how they are judged]({up}methods.md#attribution-grids))\n\n"
        '<div class="bl-stack bl-stack--grids" markdown="1">\n\n'
        "| Grid | Verdict | What the grid credits | Publisher credits |\n| --- | --- | --- | --- |\n"
        + rows
        + "\n</div>\n\n"
    )


def _page_link(label: str, page: str) -> Markup:
    """A Markdown link to another page's source (`runs/<id>/index.md`): MkDocs turns it into the
    page's URL, whatever `use_directory_urls` says. Ids match RUN_ID_PATTERN: no escaping needed."""
    return Markup(f"[{t.text(label)}]({page})")


def _effect_rows(grid: Grid) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"claim": e.name, "verdict": e.verdict, "ratio": e.ratio, "low": e.ci[0], "high": e.ci[1]} for e in grid.effects
    ]
    if rows:
        band = grid.band or 0.0
        rows[0] |= {"first": True, "noise_lo": 1 - band, "noise_hi": 1 + band}
    return rows


def _cell_rows(grid: Grid) -> list[dict[str, object]]:
    rest = grid.factors[1:]
    return [
        {
            "level": c.levels[0],
            "series": ", ".join(f"{f}={v}" for f, v in zip(rest, c.levels[1:], strict=True)),
            "mean": c.mean,
            "low": c.low,
            "high": c.high,
            "n": len(c.values),
        }
        for c in grid.cells
        if c.mean is not None
    ]


def _unit(ledger: Ledger, grid: Grid) -> str | None:
    run = ledger.runs[grid.attribution.runs[0]]
    metric = run.meta.metrics.get(grid.attribution.metric)
    return metric.unit if metric is not None else None


def _mean(mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None:
        return "–"
    if low is None or high is None:
        return t.number(mean)
    if low == high:
        return f"{t.number(mean)} ({IDENTICAL})"
    return f"{t.number(mean)} [{t.number(low)}, {t.number(high)}]"


def _interval(ratio: float, ci: tuple[float, float]) -> str:
    return t.minus(f"{pct(ratio)} [{pct(ci[0])}, {pct(ci[1])}]")
