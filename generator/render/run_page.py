"""The page of one run, and the runs index. Renderers return strings; they never
touch the disk."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from markupsafe import Markup

from ..analysis import stats
from ..analysis.receipts import Reproduced, RunReceipts
from ..analysis.reproduction import MARGIN, NO_RATIO, Figure
from ..analysis.stats import IDENTICAL, IDENTICAL_SIDES, Summary
from ..analysis.summaries import MetricAt, RunSummary, label_of
from ..analysis.verdicts import tost_level
from ..format.commands import shell_line
from ..format.keys import flatten
from ..format.models import Runner
from ..ledger.records import Run
from . import blocks, rate_text
from . import text as t
from .templating import generated_mark, render


@dataclass(frozen=True)
class ChartSpec:
    path: str  # page-relative path of the Vega-Lite JSON
    label: str
    caption: str


@dataclass(frozen=True)
class ChartBlock:
    metric: str
    unit: str | None
    direction: str
    specs: tuple[ChartSpec, ...]
    table: Markup


@dataclass(frozen=True)
class FileLink:
    link: Markup
    size: int


def ci(summary: Summary) -> Markup:
    if summary.ci_low is None:
        return Markup("(one trial: no CI)")
    if summary.constant:
        return Markup(f"({IDENTICAL})")
    return Markup(f"[{t.number(summary.ci_low)}, {t.number(summary.ci_high)}]")


def reported_value(m: MetricAt, unit: Markup) -> Markup:
    """A reported figure, with its published SD and n when the source gave them."""
    shown = Markup(t.number(m.reported)) + unit
    if m.published is None:
        return shown
    sd, n = m.published
    if m.sd_below:  # printed as 0.00: an SD below the bound, never an SD of zero
        return shown + Markup(f" (SD &lt; {t.number(sd)}, n = {n})")
    return shown + Markup(f" ± {t.number(sd)} (SD, n = {n})")


def _yaml_value(value: Any) -> Markup:
    if isinstance(value, dict | list):
        dumped = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000)
        return t.lines(dumped.strip())
    return t.lines(t.scalar(value))


def manifest_sections(manifest: dict[str, Any]) -> list[tuple[str, list[tuple[str, Markup]]]]:
    """The manifest as one table per top-level section, nested keys dotted within it."""
    general: list[tuple[str, Markup]] = []
    sections = []
    for key, value in manifest.items():
        if key == "schema":
            continue
        if isinstance(value, dict | list) and value:
            rows = [(k, _yaml_value(v)) for k, v in flatten(value).items()]
            sections.append((str(key), rows))
        else:
            general.append((str(key), _yaml_value(value)))
    return ([("general", general)] if general else []) + sections


MAX_TABLE_TRIALS = 200  # a page lists the first and last 100 trials; results.csv holds all


def per_trial_table(run: Run, at_metric: Sequence[MetricAt], level: str) -> Markup:
    """The numbers behind a metric's charts: one row per trial, one column per condition (an
    HTML table that search does not index: a run page is found by its title and environment)."""
    labels = [t.text(m.label) for m in at_metric]
    if run.reported:
        reported = [(t.text(m.label), reported_value(m, Markup(""))) for m in at_metric]
        return blocks.table(["Condition", "Reported value"], reported, right=[1], searched=False, kind="trials")
    excluded = {(m.label, tr): (v, why) for m in at_metric for tr, v, why in m.excluded}
    by_trial = [dict(zip(m.trials, m.values, strict=True)) for m in at_metric]
    trials = sorted({tr for m in at_metric for tr in m.trials if tr is not None} | {tr for _, tr in excluded if tr})
    half = MAX_TABLE_TRIALS // 2
    shown = trials if len(trials) <= MAX_TABLE_TRIALS else trials[:half] + trials[-half:]
    rows: list[list[str | Markup]] = []
    for k, trial in enumerate(shown):
        if len(shown) < len(trials) and k == half:
            more = f"{len(trials) - len(shown):,} more trials: every one is in results.csv (Files, below)"
            rows.append(["…", more] + [""] * (len(at_metric) - 1))
        cells = [str(trial)]
        for m, values in zip(at_metric, by_trial, strict=True):
            value = values.get(trial)
            if (m.label, trial) in excluded:
                gone, why = excluded[(m.label, trial)]
                cells.append(Markup(f"<del>{t.number(gone)}</del> (excluded: {t.text(why)})"))
            else:
                cells.append(t.number(value) if value is not None else "–")
        rows.append(cells)
    rows.append(
        [f"mean [{level} CI]"]
        + [Markup(f"{t.number(m.summary.mean)} {ci(m.summary)}") if m.summary else "–" for m in at_metric]
    )
    return blocks.table(["Trial", *labels], rows, right=range(len(labels) + 1), searched=False, kind="trials")


def run_page(
    run: Run,
    summary: RunSummary,
    *,
    charts: Sequence[ChartBlock],
    rate_charts: Sequence[ChartSpec],
    files: Sequence[FileLink],
    receipts: RunReceipts,
    level: str,
) -> str:
    """The page of one run: what was run, its trials and spread, environment and files."""
    warnings = [(m.label, m.metric, t.minus(w)) for m in summary.metrics for w in m.warnings] + client_bound(run)
    excluded = [(m.label, m.metric, trial, why) for m in summary.metrics for trial, _, why in m.excluded]
    return render(
        "run.md.j2",
        mark=Markup(generated_mark(f"{run.path}/")),
        run=run,
        meta=run.meta,
        summary=summary,
        charts=charts,
        rate_charts=rate_charts,
        files=files,
        files_rows=[(f.link, f.size) for f in files],
        warnings=warnings,
        excluded=excluded,
        published=any(m.published for m in summary.metrics),
        receipts=receipts,
        level=level,
        receipt_state=state_badge(receipts.kind, receipts.shown),
        compare=Markup(f"../../compare/?a={t.path_url(run.id)}"),  # raw HTML: the built page's URL
        rerun=receipts.reproduction,
        **_rerun_rule(receipts.reproduction),
        headline=headline(run, summary),
        measured_conditions=len(run.results.condition_values()),
        **_described(run),
        **_formats({name: m.unit for name, m in run.meta.metrics.items()}),
    )


def _described(run: Run) -> dict[str, Any]:
    """What run.yaml and the manifest say about the run, as the page shows it."""
    meta = run.meta
    return {
        "trial_unit": meta.trial_unit or "not stated",
        "repetitions": meta.trial_unit == "repetition",
        "setup": [(k, _yaml_value(v)) for k, v in flatten(meta.setup).items()] if meta.setup else [],
        "conditions": ", ".join(meta.conditions) or "none",
        "trials": run.results.trials if not run.reported else "not reported",
        "warmup": (
            "not reported"
            if meta.warmup_trials is None
            else f"{t.plural(meta.warmup_trials, 'trial')} run and discarded before trial 1"
        ),
        "source": source_text(run),
        "source_url": t.url(meta.source.url),
        "incomplete": t.text(meta.incomplete.words) if meta.incomplete is not None else None,
        "provenance": t.lines(meta.source.provenance or ""),
        "notes": t.notes(meta.notes) if meta.notes else None,
        "extras": [(k, _yaml_value(v)) for k, v in meta.extras.items()],
        "reproduce": reproduce(meta.runner),
        "manifest": manifest_sections(run.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)),
    }


def _formats(units: Mapping[str, str | None]) -> dict[str, Any]:
    """How the template writes figures, intervals, units and its tables and folded sections."""
    return {
        "num": t.number,
        "pct": t.percent,
        "ci": ci,
        "unit": lambda name: _unit(units.get(name)),
        "reported_value": lambda m: reported_value(m, _unit(units.get(m.metric))),
        "per_trial": per_trial_rates,
        "rate_mean": rate_text.mean_interval,
        "rate_counts": rate_text.counts,
        "triple": lambda v: " / ".join(t.number(x, 3) for x in v) if v else "–",
        "figure_line": _figure_line,
        "folded": blocks.details,
        "table": blocks.table,
    }


def client_bound(run: Run) -> list[tuple[str, str, str]]:
    """The trials `benchledger run openai` flagged client-bound (results.csv `client_bound` = 1),
    one warning per condition: their figures may be the client's limit, not the server's."""
    results = run.results
    if "client_bound" not in results.metrics:
        return []
    out = []
    for at in results.condition_values():
        rows = [r for r in results.rows if r.at == at]
        bound = [str(r.trial) for r in rows if r.values.get("client_bound", 0.0) >= 1]
        if bound:
            out.append(
                (
                    label_of(run, at),
                    "client_bound",
                    f"{len(bound)} of {len(rows)} trials ({', '.join(bound)}) were client-bound: the benchmark "
                    "client's own lag, send delay or CPU passed its limits, so their figures may describe the "
                    "client, not the server (see the notes)",
                )
            )
    return out


MAX_RATES_SHOWN = 20


def per_trial_rates(rates: Sequence[float]) -> str:
    """A rate's per-trial values, the first MAX_RATES_SHOWN of them (the chart and CSV hold all)."""
    shown = ", ".join(t.percent(r) for r in rates[:MAX_RATES_SHOWN]) or "–"
    return shown + (f", … ({len(rates) - MAX_RATES_SHOWN:,} more)" if len(rates) > MAX_RATES_SHOWN else "")


