"""The ledger as generated site files: {path under docs_dir: bytes}.

Pure except for the vega-embed bundle, which is generated once per
vl-convert version and cached in the user's cache folder.
"""

from __future__ import annotations

import functools
import os
from dataclasses import replace
from importlib import resources
from pathlib import Path

from . import charts as ch
from . import claimpages, pages
from . import text as t
from .claims import Evaluation, Settings, chain, evaluate_all
from .load import Ledger, Run
from .receipts import RunReceipts, ledger_receipts
from .summaries import MetricAt, condition_label, summarize_run

RUNS = "runs"
CLAIMS = "claims"
ASSETS = "assets/benchledger"
VEGA_JS = f"{ASSETS}/vega.js"
CHARTS_JS = f"{ASSETS}/charts.js"
CSS = f"{ASSETS}/benchledger.css"
JAVASCRIPT = (VEGA_JS, CHARTS_JS)
STYLESHEETS = (CSS,)
# Raw files are served from the site's origin: anything a browser or MkDocs could
# interpret (.html, .svg, .md, .js, ...) is published with .txt appended.
PLAIN_SUFFIXES = {
    ".csv",
    ".tsv",
    ".yaml",
    ".yml",
    ".json",
    ".jsonl",
    ".txt",
    ".log",
    ".sig",
    ".out",
    ".err",
    ".gz",
    ".zip",
    ".png",
    ".jpg",
    ".jpeg",
}


def published_name(path: str) -> str:
    """The name a run file is published under (dangerous suffixes neutralized)."""
    return path if Path(path).suffix.lower() in PLAIN_SUFFIXES else path + ".txt"


REPORTED = "Reported figures: one diamond each, no interval."
TRIALS = "Every trial a grey dot; blue: the mean and its 95% CI."
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


_RENDERED: dict[str, tuple[tuple[str, RunReceipts | None], dict[str, bytes]]] = {}


def run_outputs(run: Run, receipts: RunReceipts | None = None) -> dict[str, bytes]:
    """The page of one run, its chart specs and its files; reused while the run's bytes and
    receipt states are unchanged (a rebuild renders only the runs that changed)."""
    key = (run.digest, receipts)
    cached = _RENDERED.get(run.id)
    if cached is not None and cached[0] == key:
        return cached[1]
    out = _render_run(run, receipts)
    _RENDERED[run.id] = (key, out)
    return out


def _render_run(run: Run, receipts: RunReceipts | None) -> dict[str, bytes]:
    base = f"{RUNS}/{run.id}"
    summary = summarize_run(run)
    order = tuple(condition_label(run.results.conditions, at) for at in run.results.condition_values())
    out: dict[str, bytes] = {}
    blocks = []
    for name, metric in run.meta.metrics.items():
        at_metric = summary.at(name)
        if not at_metric:
            continue
        at_metric, per_point = binned(at_metric)
        points = [ch.Point(m.label, trial, v) for m in at_metric for trial, v in zip(m.trials, m.values, strict=True)]
        labels = (order, name, metric.unit)
        if run.reported:
            specs = {"reported": (ch.spec(ch.reported_chart, labels, [p.__dict__ for p in points]), REPORTED)}
        else:
            intervals = [
                ch.Interval(m.label, m.summary.mean, m.summary.ci_low, m.summary.ci_high, m.summary.n)
                for m in at_metric
                if m.summary is not None
            ]
            note = (
                f" Each dot is the mean of {per_point} consecutive trials (over {MAX_POINTS:,} points)."
                if (per_point > 1)
                else ""
            )
            specs = {
                "trials": (ch.spec(ch.trials_chart, labels, ch.trials_rows(points, intervals)), TRIALS + note),
                "sequence": (ch.spec(ch.sequence_chart, labels, ch.sequence_rows(points)), SEQUENCE + note),
            }
        refs = []
        for kind, (data, caption) in specs.items():
            path = f"charts/{name}-{kind}.json"
            out[f"{base}/{path}"] = data
            refs.append(pages.ChartSpec(path, f"{kind} chart of {name}", caption))
        table = pages.per_trial_table(run, name, at_metric)
        blocks.append(pages.ChartBlock(name, metric.unit, _direction(metric.better), tuple(refs), table))
    rate_specs = []
    for rate in run.meta.rates:
        intervals = [
            ch.Interval(
                r.label,
                r.summary.pooled,
                r.summary.wilson_low,
                r.summary.wilson_high,
                len(r.summary.per_trial),
            )
            for r in summary.rates
            if r.rate == rate and r.summary.pooled is not None
        ]
        if intervals:
            path = f"charts/rate-{rate}.json"
            out[f"{base}/{path}"] = ch.spec(ch.rate_chart, (order, rate), [i.__dict__ for i in intervals])
            rate_specs.append(pages.ChartSpec(path, f"pooled {rate} with Wilson intervals", ""))
    files = []
    for name in run.files:
        data = run.blobs[name]
        target = f"files/{published_name(name)}"
        out[f"{base}/{target}"] = data
        files.append(pages.FileLink(t.link(name, t.path_url(target)), len(data)))
    receipts = receipts or RunReceipts("unverified", ())
    out[f"{base}/index.md"] = pages.run_page(run, summary, blocks, rate_specs, files, receipts).encode()
    return out


