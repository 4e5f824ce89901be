"""The whole generation in one function: audit, evaluate, render, write."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.audit import Audit, Checked, audit
from ..analysis.claims import Evaluation, evaluate_publication
from ..analysis.comparison import Settings
from ..analysis.grid_records import Grid
from ..analysis.history_settings import HistorySettings
from ..analysis.receipts import RunReceipts, reproductions
from ..analysis.summaries import RunSummary, summarize_run
from ..errors import BenchledgerError
from ..forked import forked_map
from ..ledger.records import RUNS_DIR, Ledger, Run
from ..render.assets import asset_outputs
from ..render.attribution_pages import attribution_outputs
from ..render.chart_templates import ChartTemplates
from ..render.compare_page import compare_outputs
from ..render.compressed import KeptFiles
from ..render.ledger_files import ledger_outputs
from ..render.outputs import claim_outputs, index_outputs, run_outputs
from ..render.sweeps import ReportSweep, report_sweep_outputs, report_sweeps
from ..render.text import level as t_level
from .cache import BuildCache
from .collector import relaxed
from .files import Writer, WriteReport, write
from .vega import vega_bundle

if TYPE_CHECKING:
    from ..analysis.history import Followed


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
            seen = cache.seen_runs if cache.serving else None
            checked_audit = audit(root, rel, stale_is_error=False, cache=cache.parsed, seen=seen)
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
    summaries = run_summaries(checked.ledger, settings.confidence, cache)
    followed = follow(checked.ledger, settings, history_settings, cache)
    judged = Judged(checked.ledger, checked.receipts, evaluations, grids, sweeps, followed, history_settings, summaries)
    batches: list[Writer] = []  # past RUNS_AT_ONCE runs to render, their files are written as they come

    def sink(batch: dict[str, bytes]) -> None:
        if not batches:
            batches.append(Writer(docs_dir, cache.written))
        batches[0].add(batch)

    # The runs rendered are remembered as current before their files are written: a build that
    # fails before they are must not leave the cache saying so (the next build would keep the old
    # pages, whose stamps still match), so it goes back to what it said before.
    rendered_before = dict(cache.rendered)
    try:
        outputs = render(judged, settings, cache, docs=docs_dir.resolve(), sink=sink)
        cache.prune(set(checked.ledger.runs))
        if batches:  # every file went to the sink: `render` returned none
            kept = cache.kept(batches[0].current)
            written = batches[0].finish(kept)
        else:
            kept = cache.kept(outputs)
            written = write(docs_dir, outputs, cache.written, kept)
    except BaseException:
        cache.rendered.clear()
        cache.rendered.update(rendered_before)
        raise
    reused = sum(1 for run_id in checked.ledger.runs if f"{RUNS_DIR}/{run_id}/index.md" in kept)
    return Generated(checked.ledger, evaluations, written, grids, checked.receipts, reused, sweeps, followed)


@dataclass(frozen=True)
class History:
    """History as the build computed it: every series followed, what it was followed from
    (`key`), and the runs' summaries it read (None when remembered from an earlier build)."""

    series: tuple[Followed, ...]
    summaries: Mapping[str, RunSummary] | None
    key: str = ""


def history_key(ledger: Ledger, settings: Settings, chosen: HistorySettings) -> str:
    """Everything history is followed from: each run's id and digest, the verdict settings, the
    along-keys and the history files' entries (a sha256)."""
    notes = [(n.path, n.data.model_dump_json()) for n in ledger.history]
    runs = sorted((run.id, run.digest) for run in ledger.runs.values())
    given = [runs, settings.confidence, settings.min_effect, list(chosen.along_keys), notes]
    return hashlib.sha256(json.dumps(given).encode()).hexdigest()


