"""Receipts: which bytes a person vouched for, whether they still match, and whether
the receipt's signature holds (analysis.signatures), as a state per run.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import Problem
from ..format.hashing import hashed_files
from ..ledger.records import Ledger, Receipt
from .signatures import Signer, check_signature, parse_allowed_signers

RunState = Literal["unverified", "verified", "dual-verified", "stale"]


@dataclass(frozen=True)
class ReceiptStatus:
    name: str  # run-relative path
    verifier: str
    method: str
    date: dt.date
    statement: str | None
    changed: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    signed: bool | None = None  # None: no .sig beside the receipt
    signature_problem: str | None = None

    @property
    def stale(self) -> bool:
        return bool(self.changed or self.vanished or self.added)

    @property
    def state(self) -> str:
        return "stale" if self.stale else "verified"

    @property
    def signature(self) -> str:
        if self.signed is None:
            return "unsigned"
        return "signed" if self.signed else "badly signed"

    def staleness(self) -> str:
        parts = [
            f"{', '.join(files)} {what}"
            for files, what in ((self.changed, "changed"), (self.vanished, "vanished"), (self.added, "added"))
            if files
        ]
        return "; ".join(parts) + " since it was written"


@dataclass(frozen=True)
class RunReceipts:
    state: RunState
    receipts: tuple[ReceiptStatus, ...]
    not_covered: tuple[str, ...] = field(default=())


def receipt_status(blobs: Mapping[str, bytes], found: Receipt, signers: Sequence[Signer]) -> ReceiptStatus:
    """Compare a receipt's hashes with the run folder as it is, and check its signature."""
    receipt, name, signature = found.data, found.name, found.signature
    now = hashed_files(blobs)
    listed = receipt.files
    changed = tuple(f for f in listed if f in now and now[f] != listed[f])
    vanished = tuple(f for f in listed if f not in now)
    added = tuple(f for f in now if f not in listed)
    signed, problem = None, None
    if signature is not None:
        problem = check_signature(blobs[name], blobs[signature], receipt.verifier, signers, receipt.date)
        signed = problem is None
    return ReceiptStatus(
        name,
        receipt.verifier,
        receipt.method,
        receipt.date,
        receipt.statement,
        changed,
        vanished,
        added,
        signed,
        problem,
    )


def run_receipts(blobs: Mapping[str, bytes], receipts: Sequence[Receipt], signers: Sequence[Signer]) -> RunReceipts:
    """The run's state: unverified, verified, dual-verified (two verifiers), or stale."""
    statuses = tuple(receipt_status(blobs, r, signers) for r in receipts)
    covered = {f for r in receipts for f in r.data.files}
    not_covered = tuple(f for f in hashed_files(blobs) if f not in covered) if receipts else ()
    good = [s for s in statuses if not s.stale and s.signed is not False]
    if any(s.stale for s in statuses):
        state: RunState = "stale"
    elif len({_person(s.verifier) for s in good}) >= 2:
        state = "dual-verified"
    elif good:
        state = "verified"
    else:
        state = "unverified"
    return RunReceipts(state, statuses, not_covered)


def _person(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip().casefold())


def ledger_receipts(ledger: Ledger) -> tuple[dict[str, RunReceipts], list[Problem]]:
    """Receipt status of every run, and the problems of allowed_signers."""
    signers: list[Signer] = []
    problems: list[Problem] = []
    if ledger.allowed_signers is not None:
        signers, problems = parse_allowed_signers(ledger.allowed_signers)
    out = {run.id: run_receipts(run.blobs, run.receipts, signers) for run in ledger.runs.values()}
    return out, problems


def receipt_problems(states: Mapping[str, RunReceipts], stale_is_error: bool) -> list[Problem]:
    """Stale and badly signed receipts as problems naming run, receipt and file."""
    out = []
    for run_id, state in states.items():
        for r in state.receipts:
            where = f"runs/{run_id}/{r.name}"
            if r.stale:
                out.append(
                    Problem(
                        where,
                        None,
                        None,
                        f"stale: {r.staleness()}; re-verify the run and "
                        "write a new receipt (benchledger verify), or restore the files",
                        "error" if stale_is_error else "warning",
                    )
                )
            if r.signed is False:
                out.append(Problem(where + ".sig", None, None, f"badly signed: {r.signature_problem}"))
    return out
