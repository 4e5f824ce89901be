"""Receipts: which bytes a person vouched for, whether they still match, whether the
receipt's signature holds (analysis.signatures), and whether its date can be true; as a
state per run.

A signature is judged at build time: the clock of the machine that builds, as
`ssh-keygen -Y verify` judges it by default. Never a date anyone writes into the repository:
not the receipt's `date:`, not the commit date of the .sig (GIT_COMMITTER_DATE is the
committer's choice), and not SOURCE_DATE_EPOCH, which reproducible builds usually take from
the last commit's date. A signature whose key has since expired is its own state, "signed with
a key that expired on DATE": the signature cannot show it was made while the key was valid,
so it counts as no signature. A receipt dated before its run was measured, or after the
build, is refused.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import BenchledgerError, Problem
from ..format.hashing import file_hash, hashed_files
from ..format.models import RUN_SCHEMA, RunFile
from ..ledger.records import Ledger, Receipt, Results, Run
from ..ledger.runs import decode
from ..ledger.tables import parse_results
from ..ledger.yamlio import load_model
from .reproduction import Figure, Outcome, Reproduction, figure_label, figures, outcome, outcome_of
from .signatures import Signer, check_signature, parse_allowed_signers

RunState = Literal["unverified", "verified", "dual-verified", "stale"]


@dataclass(frozen=True, kw_only=True)
class ReceiptStatus:
    name: str  # run-relative path
    verifier: str
    method: str
    date: dt.date
    statement: str | None
    changed: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    signed: bool | None = None  # None: no .sig beside the receipt, or its key has expired
    signature_problem: str | None = None
    dating_problem: str | None = None  # the receipt's date cannot be true
    key_expired: dt.date | None = None  # signed with a key whose validity ended on this day
    measured: bool = False  # written by `benchledger rerun`, with the trials it measured kept beside it

    @property
    def good(self) -> bool:
        """Counts towards verified: unchanged files, no bad signature, a possible date."""
        return not self.stale and self.signed is not False and self.dating_problem is None

    @property
    def stale(self) -> bool:
        return bool(self.changed or self.vanished or self.added)

    @property
    def state(self) -> str:
        return "stale" if self.stale else "verified"

    @property
    def standing(self) -> str:
        """The state as the run page's receipts table says it: an unsigned measured rerun's files
        may match, but it makes nothing verified (`vouches`)."""
        if self.stale or vouches(self):
            return self.state
        return "files unchanged; an unsigned rerun by a tool does not verify the run"

    @property
    def signature(self) -> str:
        if self.key_expired is not None:
            return f"signed with a key that expired on {self.key_expired.isoformat()}"
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


@dataclass(frozen=True, kw_only=True)
class Reproduced:
    """The newest good rerun receipt's verdict, recomputed from the trials it kept."""

    receipt: str  # run-relative path of the receipt
    verifier: str
    date: dt.date
    figures: tuple[Figure, ...]
    margin: float | None = None  # the verifier's --margin; None: the default
    stated: tuple[tuple[str, str], ...] = ()  # (figure, status) as the receipt's own table has them

    @property
    def outcome(self) -> Outcome:
        """The state with its counts, recomputed: "rerun unsettled (0 of 10 agree, 0 differ)"."""
        return outcome(self.figures)

    @property
    def state(self) -> Reproduction:
        return self.outcome.state

    @property
    def short(self) -> tuple[Figure, ...]:
        """The figures that did not agree."""
        return tuple(f for f in self.figures if f.status != "agrees")

    @property
    def table_note(self) -> str | None:
        """What the receipt's own table says, when it is not what the kept trials say now (the
        rule changed since it was written, or the table was edited); None when they agree."""
        now = {f.label: f.status for f in self.figures}
        said = dict(self.stated)
        if said == now:
            return None
        if not said:
            return "has no figures"
        apart = sum(said.get(label) != now.get(label) for label in {*said, *now})
        return f"says {outcome_of(list(said.values())).words}, and differs from the recomputation in {apart}"