def follow(
    ledger: Ledger, settings: Settings, chosen: HistorySettings, cache: BuildCache | None = None
) -> History | None:
    """Every series of the publication followed, after the claims are judged (None when the
    publication says `history: false`). `cache` (the build's) keeps the last result by what it
    was followed from, so `check`'s warnings and the build that follows in the same process, or
    a later build of the same runs, follow it once, and keeps every run's summary."""
    if not chosen.enabled:
        return None
    key = history_key(ledger, settings, chosen)
    known = cache.history.get("followed") if cache is not None else None
    if known is not None and known[0] == key:
        return History(known[1], None, key)
    from ..analysis.history import history  # here: a publication with `history: false` never imports it

    if cache is not None:
        summaries = run_summaries(ledger, settings.confidence, cache)
    else:
        summaries = {run.id: summarize_run(run, settings.confidence) for run in ledger.runs.values()}
    found = tuple(
        history(
            ledger.runs.values(),
            summaries,
            min_effect=settings.min_effect,
            confidence=settings.confidence,
            along=chosen.along_keys,
            notes=ledger.history,
            known=cache.series_rows if cache is not None and cache.serving else None,
        )
    )
    if cache is not None:
        cache.history["followed"] = (key, found)
    return History(found, summaries, key)


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
    summaries: Mapping[str, RunSummary] | None = None  # every run's, at the build's confidence level


RUNS_AT_ONCE = 1000  # past this many runs to render, their files are written 1,000 runs at a time


def render(
    judged: Judged,
    settings: Settings,
    cache: BuildCache,
    *,
    docs: Path | None = None,
    sink: Callable[[dict[str, bytes]], None] | None = None,
) -> dict[str, bytes]:
    """Every generated file of the publication, keyed by its path under docs_dir, but the pages
    of runs whose files in `docs` the cache verified as current (`cache.kept()`); without
    `docs`, every run is rendered. With `sink` (`files.Writer.add`) and more than RUNS_AT_ONCE
    runs to render, every file goes to it instead, and nothing is returned: first the files
    that are not a run's, then the runs' files RUNS_AT_ONCE runs at a time, so a build of
    10,000 runs never holds them all (a run's file that a person wrote is then refused after
    the earlier batches were written: listed, so the next build takes them back)."""
    ledger, receipts, confidence = judged.ledger, judged.receipts, settings.confidence
    out = asset_outputs(vega_bundle())
    out |= index_outputs(ledger, receipts)
    keys = {run.id: (run.digest, receipts.get(run.id), confidence) for run in ledger.runs.values()}
    todo = [run for run in ledger.runs.values() if docs is None or not cache.current(run.id, keys[run.id], docs)]
    summaries = judged.summaries or {}
    streamed = sink is not None and len(todo) > RUNS_AT_ONCE

    def runs_rendered(chunk: list[Run]) -> dict[str, bytes]:
        batch: dict[str, bytes] = {}
        for run, rendered in zip(chunk, render_runs(chunk, receipts, confidence, summaries, cache.charts), strict=True):
            cache.remember(run.id, keys[run.id], rendered)
            batch |= rendered
        return batch

    if not streamed:
        out |= runs_rendered(todo)
    out |= claim_outputs(
        ledger,
        judged.evaluations,
        settings,
        judged.grids,
        templates=cache.charts,
        remembered=cache.claim_pages if cache.serving else None,
    )
    out |= attribution_outputs(ledger, judged.grids, judged.evaluations, settings, cache.charts)
    out |= ledger_outputs(ledger, judged.evaluations, cache.trial_lines)
    out |= compare_outputs(ledger, confidence)
    out |= report_sweep_outputs(ledger, judged.sweeps, confidence, cache.charts)
    if judged.history is not None:
        out |= history_outputs(judged, judged.history, confidence, cache)
    if not streamed or sink is None:
        return out
    sink(out)  # first the publication's other files: a person's file among them stops it before any run's
    for start in range(0, len(todo), RUNS_AT_ONCE):
        sink(runs_rendered(todo[start : start + RUNS_AT_ONCE]))
    return {}


