"""The ledger as generated site files: {path under docs_dir: bytes}. Pure: nothing here
reads or writes a file."""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace

from markupsafe import Markup
from pydantic import BaseModel

from ..analysis.claims import Evaluation, chain
from ..analysis.comparison import Settings
from ..analysis.grid_records import Grid
from ..analysis.receipts import RunReceipts
from ..analysis.stats import CONFIDENCE
from ..analysis.summaries import MetricAt, RateAt, RunSummary, label_of, summarize_run
from ..format.published import published_name
from ..ledger.records import Ledger, Run
from . import attribution_pages, claim_pages, claims_index, methods_page, run_page, runs_index, sweeps, verdict_text
from . import charts as ch
from . import text as t
from .chart_templates import ChartTemplates
from .compare_page import COMPARE, RUN_DATA, run_data
from .forest import forest_spec

RUNS = "runs"
CLAIMS = "claims"
METHODS = "methods.md"
# Every generated path starts with one of these (the same entries as the publication's
# .gitignore): nothing outside them is ever written or removed by benchledger.
OWNED = (
    f"{RUNS}/",
    f"{CLAIMS}/",
    METHODS,
    "assets/benchledger/",
    "ledger/",
    f"{COMPARE}/",
    "history/",
)  # ledger/sweeps too
REPORTED = "Reported figures: one diamond each, no interval."
TRIALS = "Every trial a grey dot; blue: the mean and its {level} CI."
ONE_TRIAL = "Each condition's one trial a grey dot (n = 1): one trial has no interval, so no mean or CI is drawn."
SOME_ONE_TRIAL = " A condition of one trial has no interval."
RATE = (
    "Every trial's rate a grey dot; blue: the mean of the trials' rates and its {level} t interval over the "
    "trials (none where every trial gave the same rate). The trial is the unit, not the token."
)
SEQUENCE = "Each trial against its condition's median: warmup and drift show as slopes."


def _direction(better: str | None) -> str:
    return {"higher": "Higher is better.", "lower": "Lower is better."}.get(
        better or "", "No direction declared: shown, never judged."
    )


MAX_POINTS = 5000  # beyond this, consecutive trials are averaged so a run page stays light