def _unit(unit: str | None) -> Markup:
    if not unit:
        return Markup("")
    return t.text(unit) if unit == "%" else Markup(" ") + t.text(unit)


def source_text(run: Run) -> Markup:
    """Who measured the run, as every page that shows it says: measured here, republished from
    (per-trial data measured by someone else), or reported by (figures without trials)."""
    src = run.meta.source
    if src.kind == "measured":
        return Markup("measured here")
    verb = "republished from" if src.kind == "republished" else "reported by"
    return Markup(f"{verb} {t.link(src.citation, t.url(src.url))}")


def state_badge(state: str, label: str | None = None) -> Markup:
    """A receipt state's badge; `state` is one of a fixed set, `label` what it says."""
    slug = state.replace(" ", "-")
    return Markup(f'<span class="bl-receipt bl-receipt--{slug}">{t.text(label or state)}</span>')


def reproduce(runner: Runner | None) -> dict[str, Any] | None:
    """The recorded runner invocation as a command to copy, and what it ran against."""
    if runner is None or not runner.invocation:
        return None
    argv = runner.invocation if runner.invocation[0] == "benchledger" else ["benchledger", *runner.invocation]
    command = shell_line(copyable(argv))  # whole, tabs and line breaks written \t and \n; folded by CSS
    target = runner.base_url or "the command it timed"
    return {
        "kind": t.text(runner.kind),
        "server": bool(runner.base_url),  # a command run (`run command`) measured no server
        "model": t.text(runner.model or ""),
        "endpoint": t.text(runner.endpoint or ""),
        "target": t.text(target),
        "command": Markup(html.escape(command)),
        "prompts": t.text(runner.prompts or "built-in"),
        "hash": t.text(runner.prompts_sha256 or ""),
    }