@dataclass(frozen=True)
class RunReceipts:
    state: RunState
    receipts: tuple[ReceiptStatus, ...]
    not_covered: tuple[str, ...] = field(default=())
    reproduction: Reproduced | None = None

    @property
    def shown(self) -> str:
        """The label, and whether a kept rerun reproduced the run and by whom: "verified ·
        reproduced (2 of 2 agree, 0 differ) by Ada"; a run no person vouched for shows the rerun
        alone ("rerun unsettled (0 of 10 agree, 0 differ) by benchledger test bed (rerun)"),
        never "verified"."""
        if self.reproduction is None:
            return self.label
        by = f"{self.reproduction.outcome.words} by {self.reproduction.verifier}"
        return by if self.state == "unverified" else f"{self.label} · {by}"

    @property
    def kind(self) -> str:
        """What the run's badge is coloured by: its state, or its rerun's when no person vouched."""
        if self.state == "unverified" and self.reproduction is not None:
            return self.reproduction.state
        return self.state

    @property
    def label(self) -> str:
        """The state as pages say it. Two people vouching for the same bytes are "dual-verified
        (no rerun on record)" unless a rerun's trials are kept (benchledger rerun): re-reading
        is not reproducing. Two unsigned receipts say "unsigned" too."""
        if self.state != "dual-verified":
            return self.state
        how = [] if self.reproduction is not None else ["no rerun on record"]
        if not any(r.signed for r in self.receipts if r.good):
            how.append("unsigned")
        return f"dual-verified ({', '.join(how)})" if how else self.state


@dataclass(frozen=True)
class Clock:
    """The time receipts are judged at: the build's clock (never a date from the repository)."""

    build: dt.datetime

    @classmethod
    def now(cls) -> Clock:
        return cls(dt.datetime.now(dt.UTC))


def receipt_status(run: Run, found: Receipt, signers: Sequence[Signer], clock: Clock) -> ReceiptStatus:
    """Compare a receipt's hashes with the run folder as it is, check its signature and its date."""
    receipt, name, signature, blobs = found.data, found.name, found.signature, run.blobs
    now = hashed_files(blobs)
    listed = receipt.files
    kept = receipt.rerun.files if receipt.rerun is not None else {}
    now |= {f: file_hash(blobs[f]) for f in kept if f in blobs}
    listed = listed | kept
    changed = tuple(f for f in listed if f in now and now[f] != listed[f])
    vanished = tuple(f for f in listed if f not in now)
    added = tuple(f for f in now if f not in listed and not f.startswith("receipts/"))
    signed, problem, expired = None, None, None
    if signature is not None:
        judged = check_signature(blobs[name], blobs[signature], receipt.verifier, signers, clock.build)
        problem, expired = judged.problem, judged.expired
        signed = None if expired is not None else problem is None
    dating = None
    if receipt.date < run.meta.date:
        dating = f"dated {receipt.date} but the run was measured on {run.meta.date}; a receipt cannot predate its run"
    elif receipt.date > clock.build.date():
        dating = f"dated {receipt.date}, after the build ({clock.build:%Y-%m-%d}); write the day it was verified"
    return ReceiptStatus(
        name=name,
        verifier=receipt.verifier,
        method=receipt.method,
        date=receipt.date,
        statement=receipt.statement,
        changed=changed,
        vanished=vanished,
        added=added,
        signed=signed,
        signature_problem=problem,
        dating_problem=dating,
        key_expired=expired,
        measured=receipt.rerun is not None,
    )


def run_receipts(run: Run, signers: Sequence[Signer], clock: Clock) -> RunReceipts:
    """The run's state: unverified, verified, dual-verified (two different people), or stale.
    Only receipts that vouch count (`vouches`); the newest good rerun is kept either way."""
    statuses = tuple(receipt_status(run, r, signers, clock) for r in run.receipts)
    covered = {f for r in run.receipts for f in r.data.files}
    not_covered = tuple(f for f in hashed_files(run.blobs) if f not in covered) if run.receipts else ()
    good = [s for s in statuses if s.good and vouches(s)]
    if any(s.stale for s in statuses):
        state: RunState = "stale"
    elif len({person(s.verifier) for s in good}) >= 2:
        state = "dual-verified"
    elif good:
        state = "verified"
    else:
        state = "unverified"
    return RunReceipts(state, statuses, not_covered, _reproduced(run, statuses))


def vouches(status: ReceiptStatus) -> bool:
    """Does the receipt make the run verified? A person's statement does (a review, a
    recomputation, a rerun they describe). A receipt `benchledger rerun` wrote with the trials
    it measured is the tool's measurement: it vouches only when signed, which ties it to a
    named person through allowed_signers; unsigned, it shows as reproduced (or not) by its
    verifier, never as verified."""
    return not status.measured or status.signed is True


