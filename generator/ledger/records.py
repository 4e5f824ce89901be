"""The ledger's records: what a publication holds once read. Frozen, and no I/O here.

A `Ledger` is built by `ledger.load`; everything downstream (analysis, render,
site) reads these records and never the files again.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Problem
from ..format.conditions import condition_key, condition_value, same_condition
from ..format.front_matter import Claim, ReportMeta
from ..format.history import HistoryFile
from ..format.keys import flatten
from ..format.models import ManifestFile, ReceiptFile, RunFile

RUNS_DIR = "runs"
HISTORY_DIR = "history"  # history/<name>.yaml at the publication root
DOCS_DIR = "site_src"
REPORTS_DIR = "reports"
Lines = Mapping[tuple[str | int, ...], int]  # YAML path -> line number


@dataclass(frozen=True, slots=True)
class Row:
    """One row of results.csv: one trial at one condition."""

    line: int
    trial: int | None  # None in a reported run
    at: tuple[str, ...]  # condition values, as written
    values: dict[str, float] = field(hash=False)
    spread: dict[str, tuple[float, int]] = field(default_factory=dict, hash=False)  # published (SD, n) per metric
    sd_below: frozenset[str] = field(default_factory=frozenset, hash=False)  # metrics whose SD is a bound ("<0.005")
    excluded: str | None = None  # the reason, when run.yaml's `excluded:` leaves this row out of the statistics


@dataclass(frozen=True)
class Results:
    """The rows of results.csv: one per trial and condition."""

    conditions: tuple[str, ...]
    metrics: tuple[str, ...]
    rows: tuple[Row, ...]

    def condition_values(self) -> list[tuple[str, ...]]:
        """Distinct condition tuples, numbers in numeric order."""
        return list(self._by_condition)

    @functools.cached_property
    def _by_condition(self) -> dict[tuple[str, ...], tuple[Row, ...]]:
        """Each condition tuple's rows in trial order, conditions in `condition_values` order:
        a run's page, sweeps, comparisons and claims ask for them thousands of times."""
        at_rows: dict[tuple[str, ...], list[Row]] = {}
        for row in self.rows:
            at_rows.setdefault(row.at, []).append(row)
        ordered = sorted(at_rows, key=lambda at: tuple(condition_key(v) for v in at))
        return {at: tuple(sorted(at_rows[at], key=lambda r: r.trial or 0)) for at in ordered}

    def matching(self, at: Mapping[str, object]) -> list[tuple[str, ...]]:
        """Condition tuples whose values agree with every `at` entry (8 matches '8.0')."""
        index = {name: i for i, name in enumerate(self.conditions)}
        return [
            values
            for values in self._by_condition
            if all(name in index and same_condition(want, values[index[name]]) for name, want in at.items())
        ]

    def mapping(self, at: tuple[str, ...]) -> dict[str, object]:
        """A condition tuple as {condition: value}, numbers as numbers (what `at:` holds)."""
        return {name: condition_value(v) for name, v in zip(self.conditions, at, strict=True)}

    def select(self, at: tuple[str, ...], excluded: bool = False) -> list[Row]:
        """Rows at one condition tuple, in trial order; excluded rows only when asked."""
        return [r for r in self._by_condition.get(at, ()) if excluded or r.excluded is None]

    def excluded_at(self, at: tuple[str, ...]) -> list[Row]:
        """The excluded rows at one condition tuple, in trial order."""
        return [r for r in self.select(at, excluded=True) if r.excluded is not None]

    @property
    def trials(self) -> int:
        return len({r.trial for r in self.rows if r.trial is not None})


@dataclass(frozen=True)
class Request:
    """One row of requests.csv."""

    trial: int
    at: tuple[str, ...]
    request: int
    start_s: float | None
    ttft_s: float | None
    latency_s: float | None
    output_tokens: float | None
    draft_tokens: float | None
    draft_accepted: float | None
    error: str
    phase: str = "measured"  # warmup | measured | cooldown: only measured requests enter the statistics


@dataclass(frozen=True)
class Receipt:
    name: str  # run-relative path, e.g. receipts/2026-09-25-zak.yaml
    data: ReceiptFile
    signature: str | None  # run-relative path of the .sig beside it


@dataclass(frozen=True, kw_only=True)
class Run:
    id: str
    path: str  # repository-relative, e.g. runs/<id>
    meta: RunFile
    manifest: ManifestFile
    results: Results
    requests: tuple[Request, ...] | None
    receipts: tuple[Receipt, ...]
    blobs: Mapping[str, bytes]  # every file's bytes as committed, by run-relative path
    digest: str  # sha256 over every file's path and bytes

    @property
    def files(self) -> list[str]:
        return sorted(self.blobs)

    @property
    def reported(self) -> bool:
        return self.meta.source.kind == "reported"

    @property
    def figures(self) -> list[str]:
        """Its metrics, then its rates: every name a claim, a sweep or a comparison may use."""
        return [*self.meta.metrics, *self.meta.rates]

    def environment(self) -> dict[str, object]:
        """The manifest (less `schema` and `captured`) and `setup` as dotted keys, and
        `warmup_trials` when the run records it: what comparisons match between runs. A key the
        run does not record is absent, never None (absent on both sides is not a match)."""
        manifest = self.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
        manifest.pop("schema", None)
        manifest.pop("captured", None)
        out = flatten(manifest) if manifest else {}
        out.update(flatten(self.meta.setup, "setup") if self.meta.setup else {})
        if self.meta.warmup_trials is not None:
            out["warmup_trials"] = self.meta.warmup_trials
        return out


@dataclass(frozen=True)
class SweepDirective:
    """`<!-- sweep METRIC: RUN, RUN -->` in a report's Markdown: a sweep chart of those runs."""

    text: str  # the directive as written, which the chart replaces
    line: int  # in the report file
    figure: str  # a metric or rate of the runs
    runs: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Report:
    slug: str  # path under the reports folder without .md: "play-1", or "2026/play-1" in a sub-folder
    path: str  # repository-relative
    meta: ReportMeta
    body: str  # the Markdown after the front matter
    digest: str
    lines: Lines = field(default_factory=dict, compare=False)
    sweeps: tuple[SweepDirective, ...] = ()


@dataclass(frozen=True, kw_only=True)
class HistoryNotes:
    """One committed history/<name>.yaml: annotations, exclusions and accepted changes."""

    path: str  # repository-relative, e.g. history/2026-10.yaml
    data: HistoryFile
    lines: Lines = field(default_factory=dict, compare=False)


@dataclass(frozen=True, kw_only=True)
class Ledger:
    root: Path
    runs: Mapping[str, Run]
    reports: tuple[Report, ...]
    problems: tuple[Problem, ...] = field(default=())
    allowed_signers: str | None = None  # the text of <root>/allowed_signers, when present
    failed_runs: frozenset[str] = frozenset()  # run folders that exist but did not load
    history: tuple[HistoryNotes, ...] = ()  # history/*.yaml, in file name order

    @property
    def claims(self) -> list[tuple[Report, Claim]]:
        return [(report, claim) for report in self.reports for claim in report.meta.claims]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def summary(self) -> str:
        return f"{len(self.runs)} runs, {len(self.reports)} reports, {len(self.claims)} claims"
