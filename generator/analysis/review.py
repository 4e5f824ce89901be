"""What a change does to a publication: both sides judged as the site would judge them, and
the differences a reviewer needs: runs added, changed and removed; claims whose verdict
changed; new corrections; grids whose verdict changed; receipts gone stale; new problems.

Pure over two judged publications; reading the revisions is the ledger's (snapshot), printing
is the renderer's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from ..errors import Problem
from ..ledger.records import Ledger
from .audit import audit
from .claims import Evaluation, evaluate_publication
from .comparison import Settings
from .grid_records import Grid, GridVerdict
from .receipts import RunReceipts, reproductions
from .verdicts import Verdict


@dataclass(frozen=True)
class Judged:
    """One side of the change: its ledger, its problems and, when it has no errors, its verdicts."""

    ledger: Ledger
    receipts: Mapping[str, RunReceipts]
    problems: tuple[Problem, ...]
    evaluations: Mapping[str, Evaluation]
    grids: tuple[Grid, ...]


FAIL_ON: tuple[str, ...] = (
    *sorted({*get_args(Verdict), *get_args(GridVerdict)}),
    "stale",
    "problems",
    "removed",
)  # what `--fail-on` may name: a verdict a claim or grid can newly show, or a kind of change


def judge(root: Path, docs_dir: str, settings: Settings) -> Judged:
    """The publication at `root` judged as its site build would judge it."""
    checked = audit(root, docs_dir, stale_is_error=False)
    if checked.errors:
        return Judged(checked.ledger, checked.receipts, checked.problems, {}, ())
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = reproductions(checked.receipts)
    evaluations, grids = evaluate_publication(checked.ledger, settings, states, reproduced)
    return Judged(checked.ledger, checked.receipts, checked.problems, evaluations, grids)


@dataclass(frozen=True)
class VerdictChange:
    id: str
    statement: str
    before: str | None  # None: the claim is new
    after: str | None  # None: the claim was removed
    measured: str  # the effect after the change, in words ("" when none)


@dataclass(frozen=True, kw_only=True)
class Review:
    added: tuple[str, ...]
    changed: tuple[str, ...]  # runs whose files changed
    removed: tuple[str, ...]
    verdicts: tuple[VerdictChange, ...]  # claims whose verdict (as shown) changed, new or removed
    corrections: tuple[tuple[str, str], ...]  # (new correction, the claim it corrects)
    grids: tuple[VerdictChange, ...]
    stale: tuple[str, ...]  # runs whose receipts went stale
    problems: tuple[Problem, ...]  # problems of the head that the base did not have
    judged: bool  # both sides could be judged (no errors)
    edited: tuple[str, ...] = ()  # claims kept under their id whose declaration changed
    receipts: tuple[tuple[str, str, str], ...] = ()  # (run, state before, state after), every change
    reruns: tuple[tuple[str, str, str], ...] = ()  # (run, rerun before, after) in the site's words, every change
    findings: tuple[tuple[str, str, str], ...] = ()  # (new correction, its finding, what its runs say of it)
    guarded: tuple[tuple[str, str], ...] = ()  # (workflow, mkdocs.yml or allowed_signers path, added/changed/removed)

    @property
    def empty(self) -> bool:
        found = (self.added, self.changed, self.removed, self.verdicts, self.corrections, self.grids, self.edited)
        return (
            not any(found)
            and not self.guarded
            and not self.stale
            and not self.problems
            and not self.receipts
            and not self.reruns
        )

    @property
    def downgraded(self) -> tuple[str, ...]:
        """Runs whose receipts vouch for less than before: gone stale, or no longer verified."""
        rank = {"dual-verified": 2, "verified": 1, "unverified": 0, "stale": -1}
        return tuple(run for run, was, now in self.receipts if rank.get(now, 0) < rank.get(was, 0))

    def failing(self, names: tuple[str, ...]) -> list[str]:  # names: from FAIL_ON
        """Which of the `--fail-on` names this change trips: a verdict any claim newly shows,
        `stale`, `problems`, `removed` (runs or claims)."""
        out = []
        for name in names:
            if name == "stale" and (self.stale or self.downgraded):
                runs = sorted({*self.stale, *self.downgraded})
                out.append(f"stale: receipts of {', '.join(runs)} vouch for less than before")
            elif name == "problems" and self.problems:
                out.append(f"problems: {len(self.problems)} new")
            elif name == "removed" and (self.removed or any(v.after is None for v in self.verdicts)):
                out.append("removed: runs or claims were removed")
            elif hits := [v.id for v in (*self.verdicts, *self.grids) if name in (v.after or "").split(" · ")]:
                out.append(f"{name}: {', '.join(hits)}")
        return out


def review(base: Judged, head: Judged, measured: Mapping[str, str] | None = None) -> Review:
    """The differences between two judged sides; `measured` gives each head claim's effect in
    words (the renderer's wording)."""
    before, after = base.ledger.runs, head.ledger.runs
    broken = set(head.ledger.failed_runs)  # still there, but unreadable: changed, not removed
    changed = tuple(
        sorted({r for r in set(before) & set(after) if before[r].digest != after[r].digest} | (broken & set(before)))
    )
    gone_stale = tuple(
        sorted(
            r
            for r, state in head.receipts.items()
            if state.state == "stale" and (r not in base.receipts or base.receipts[r].state != "stale")
        )
    )
    known = {str(p) for p in base.problems}
    judged = not _errors(base) and not _errors(head)  # a side with errors has no verdicts to compare
    return Review(
        added=tuple(sorted(set(after) - set(before))),
        changed=changed,
        removed=tuple(sorted(set(before) - set(after) - broken)),
        verdicts=_claim_changes(base, head, measured or {}) if judged else (),
        corrections=tuple(
            sorted(
                (ev.claim.id, ev.claim.corrects)
                for ev in head.evaluations.values()
                if ev.claim.corrects and ev.claim.id not in base.evaluations
            )
        ),
        grids=_grid_changes(base, head) if judged else (),
        findings=_findings(base, head),
        stale=gone_stale,
        problems=tuple(p for p in head.problems if str(p) not in known),
        judged=judged,
        edited=_edited(base, head),
        receipts=tuple(
            (run, base.receipts[run].state, state.state)
            for run, state in sorted(head.receipts.items())
            if run in base.receipts and base.receipts[run].state != state.state
        ),
        reruns=_rerun_changes(base, head),
    )


NO_RERUN = "no rerun"


def _rerun_changes(base: Judged, head: Judged) -> tuple[tuple[str, str, str], ...]:
    """Runs of both sides whose rerun outcome, as the site says it, changed: a rerun receipt
    added or removed, or kept trials now judged otherwise ("rerun unsettled (0 of 10 agree, 0 differ)")."""

    def said(receipts: RunReceipts) -> str:
        return receipts.reproduction.outcome.words if receipts.reproduction is not None else NO_RERUN

    return tuple(
        (run, said(base.receipts[run]), said(state))
        for run, state in sorted(head.receipts.items())
        if run in base.receipts and said(base.receipts[run]) != said(state)
    )


def _edited(base: Judged, head: Judged) -> tuple[str, ...]:
    """Claims whose declaration (statement, claimed, runs, limits, ...) changed under the same id:
    a claim is corrected by a new one, never edited away, so a reviewer must see it."""
    before = {c.id: c.model_dump(mode="json") for _, c in base.ledger.claims}
    return tuple(
        sorted(c.id for _, c in head.ledger.claims if c.id in before and before[c.id] != c.model_dump(mode="json"))
    )


def _errors(side: Judged) -> bool:
    return any(p.severity == "error" for p in side.problems)


def _claim_changes(base: Judged, head: Judged, measured: Mapping[str, str]) -> tuple[VerdictChange, ...]:
    out = []
    for claim_id in sorted(set(base.evaluations) | set(head.evaluations)):
        old, new = base.evaluations.get(claim_id), head.evaluations.get(claim_id)
        was, now = (_shown(old) if old else None), (_shown(new) if new else None)
        either = new or old
        if was != now and either is not None:
            out.append(VerdictChange(claim_id, either.claim.statement, was, now, measured.get(claim_id, "")))
    return tuple(out)


def _shown(ev: Evaluation) -> str:
    """The verdict as the pages show it: "supported · misattributed" when a grid overrules."""
    found = ev.overruled
    return f"{ev.verdict} · {found.verdict}" if found is not None else ev.verdict


def _grid_changes(base: Judged, head: Judged) -> tuple[VerdictChange, ...]:
    old = {g.attribution.id: g for g in base.grids}
    new = {g.attribution.id: g for g in head.grids}
    out = []
    for grid_id in sorted(set(old) | set(new)):
        was, now = old.get(grid_id), new.get(grid_id)
        before, after = (was.verdict if was else None), (now.verdict if now else None)
        either = now or was
        if before != after and either is not None:
            why = now.reason if now else ""
            out.append(VerdictChange(grid_id, either.attribution.statement, before, after, why))
    return tuple(out)


def _findings(base: Judged, head: Judged) -> tuple[tuple[str, str, str], ...]:
    """Each new correction that states a finding: (its id, the finding, what its runs say of it)."""
    out = []
    for claim_id, ev in sorted(head.evaluations.items()):
        found = ev.correction
        if claim_id in base.evaluations or found is None or found.finding is None:
            continue
        said = found.disagreement or (f"{found.check} by its runs" if found.checked else "not checked")
        out.append((claim_id, found.finding, said))
    return tuple(out)
