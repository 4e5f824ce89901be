"""The whole generation in one function: audit, evaluate, render, write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.attribution import Grid
from ..analysis.audit import audit
from ..analysis.claims import Evaluation, evaluate_publication
from ..analysis.comparison import Settings
from ..analysis.receipts import RunReceipts
from ..errors import BenchledgerError
from ..ledger.records import RUNS_DIR, Ledger
from ..render.assets import asset_outputs
from ..render.attribution_pages import attribution_outputs
from ..render.compare_page import compare_outputs
from ..render.ledger_files import ledger_outputs
from ..render.outputs import claim_outputs, index_outputs
from ..render.sweeps import ReportSweep, report_sweep_outputs, report_sweeps
from .cache import BuildCache
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

    def summary(self) -> str:
        """One line: the ledger, what was written, and what the build cache saved."""
        report, runs = self.written, len(self.ledger.runs)
        return (
            f"{self.ledger.summary()}: {len(report.written)} files written, {report.unchanged} unchanged, "
            f"{len(report.removed)} removed; {runs - self.reused} of {runs} runs rendered"
        )


def generate_site(root: Path, docs_dir: Path, settings: Settings, cache: BuildCache | None = None) -> Generated:
    """Load and check the publication, judge its claims, render its pages and write them into
    docs_dir; raise on any error. Stale receipts do not stop generation: the pages mark them."""
    cache = cache if cache is not None else BuildCache.for_publication(root)
    checked = audit(root, docs_dir.relative_to(root).as_posix(), stale_is_error=False, cache=cache.parsed)
    if checked.errors:
        raise BenchledgerError(checked.errors)
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = {run_id: r.reproduction.state for run_id, r in checked.receipts.items() if r.reproduction}
    evaluations, grids = evaluate_publication(checked.ledger, settings, states, reproduced)
    sweeps = report_sweeps(checked.ledger, settings.confidence)
    outputs = render(checked.ledger, checked.receipts, evaluations, settings, cache, grids, docs_dir.resolve(), sweeps)
    cache.prune(set(checked.ledger.runs))
    kept = cache.kept(outputs)
    written = write(docs_dir, outputs, cache.written, kept)
    cache.save()
    reused = sum(1 for run_id in checked.ledger.runs if f"{RUNS_DIR}/{run_id}/index.md" in kept)
    return Generated(checked.ledger, evaluations, written, grids, checked.receipts, reused, sweeps)


def render(
    ledger: Ledger,
    receipts: Mapping[str, RunReceipts],
    evaluations: dict[str, Evaluation],
    settings: Settings,
    cache: BuildCache,
    grids: tuple[Grid, ...] = (),
    docs: Path | None = None,
    sweeps: Mapping[str, tuple[ReportSweep, ...]] | None = None,
) -> dict[str, bytes]:
    """Every generated file of the publication, keyed by its path under docs_dir, but the
    pages of runs whose files in `docs` the cache verified as current (`cache.kept()`)."""
    out = asset_outputs(vega_bundle())
    out |= index_outputs(ledger, receipts)
    for run in ledger.runs.values():
        out |= cache.run_outputs(run, receipts.get(run.id), settings.confidence, docs)
    out |= claim_outputs(ledger, evaluations, settings, grids)
    out |= attribution_outputs(ledger, grids, evaluations, settings)
    out |= ledger_outputs(ledger, evaluations, cache.trial_lines)
    out |= compare_outputs(ledger, settings.confidence)
    sweeps = report_sweeps(ledger, settings.confidence) if sweeps is None else sweeps
    out |= report_sweep_outputs(ledger, sweeps, settings.confidence)
    return out