FILL_IN = {"--id": "NEW-RUN-ID", "--manifest-extra": "EXTRA.yaml"}  # values a copy must not reuse


def copyable(argv: Sequence[str]) -> list[str]:
    """The recorded command as a reader may paste it: never `--force` (it would replace the
    original run), the run id and the manifest extras (a file of the measuring machine) as
    values the reader fills in."""
    out: list[str] = []
    items = iter(argv)
    for arg in items:
        name, eq, _ = arg.partition("=")
        if arg == "--force":
            continue
        if name in FILL_IN:
            out += [f"{name}={FILL_IN[name]}"] if eq else [arg, FILL_IN[name]]
            if not eq:
                next(items, None)
            continue
        out.append(arg)
    return out


def _rerun_rule(rerun: Reproduced | None) -> dict[str, str]:
    """The numbers the run page's sentence on a rerun's rule states: margin and levels."""
    if rerun is None:
        return {}
    margin = f"±{MARGIN:.1%}" if rerun.margin is None else f"±{rerun.margin:.1%}, set by the verifier"
    level = rerun.figures[0].level if rerun.figures else stats.CONFIDENCE
    return {
        "rerun_margin": margin,
        "rerun_level": t.level(level),
        "rerun_confidence": t.level(stats.CONFIDENCE),
        "rerun_tost": t.level(tost_level(stats.CONFIDENCE)),
    }


def _figure_line(f: Figure) -> str:
    """One figure of a rerun: its status, and rerun / original with its interval and margin."""
    if f.ratio is None:
        return f"{f.label}: {f.status} ({NO_RATIO})"
    interval = f"[{t.number(f.low)}, {t.number(f.high)}]" if f.low is not None else ""
    interval = f"({IDENTICAL_SIDES})" if f.low is not None and f.low == f.high else interval
    return f"{f.label}: {f.status}, rerun / original {t.number(f.ratio)} {interval}, margin ±{f.margin:.1%}"


MAX_CARDS = 8


def headline(run: Run, summary: RunSummary) -> list[dict[str, str]]:
    """One compact card per metric (the first eight) at the run's first condition: the mean,
    its interval, n and CV; a reported figure as printed."""
    conditions = run.results.condition_values()
    if not conditions:
        return []
    first = conditions[0]
    cards: list[dict[str, str]] = []
    for m in summary.metrics:
        if m.at != first or len(cards) >= MAX_CARDS:
            continue
        unit = run.meta.metrics[m.metric].unit or ""
        if m.summary is None:
            value = f"{t.number(m.values[0])} {unit}".strip() if m.values else "–"
            detail = "reported, no interval"
        else:
            value = f"{t.number(m.summary.mean)} {unit}".strip()
            spread = f"CV {m.summary.cv:.1%}" if m.summary.cv is not None else "no spread"
            detail = f"{ci(m.summary)} · n = {m.summary.n}" + ("" if m.summary.constant else f" · {spread}")
        cards.append({"metric": m.metric, "value": value, "detail": detail, "at": m.label})
    return cards