def history_outputs(judged: Judged, found: History, confidence: float, cache: BuildCache) -> dict[str, bytes]:
    """The History pages, their charts, ledger/history.json and the feed; the last build's files
    while everything they are rendered from is unchanged (the cache's `history["pages"]`)."""
    ledger, chosen = judged.ledger, judged.history_settings
    from ..render.history_pages import claims_by_run

    claims = claims_by_run(judged.evaluations)
    shown = {
        run: [
            [e.claim.id, e.claim.corrects, e.verdict, e.claim.statement, e.claim.metric, e.claim.at_list] for e in evs
        ]
        for run, evs in claims.items()
    }
    given = [found.key, confidence, chosen.site_url, chosen.site_name, list(chosen.along_keys), shown]
    key = hashlib.sha256(json.dumps(given, sort_keys=True, default=str).encode()).hexdigest()
    known = cache.history.get("pages")
    if known is not None and known[0] == key and isinstance(known[1], KeptFiles):
        return known[1].unpacked()
    from ..render.history_feed import FEED, history_feed  # here: with `history: false`, never imported
    from ..render.history_json import HISTORY_JSON, history_json
    from ..render.history_pages import Context, history_pages

    summaries = found.summaries or judged.summaries
    if summaries is None:
        summaries = {run.id: summarize_run(run, confidence) for run in ledger.runs.values()}
    context = Context(ledger.runs, summaries, str(t_level(confidence)), chosen.along_keys, claims)
    series = cache.history.get("series")  # (the confidence level, each series' files): `history_pages`
    if series is None or series[0] != confidence:
        series = cache.history["series"] = (confidence, {})
    out = history_pages(found.series, context, cache.charts, series[1], compress=not cache.serving)
    out[HISTORY_JSON] = history_json(found.series)
    out[FEED] = history_feed(found.series, ledger.runs, chosen.site_url, chosen.site_name)
    cache.history["pages"] = (key, KeptFiles.of(out, compress=not cache.serving))
    return out


def run_summaries(ledger: Ledger, confidence: float, cache: BuildCache) -> dict[str, RunSummary]:
    """Every run's summary at this confidence level, from the build cache where the run's digest
    is the one it was summarized from, else computed (by forked workers when there are many)."""
    known = cache.summaries
    todo = [run for run in ledger.runs.values() if known.get(run.id, ((None, None),))[0] != (run.digest, confidence)]
    for run, summary in zip(
        todo, forked_map(partial(summarize_run, confidence=confidence), todo, what="run summaries"), strict=True
    ):
        known[run.id] = ((run.digest, confidence), summary)
    for gone in set(known) - set(ledger.runs):
        del known[gone]
    return {run_id: known[run_id][1] for run_id in ledger.runs}


def render_runs(
    runs: list[Run],
    receipts: Mapping[str, RunReceipts],
    confidence: float,
    summaries: Mapping[str, RunSummary],
    templates: ChartTemplates,
) -> list[dict[str, bytes]]:
    """Each run's pages, chart specs and files (`render.outputs.run_outputs`), by forked workers
    when there are many. The first is rendered here, so the chart templates most runs share are
    built once; the templates a worker builds come back with its pages, for the build cache."""

    def one(run: Run) -> tuple[dict[str, bytes], list[tuple[str, str]], list[tuple[str, str]]]:
        known, compact = len(templates.known), len(templates.compact)
        summary = summaries.get(run.id)
        rendered = run_outputs(run, receipts.get(run.id), confidence, templates=templates, summary=summary)
        return rendered, _newest(templates.known, known), _newest(templates.compact, compact)

    done = [one(run) for run in runs[:1]] + forked_map(one, runs[1:], what="runs rendered")
    for _, known, compact in done:
        templates.known.update(known)
        templates.compact.update(compact)
    return [rendered for rendered, _, _ in done]


def _newest(mapping: dict[str, str], before: int) -> list[tuple[str, str]]:
    """The entries added to a dict since it held `before` (a dict keeps the order of insertion)."""
    return list(reversed(list(islice(reversed(mapping.items()), len(mapping) - before))))