def _reproduced(run: Run, statuses: Sequence[ReceiptStatus]) -> Reproduced | None:
    """The newest good rerun receipt, judged again from the trials it kept."""
    reruns = [s for s in statuses if s.good and s.method == "rerun"]
    by_name = {r.name: r for r in run.receipts}
    for status in sorted(reruns, key=lambda s: (s.date, s.name), reverse=True):
        record = by_name[status.name].data.rerun
        kept = next((f for f in record.files if f.endswith("/results.csv")), None) if record else None
        if record is None or kept is None:
            continue
        try:
            rerun = kept_results(run, kept)
        except BenchledgerError:
            continue  # unreadable kept trials reproduce nothing; check reports them
        found = tuple(figures(run, rerun, record.margin))
        stated = tuple((figure_label(f.metric, f.at), f.status) for f in record.figures)
        return Reproduced(
            receipt=status.name,
            verifier=status.verifier,
            date=status.date,
            figures=found,
            margin=record.margin,
            stated=stated,
        )
    return None


# Letters of other scripts that look like Latin ones: two names that differ only by them
# are one person (with NFKC, which folds full-width and compatibility forms).
CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwABEKMHOPCTXIJSabeiknoptuxABEHIKMNOPTYX",
)


def person(name: str) -> str:
    """A verifier's name as compared for dual verification: NFKC, invisible and format
    characters removed, confusable letters folded, case and spaces ignored."""
    folded = unicodedata.normalize("NFKC", name)
    visible = "".join(ch for ch in folded if unicodedata.category(ch) not in ("Cf", "Cc", "Mn", "Me"))
    return re.sub(r"\s+", "", visible.translate(CONFUSABLES).casefold())


def ledger_receipts(ledger: Ledger, clock: Clock | None = None) -> tuple[dict[str, RunReceipts], list[Problem]]:
    """Receipt status of every run, and the problems of allowed_signers."""
    clock = clock or Clock.now()
    signers: list[Signer] = []
    problems: list[Problem] = []
    if ledger.allowed_signers is not None:
        signers, problems = parse_allowed_signers(ledger.allowed_signers)
    out = {run.id: run_receipts(run, signers, clock) for run in ledger.runs.values()}
    return out, problems


def reproductions(states: Mapping[str, RunReceipts]) -> dict[str, Outcome]:
    """Each rerun run's outcome, for the claims that use the run (`claims.evaluate_publication`)."""
    return {run_id: r.reproduction.outcome for run_id, r in states.items() if r.reproduction is not None}


def receipt_problems(states: Mapping[str, RunReceipts], stale_is_error: bool) -> list[Problem]:
    """Stale and badly signed receipts as problems naming run, receipt and file."""
    out = []
    for run_id, state in states.items():
        for r in state.receipts:
            where = f"runs/{run_id}/{r.name}"
            if r.stale:
                out.append(
                    Problem(
                        file=where,
                        message=f"stale: {r.staleness()}; re-verify the run and "
                        "write a new receipt (benchledger verify), or restore the files",
                        severity="error" if stale_is_error else "warning",
                    )
                )
            if r.signed is False:
                out.append(Problem(file=where + ".sig", message=f"badly signed: {r.signature_problem}"))
            if r.key_expired is not None:
                message = (
                    f"{r.signature}: the signature cannot show it was made before then, so it counts as "
                    "none; ask the verifier to sign the receipt again with a current key (ssh-keygen -Y sign), "
                    "or remove the .sig"
                )
                out.append(Problem(file=where + ".sig", message=message, severity="warning"))
            if r.dating_problem is not None:
                out.append(Problem(file=where, field="date", message=r.dating_problem))
    return out


def kept_results(run: Run, kept: str) -> Results:
    """A rerun's kept results.csv, read against the rerun's own kept run.yaml (its metrics may
    differ from the original's: a rerun without a draft records no drafted tokens)."""
    meta_path = kept.rsplit("/", 1)[0] + "/run.yaml"
    meta = run.meta
    if meta_path in run.blobs:
        meta, _ = load_model(RunFile, decode(run.blobs[meta_path], meta_path), f"{run.path}/{meta_path}", RUN_SCHEMA)
    return parse_results(decode(run.blobs[kept], kept), f"{run.path}/{kept}", meta)
