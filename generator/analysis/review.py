"""What a change does to a publication: both sides judged as the site would judge them, and
the differences a reviewer needs: runs added, changed and removed; claims whose verdict
changed; new corrections; grids whose verdict changed; receipts gone stale; new problems.

Pure over two judged publications; reading the revisions is the ledger's (snapshot), printing
is the renderer's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import Problem
from ..ledger.records import Ledger
from .attribution import Grid
from .audit import audit
from .claims import Evaluation, evaluate_publication
from .comparison import Settings
from .receipts import RunReceipts


@dataclass(frozen=True)
class Judged:
    """One side of the change: its ledger, its problems and, when it has no errors, its verdicts."""

    ledger: Ledger
    receipts: Mapping[str, RunReceipts]
    problems: tuple[Problem, ...]
    evaluations: Mapping[str, Evaluation]
    grids: tuple[Grid, ...]


def judge(root: Path, docs_dir: str, settings: Settings) -> Judged:
    """The publication at `root` judged as its site build would judge it."""
    checked = audit(root, docs_dir, stale_is_error=False)
    if checked.errors:
        return Judged(checked.ledger, checked.receipts, checked.problems, {}, ())
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = {run_id: r.reproduction.state for run_id, r in checked.receipts.items() if r.reproduction}
    evaluations, grids = evaluate_publication(checked.ledger, settings, states, reproduced)
    return Judged(checked.ledger, checked.receipts, checked.problems, evaluations, grids)


@dataclass(frozen=True)
class VerdictChange:
    id: str
    statement: str
    before: str | None  # None: the claim is new
    after: str | None  # None: the claim was removed
    measured: str  # the effect after the change, in words ("" when none)


@dataclass(frozen=True)
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

    @property
    def empty(self) -> bool:
        found = (self.added, self.changed, self.removed, self.verdicts, self.corrections, self.grids)
        return not any(found) and not self.stale and not self.problems

    def failing(self, names: tuple[str, ...]) -> list[str]:
        """Which of the `--fail-on` names this change trips: a verdict any claim newly shows,
        `stale`, `problems`, `removed` (runs or claims)."""
        out = []
        for name in names:
            if name == "stale" and self.stale:
                out.append(f"stale: {len(self.stale)} run(s) with receipts gone stale")
            elif name == "problems" and self.problems:
                out.append(f"problems: {len(self.problems)} new")
            elif name == "removed" and (self.removed or any(v.after is None for v in self.verdicts)):
                out.append("removed: runs or claims were removed")
            elif hits := [v.id for v in (*self.verdicts, *self.grids) if v.after == name]:
                out.append(f"{name}: {', '.join(hits)}")
        return out


def review(base: Judged, head: Judged, measured: Mapping[str, str] | None = None) -> Review:
    """The differences between two judged sides; `measured` gives each head claim's effect in
    words (the renderer's wording)."""
    before, after = base.ledger.runs, head.ledger.runs
    changed = tuple(sorted(r for r in set(before) & set(after) if before[r].digest != after[r].digest))
    gone_stale = tuple(
        sorted(
            r
            for r, state in head.receipts.items()
            if state.state == "stale" and (r not in base.receipts or base.receipts[r].state != "stale")
        )
    )
    known = {str(p) for p in base.problems}
    return Review(
        added=tuple(sorted(set(after) - set(before))),
        changed=changed,
        removed=tuple(sorted(set(before) - set(after))),
        verdicts=_claim_changes(base, head, measured or {}),
        corrections=tuple(
            sorted(
                (ev.claim.id, ev.claim.corrects)
                for ev in head.evaluations.values()
                if ev.claim.corrects and ev.claim.id not in base.evaluations
            )
        ),
        grids=_grid_changes(base, head),
        stale=gone_stale,
        problems=tuple(p for p in head.problems if str(p) not in known),
        judged=not _errors(base) and not _errors(head),
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
