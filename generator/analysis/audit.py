"""`audit()`: everything `check` checks, in one call: read the repository, check the
claims' references, and check every receipt (hashes, signatures, allowed_signers).

It lives in analysis/ rather than ledger/ because receipt states are analysis: the
reader (ledger/) never calls a semantic check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import Problem
from ..ledger.history import history_problems
from ..ledger.load import load
from ..ledger.records import DOCS_DIR, Ledger
from ..ledger.references import check_references
from ..ledger.runs import ParsedRuns
from ..ledger.seen_runs import SeenRuns
from .grid_checks import grid_problems
from .receipts import Clock, RunReceipts, ledger_receipts, receipt_problems
from .signatures import parse_allowed_signers


@dataclass(frozen=True)
class Audit:
    ledger: Ledger
    receipts: dict[str, RunReceipts]  # run id -> its receipt state
    problems: tuple[Problem, ...]  # every problem, errors and warnings, in file order

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def audit(
    root: Path | str,
    docs_dir: str = DOCS_DIR,
    stale_is_error: bool = True,
    cache: ParsedRuns | None = None,
    signers_from: Ledger | None = None,
    seen: SeenRuns | None = None,
) -> Audit:
    """Load the publication and collect every problem with it. Stale receipts are errors
    unless `stale_is_error` is False (then warnings: the site marks them). With `signers_from`,
    signatures are judged with that ledger's allowed_signers instead of the publication's own
    (review: a pull request cannot list its own keys); its own file's lines are still checked.
    `seen`: `serve`'s memory of run folders read before (`ledger.runs.load_run`)."""
    ledger = load(root, docs_dir, cache, seen)
    if signers_from is None:
        receipts, signer_problems = ledger_receipts(ledger, Clock.now())
    else:
        trusted = replace(ledger, allowed_signers=signers_from.allowed_signers)
        receipts, _ = ledger_receipts(trusted, Clock.now())
        own = ledger.allowed_signers
        signer_problems = parse_allowed_signers(own)[1] if own is not None else []
    problems = [*ledger.problems, *check_references(ledger), *history_problems(ledger), *grid_problems(ledger)]
    problems += signer_problems
    problems += receipt_problems(receipts, stale_is_error)
    ordered = sorted(problems, key=lambda p: (p.file, p.line or 0))
    return Audit(ledger, receipts, tuple(ordered))


@dataclass(frozen=True)
class Checked:
    """The audit `benchledger check` made of the publication at `root` with its pages in `docs`,
    moments before, which passed: the generation that follows in the same command uses it
    instead of reading and checking every run again."""

    root: Path
    docs: Path
    audit: Audit
