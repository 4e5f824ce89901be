"""The whole generation in one function: audit, evaluate, render, write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.audit import Audit, Checked, audit
from ..analysis.claims import Evaluation, evaluate_publication
from ..analysis.comparison import Settings
from ..analysis.grid_records import Grid
from ..analysis.history import Followed, history
from ..analysis.history_settings import HistorySettings
from ..analysis.receipts import RunReceipts, reproductions
from ..analysis.summaries import RunSummary, summarize_run
from ..errors import BenchledgerError
from ..ledger.records import RUNS_DIR, Ledger
from ..render.assets import asset_outputs
from ..render.attribution_pages import attribution_outputs
from ..render.compare_page import compare_outputs
from ..render.history_feed import FEED, history_feed
from ..render.history_json import HISTORY_JSON, history_json
from ..render.history_pages import Context, claims_by_run, history_pages
from ..render.ledger_files import ledger_outputs
from ..render.outputs import claim_outputs, index_outputs, run_outputs
from ..render.sweeps import ReportSweep, report_sweep_outputs, report_sweeps
from ..render.text import level as t_level
from .cache import BuildCache
from .collector import relaxed
from .files import WriteReport, write
from .vega import vega_bundle


@dataclass(frozen=True)
class Generated:
    ledger: Ledger
    evaluations: dict[str, Evaluation]
    written: WriteReport
    grids: tuple[Grid, ...] = ()
    receipts: Mapping[str, RunReceipts] = field(default_factory=dict)
    reused: int = 0  # runs whose pages the build cache verified as current, so not rendered
    sweeps: Mapping[str, tuple[ReportSweep, ...]] = field(default_factory=dict)  # report path -> its drawn sweeps
    history: History | None = None  # every series followed; None with `history: false`

    def summary(self) -> str:
        """One line: the ledger, what was written, and what the build cache saved."""
        report, runs = self.written, len(self.ledger.runs)
        return (
            f"{self.ledger.summary()}: {len(report.written)} files written, {report.unchanged} unchanged, "
            f"{len(report.removed)} removed; {runs - self.reused} of {runs} runs rendered"
        )


def generate_site(
    root: Path,
    docs_dir: Path,
    settings: Settings,
    cache: BuildCache,
    *,
    checked: Checked | None = None,
    save: bool = True,
    history: HistorySettings | None = None,
) -> Generated:
    """Load and check the publication, judge its claims, render its pages and write them into
    docs_dir; raise on any error. Stale receipts do not stop generation: the pages mark them.
    `cache` is the caller's (`BuildCache.for_publication`, or one the plugin keeps across rebuilds);
    `checked`, the audit the same command made of the same publication, if any. The cache is
    saved unless `save` is False (the plugin saves it once, after its crawl of the built site).
    `history`: whether history is followed, along which keys, and the feed's address."""
    with relaxed():
        if checked is not None and (checked.root, checked.docs) == (root.resolve(), docs_dir.resolve()):
            checked_audit = checked.audit
        else:
            rel = docs_dir.relative_to(root).as_posix()
            checked_audit = audit(root, rel, stale_is_error=False, cache=cache.parsed)
        generated = _generated(checked_audit, docs_dir, settings, cache, history or HistorySettings())
    if save:
        cache.save()
    return generated


def _generated(
    checked: Audit, docs_dir: Path, settings: Settings, cache: BuildCache, history_settings: HistorySettings
) -> Generated:
    """Judge, render and write a publication whose audit is `checked` (raise on its errors)."""
    if checked.errors:
        raise BenchledgerError(checked.errors)
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = reproductions(checked.receipts)
    evaluations, grids = evaluate_publication(
        checked.ledger, settings, states, reproduced, remembered=cache.evaluations
    )
    sweeps = report_sweeps(checked.ledger, settings.confidence)
    followed = follow(checked.ledger, settings, history_settings)
    judged = Judged(checked.ledger, checked.receipts, evaluations, grids, sweeps, followed, history_settings)
    outputs = render(judged, settings, cache, docs=docs_dir.resolve())
    cache.prune(set(checked.ledger.runs))
    kept = cache.kept(outputs)
    written = write(docs_dir, outputs, cache.written, kept)
    reused = sum(1 for run_id in checked.ledger.runs if f"{RUNS_DIR}/{run_id}/index.md" in kept)
    return Generated(checked.ledger, evaluations, written, grids, checked.receipts, reused, sweeps, followed)


@dataclass(frozen=True)
class History:
    """History as the build computed it: every series followed, and the runs' summaries it read."""

    series: tuple[Followed, ...]
    summaries: Mapping[str, RunSummary]


def follow(ledger: Ledger, settings: Settings, chosen: HistorySettings) -> History | None:
    """Every series of the publication followed, once per build, after the claims are judged
    (None when the publication says `history: false`)."""
    if not chosen.enabled:
        return None
    summaries = {run.id: summarize_run(run, settings.confidence) for run in ledger.runs.values()}
    found = history(
        ledger.runs.values(),
        summaries,
        min_effect=settings.min_effect,
        confidence=settings.confidence,
        along=chosen.along_keys,
        notes=ledger.history,
    )
    return History(tuple(found), summaries)


@dataclass(frozen=True)
class Judged:
    """What the pages are rendered from: the ledger, its receipts, the claims' evaluations, the
    attribution grids and the reports' drawn sweep directives."""

    ledger: Ledger
    receipts: Mapping[str, RunReceipts]
    evaluations: dict[str, Evaluation]
    grids: tuple[Grid, ...] = ()
    sweeps: Mapping[str, tuple[ReportSweep, ...]] = field(default_factory=dict)
    history: History | None = None
    history_settings: HistorySettings = field(default_factory=HistorySettings)


def render(judged: Judged, settings: Settings, cache: BuildCache, *, docs: Path | None = None) -> dict[str, bytes]:
    """Every generated file of the publication, keyed by its path under docs_dir, but the pages
    of runs whose files in `docs` the cache verified as current (`cache.kept()`); without
    `docs`, every run is rendered."""
    ledger, receipts, confidence = judged.ledger, judged.receipts, settings.confidence
    out = asset_outputs(vega_bundle())
    out |= index_outputs(ledger, receipts)
    for run in ledger.runs.values():
        key = (run.digest, receipts.get(run.id), confidence)
        if docs is None or not cache.current(run.id, key, docs):
            rendered = run_outputs(run, receipts.get(run.id), confidence, templates=cache.charts)
            cache.remember(run.id, key, rendered)
            out |= rendered
    out |= claim_outputs(ledger, judged.evaluations, settings, judged.grids, templates=cache.charts)
    out |= attribution_outputs(ledger, judged.grids, judged.evaluations, settings, cache.charts)
    out |= ledger_outputs(ledger, judged.evaluations, cache.trial_lines)
    out |= compare_outputs(ledger, confidence)
    out |= report_sweep_outputs(ledger, judged.sweeps, confidence, cache.charts)
    if judged.history is not None:
        followed, chosen = judged.history.series, judged.history_settings
        claims = claims_by_run(judged.evaluations)
        context = Context(ledger.runs, judged.history.summaries, str(t_level(confidence)), chosen.along_keys, claims)
        out |= history_pages(followed, context, cache.charts)
        out[HISTORY_JSON] = history_json(followed)
        out[FEED] = history_feed(followed, ledger.runs, chosen.site_url, chosen.site_name)
    return out