def binned(at_metric: list[MetricAt]) -> tuple[list[MetricAt], int]:
    """The metric's per-trial values, averaged over runs of consecutive trials when the chart
    would draw more than MAX_POINTS dots; the summaries keep every trial."""
    total = sum(len(m.values) for m in at_metric)
    if total <= MAX_POINTS:
        return at_metric, 1
    k = -(-total // MAX_POINTS)
    out = []
    for m in at_metric:
        chunks = [(m.trials[i], m.values[i : i + k]) for i in range(0, len(m.values), k)]
        out.append(replace(m, trials=tuple(t for t, _ in chunks), values=tuple(sum(v) / len(v) for _, v in chunks)))
    return out, k


def run_outputs(
    run: Run,
    receipts: RunReceipts | None = None,
    confidence: float = CONFIDENCE,
    *,
    templates: ChartTemplates | None = None,
    summary: RunSummary | None = None,
) -> dict[str, bytes]:
    """The page of one run, its chart specs and its published files (`templates`: the chart
    templates built so far, else every chart is built afresh; `summary`: the run's summary at
    this confidence level, when the caller has it)."""
    templates = templates if templates is not None else ChartTemplates()
    base = f"{RUNS}/{run.id}"
    summary = summary if summary is not None else summarize_run(run, confidence)
    level = t.level(confidence)
    out: dict[str, bytes] = {}
    blocks = [
        block
        for name in run.meta.metrics
        if (block := _metric_charts(run, name, summary.at(name), confidence, out, templates)) is not None
    ]
    rate_specs = _rate_charts(run, summary.rates, level, out, templates)
    files = []
    for name in run.files:
        data = run.blobs[name]
        target = f"files/{published_name(name)}"
        out[f"{base}/{target}"] = data
        files.append(run_page.FileLink(t.link(name, t.path_url(target)), len(data)))
    receipts = receipts or RunReceipts("unverified", ())
    page = run_page.run_page(
        run, summary, charts=blocks, rate_charts=rate_specs, files=files, receipts=receipts, level=level
    )
    out[f"{base}/index.md"] = page.encode()
    out[f"{base}/{RUN_DATA}"] = run_data(run)
    return out


def _order(run: Run) -> tuple[str, ...]:
    return tuple(label_of(run, at) for at in run.results.condition_values())


def _metric_charts(
    run: Run,
    name: str,
    at_metric: list[MetricAt],
    confidence: float,
    out: dict[str, bytes],
    templates: ChartTemplates,
) -> run_page.ChartBlock | None:
    """A metric's charts (written into `out`) and the block that shows them on the run page."""
    if not at_metric:
        return None
    level = t.level(confidence)
    metric = run.meta.metrics[name]
    table = run_page.per_trial_table(run, at_metric, level)
    at_metric, per_point = binned(at_metric)
    points = [ch.Point(m.label, trial, v) for m in at_metric for trial, v in zip(m.trials, m.values, strict=True)]
    labels = (_order(run), name, metric.unit)
    if run.reported:
        specs = {"reported": (templates.spec(ch.reported_chart, labels, [p.__dict__ for p in points]), REPORTED)}
    else:
        intervals = [
            ch.Interval(m.label, m.summary.mean, m.summary.ci_low, m.summary.ci_high, m.summary.n)
            for m in at_metric
            if m.summary is not None
        ]
        note = f" Each dot is the mean of {per_point} consecutive trials (over {MAX_POINTS:,} points)."
        note = note if per_point > 1 else ""
        trials = templates.spec(ch.trials_chart, (*labels, level), ch.trials_rows(points, intervals))
        drawn = sum(1 for i in intervals if i.low is not None)  # a condition of one trial has none
        caption = TRIALS.format(level=level) + (SOME_ONE_TRIAL if drawn < len(at_metric) else "")
        caption = caption if drawn else ONE_TRIAL
        specs = {
            "trials": (trials, caption + note),
            "sequence": (templates.spec(ch.sequence_chart, labels, ch.sequence_rows(points)), SEQUENCE + note),
        }
        swept = sweeps.sweep([("", run)], name, confidence)
        if swept is not None:
            data = sweeps.sweep_spec(swept, name, metric.unit, level, templates)
            specs["sweep"] = (data, sweeps.sweep_caption(swept, level))
    refs = []
    for kind, (data, caption) in specs.items():
        path = f"charts/{name}-{kind}.json"
        out[f"{RUNS}/{run.id}/{path}"] = data
        refs.append(run_page.ChartSpec(path, f"{kind} chart of {name}", caption))
    about = f"{metric.description} " if metric.description else ""
    return run_page.ChartBlock(name, metric.unit, about + _direction(metric.better), tuple(refs), table)


def _rate_charts(
    run: Run, rates: Sequence[RateAt], level: str, out: dict[str, bytes], templates: ChartTemplates
) -> list[run_page.ChartSpec]:
    """Each rate's chart (written into `out`): every trial's rate, and per condition the mean of
    the trials' rates with its t interval over them (none where every trial gave one rate)."""
    specs = []
    for rate in run.meta.rates:
        mine = [r for r in rates if r.rate == rate and r.summary.mean is not None]
        if mine:
            path = f"charts/rate-{rate}.json"
            out[f"{RUNS}/{run.id}/{path}"] = templates.spec(ch.rate_chart, (_order(run), rate, level), rate_rows(mine))
            label = f"per-trial {rate} with the mean of the trials and its {level} t interval"
            specs.append(run_page.ChartSpec(path, label, RATE.format(level=level)))
    return specs


def rate_rows(rates: Sequence[RateAt]) -> list[dict[str, object]]:
    """A rate chart's rows: each trial's rate (averaged over consecutive trials past MAX_POINTS
    dots, as for a metric) and each condition's mean with its interval."""
    k = max(1, -(-sum(r.summary.n for r in rates) // MAX_POINTS))
    rows: list[dict[str, object]] = []
    for r in rates:
        values = r.summary.per_trial
        chunks = [values[i : i + k] for i in range(0, len(values), k)]
        rows += [{"condition": r.label, "kind": "trial", "value": sum(c) / len(c)} for c in chunks]
        mean = {"kind": "mean", "value": r.summary.mean, "n": r.summary.n}
        rows.append({"condition": r.label, **mean, "low": r.summary.ci_low, "high": r.summary.ci_high})
    return rows


def claim_outputs(
    ledger: Ledger,
    evaluations: dict[str, Evaluation],
    settings: Settings,
    grids: Sequence[Grid] = (),
    *,
    templates: ChartTemplates | None = None,
    remembered: ClaimPages | None = None,
) -> dict[str, bytes]:
    """The claims ledger, a page per claim (with its whole correction chain) and the methods page
    (`templates`: the chart templates built so far, else every chart is built afresh;
    `remembered`, the build cache's: each claim's files by everything they are rendered from,
    `claim_key`, so a claim whose inputs are unchanged is not rendered again)."""
    templates = templates if templates is not None else ChartTemplates()
    panel = attribution_pages.grids_panel(grids, "../")
    out = {f"{CLAIMS}/{path}": page.encode() for path, page in claims_index.claims_index(evaluations, panel).items()}
    out[METHODS] = methods_page.methods_page(settings).encode()
    if remembered is not None:
        for gone in set(remembered) - set(evaluations):
            del remembered[gone]
    for claim_id in evaluations:
        links = [evaluations[i] for i in chain(claim_id, ledger)]
        key = claim_key(links, grids, settings, ledger) if remembered is not None else ""
        known = remembered.get(claim_id) if remembered is not None else None
        if known is not None and known[0] == key:
            out |= known[1]
            continue
        files = _claim_files(claim_id, links, ledger, settings, grids, templates)
        out |= files
        if remembered is not None:
            remembered[claim_id] = (key, files)
    return out


ClaimPages = dict[str, tuple[str, dict[str, bytes]]]  # claim id -> (what its files were rendered from, its files)


def claim_key(links: Sequence[Evaluation], grids: Sequence[Grid], settings: Settings, ledger: Ledger) -> str:
    """Everything a claim's page and charts are rendered from: the evaluations of its chain (each
    report by its slug and digest), the grids that hold its runs, the verdict settings and the
    digests of its runs (a sha256 of their pickle: equal keys, equal inputs). The pickle keeps
    no memo, and a claim is pickled as its JSON, so the key depends on values alone, not on
    which of them are the same object or on the order pydantic noted the fields set: `serve`
    renders a claim again only when something it shows changed."""
    related = [g for ev in links for g in attribution_pages.related(ev, grids)]
    claim = links[0].claim
    runs = [(r, ledger.runs[r].digest if r in ledger.runs else None) for r in (claim.baseline, claim.candidate) if r]
    chain_ = [
        (
            [(f.name, _valued(getattr(ev, f.name))) for f in fields(ev) if f.name != "report"],
            ev.report.slug,
            ev.report.digest,
        )
        for ev in links
    ]
    held = io.BytesIO()
    pickler = pickle.Pickler(held, protocol=5)
    pickler.fast = True  # no memo: equal values, equal bytes, however they are shared
    pickler.dump((chain_, related, settings, runs))
    return hashlib.sha256(held.getvalue()).hexdigest()


def _valued(value: object) -> object:
    """A front-matter record (pydantic) as its JSON; any other value as it is."""
    return value.model_dump_json() if isinstance(value, BaseModel) else value


def _claim_files(
    claim_id: str,
    links: list[Evaluation],
    ledger: Ledger,
    settings: Settings,
    grids: Sequence[Grid],
    templates: ChartTemplates,
) -> dict[str, bytes]:
    """A claim's page and its charts."""
    out: dict[str, bytes] = {}
    base = f"{CLAIMS}/{claim_id}"
    comparisons = [ev for ev in links if ev.comparison is not None]
    trial_specs = {}
    for ev in (ev for ev in comparisons if _has_trials(ev)):
        path = f"charts/trials-{ev.claim.id}.json"
        out[f"{base}/{path}"] = templates.spec(ch.sides_chart, (ev.claim.metric or "", ev.unit), _side_rows(ev))
        trial_specs[ev.claim.id] = path
    forest = None
    rows = _forest_rows(comparisons)
    if rows:
        forest = "charts/forest.json"
        metric = comparisons[0].claim.metric or ""
        out[f"{base}/{forest}"] = forest_spec(rows, settings.min_effect, metric, templates=templates)
    taken_apart = [
        Markup(f"[{t.text(g.attribution.statement)}](../{g.attribution.id}/index.md)")  # MkDocs resolves it
        + Markup(f" {verdict_text.badge(g.verdict)} ")
        + t.text(attribution_pages.sentence(g))
        for g in {g.attribution.id: g for ev in links for g in attribution_pages.related(ev, grids)}.values()
    ]
    swept = _claim_sweep(ledger, links[0], settings.confidence, out, base, templates)
    page = claim_pages.claim_page(links, forest, trial_specs, settings, taken_apart, swept, focus=claim_id)
    out[f"{base}/index.md"] = page.encode()
    return out


def _claim_sweep(
    ledger: Ledger, ev: Evaluation, confidence: float, out: dict[str, bytes], base: str, templates: ChartTemplates
) -> claim_pages.SweepBlock | None:
    """Both sides of a comparison claim on one sweep chart (written into `out`), when they share
    a numeric condition: where the claim's condition sits among the others."""
    claim = ev.claim
    if claim.kind != "comparison" or not claim.metric or not claim.baseline or not claim.candidate:
        return None
    b, c = ledger.runs.get(claim.baseline), ledger.runs.get(claim.candidate)
    if b is None or c is None:
        return None
    inside = b.id == c.id  # a claim inside one run: one series, on which both sides sit
    series = [(b.id, b)] if inside else [(f"baseline: {b.id}", b), (f"candidate: {c.id}", c)]
    found = sweeps.sweep(series, claim.metric, confidence)
    if found is None:
        return None
    level = t.level(confidence)
    out[f"{base}/charts/sweep.json"] = sweeps.sweep_spec(
        found, claim.metric, sweeps.unit_of([b, c], claim.metric), level, templates
    )
    judged = "; ".join(cond.label for cond in ev.conditions) or "every shared condition"
    caption = sweeps.sweep_caption(
        found, level, f" of {claim.metric} in {b.id}" if inside else f" of {claim.metric} for both sides"
    )
    sides = [(cond.baseline.label, cond.candidate.label) for cond in ev.conditions]
    if inside and sides:
        caption += " The claim compares " + "; ".join(f"{x} (baseline) with {y} (candidate)" for x, y in sides) + "."
    else:
        caption += f" The claim is judged at {judged}."
    return claim_pages.SweepBlock("charts/sweep.json", caption, sweeps.sweep_table(found, claim.metric, level))


def _has_trials(ev: Evaluation) -> bool:
    """Does a side of the comparison hold trials? Reported figures have none to draw."""
    return any(t is not None for c in ev.conditions for s in (c.baseline, c.candidate) for t in s.trials)


def _side_rows(ev: Evaluation) -> list[dict[str, object]]:
    """Per-trial values of each side at each condition, averaged over consecutive trials when a
    side holds more than MAX_POINTS / 2 of them (the tables and statistics keep every trial)."""
    several = len(ev.conditions) > 1
    rows: list[dict[str, object]] = []
    for c in ev.conditions:
        for name, s in (("baseline", c.baseline), ("candidate", c.candidate)):
            who = f"{s.run} at {s.label}" if c.baseline.label != c.candidate.label else s.run
            label = f"{c.label} · {name}: {who}" if several else f"{name}: {who}"
            k = max(1, -(-len(s.values) * 2 * len(ev.conditions) // MAX_POINTS))
            for i in range(0, len(s.values), k):
                chunk = s.values[i : i + k]
                rows.append({"side": label, "trial": s.trials[i], "value": sum(chunk) / len(chunk)})
    return rows


def _forest_rows(comparisons: list[Evaluation]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for ev in comparisons:
        several = len(ev.conditions) > 1
        for c in ev.conditions:
            if c.ratio is None:
                continue
            own = c.baseline.label != c.candidate.label  # a claim inside one run: its label names both sides
            name = f"{ev.claim.id} @ {c.label}" if several or own else ev.claim.id
            row: dict[str, object] = {"claim": name, "statement": ev.claim.statement, "verdict": c.verdict}
            row["ratio"] = c.ratio
            row |= {"low": c.ci_low, "high": c.ci_high}
            if (both := verdict_text.proportions(c, ev.unit)) is not None:  # a rate: read in points first
                row["points"] = both[1] - both[0]
            if ev.comparison is not None and ev.comparison.claimed_ratio is not None:
                row["claimed"] = ev.comparison.claimed_ratio
            rows.append(row)
    if rows:
        band = max((c.band or 0.0) for ev in comparisons for c in ev.conditions)
        rows[0] |= {"first": True, "noise_lo": 1 - band, "noise_hi": 1 + band}
    return rows


def index_outputs(ledger: Ledger, receipts: Mapping[str, RunReceipts]) -> dict[str, bytes]:
    """The runs index."""
    states = {run_id: (r.kind, r.shown) for run_id, r in receipts.items()}
    pages = runs_index.runs_index(list(ledger.runs.values()), states)
    return {f"{RUNS}/{path}": text.encode() for path, text in pages.items()}