def _cache_dir() -> Path:
    base = os.environ.get("BENCHLEDGER_CACHE") or os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "benchledger" if base else Path.home() / ".cache" / "benchledger"


@functools.cache
def vega_bundle() -> bytes:
    """vega, vega-lite and vega-embed in one local script (vl-convert), cached per version."""
    import vl_convert

    version = getattr(vl_convert, "__version__", "unknown")
    path = _cache_dir() / f"vega-embed-{version}.js"
    if path.is_file():
        return path.read_bytes()
    data = vl_convert.javascript_bundle().encode()  # type: ignore[call-arg]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return data


def asset_outputs() -> dict[str, bytes]:
    own = resources.files("generator") / "assets"
    schemas = {
        f"{ASSETS}/schemas/{entry.name}": entry.read_bytes()
        for entry in (resources.files("generator") / "schemas").iterdir()
        if entry.name.endswith(".json")
    }
    return schemas | {
        VEGA_JS: vega_bundle(),
        CHARTS_JS: (own / "charts.js").read_bytes(),
        CSS: (own / "benchledger.css").read_bytes(),
    }


def claim_outputs(ledger: Ledger, evaluations: dict[str, Evaluation], settings: Settings) -> dict[str, bytes]:
    """The claims ledger, a page per claim (with its whole correction chain) and the methods page."""
    out = {
        f"{CLAIMS}/index.md": claimpages.claims_index(evaluations).encode(),
        "methods.md": claimpages.methods_page(settings).encode(),
    }
    for claim_id in evaluations:
        base = f"{CLAIMS}/{claim_id}"
        links = [evaluations[i] for i in chain(claim_id, ledger)]
        comparisons = [ev for ev in links if ev.claim.kind == "comparison"]
        trial_specs = {}
        for ev in comparisons:
            if ev.baseline is None or ev.candidate is None or not ev.claim.metric:
                continue
            rows = [
                {"side": f"{name}: {s.run}", "trial": trial, "value": value}
                for name, s in (("baseline", ev.baseline), ("candidate", ev.candidate))
                for trial, value in zip(s.trials, s.values, strict=True)
            ]
            path = f"charts/trials-{ev.claim.id}.json"
            out[f"{base}/{path}"] = ch.spec(ch.sides_chart, (ev.claim.metric, ev.unit), rows)
            trial_specs[ev.claim.id] = path
        forest = None
        plotted = [ev for ev in comparisons if ev.ratio is not None]
        if plotted:
            noise = max((ev.noise or 0.0) for ev in plotted)
            rows = [
                {
                    "claim": ev.claim.id,
                    "verdict": ev.verdict,
                    "ratio": ev.ratio,
                    "low": ev.ci_low,
                    "high": ev.ci_high,
                }
                for ev in plotted
            ]
            rows[0] |= {"first": True, "noise_lo": 1 - noise, "noise_hi": 1 + noise}
            labels = (settings.min_effect, plotted[0].claim.metric or "", len(rows))
            forest = "charts/forest.json"
            out[f"{base}/{forest}"] = ch.spec(ch.forest_chart, labels, rows)
        out[f"{base}/index.md"] = claimpages.claim_page(links, forest, trial_specs, settings).encode()
    return out


def generate(
    ledger: Ledger,
    settings: Settings | None = None,
    receipts: dict[str, RunReceipts] | None = None,
    evaluations: dict[str, Evaluation] | None = None,
) -> dict[str, bytes]:
    """Every generated file of the publication, keyed by its path under docs_dir. Receipt
    states and claim evaluations are computed here unless the caller already has them."""
    settings = settings or Settings()
    if receipts is None:
        receipts, _ = ledger_receipts(ledger)
    states = {run_id: r.state for run_id, r in receipts.items()}
    evaluations = evaluations if evaluations is not None else evaluate_all(ledger, settings, states)
    out = asset_outputs()
    out[f"{RUNS}/index.md"] = pages.runs_index(list(ledger.runs.values()), states).encode()
    for run in ledger.runs.values():
        out.update(run_outputs(run, receipts[run.id]))
    out.update(claim_outputs(ledger, evaluations, settings))
    return out
