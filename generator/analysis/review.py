"""What a change does to a publication: both sides judged as the site would judge them, and
the differences a reviewer needs: runs added, changed and removed; claims whose verdict
changed; new corrections; grids whose verdict changed; receipts gone stale; new problems.

Pure over two judged publications; reading the revisions is the ledger's (snapshot), printing
is the renderer's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import get_args

from ..errors import Problem
from ..format.hashing import RECEIPTS_DIR, hashed_files
from ..ledger.records import Ledger, Run
from .audit import audit
from .claims import Evaluation, evaluate_publication
from .comparison import Settings
from .grid_records import Grid, GridVerdict
from .history_review import AddedPoint, NoteChange, added_points, note_changes
from .history_settings import HistorySettings
from .receipts import RunReceipts, ledger_receipts, reproductions, vouches
from .summaries import summarize_run
from .verdicts import Verdict


@dataclass(frozen=True)
class Judged:
    """One side of the change: its ledger, its problems and, when it has no errors, its verdicts."""

    ledger: Ledger
    receipts: Mapping[str, RunReceipts]
    problems: tuple[Problem, ...]
    evaluations: Mapping[str, Evaluation]
    grids: tuple[Grid, ...]
    settings: Settings = field(default_factory=Settings)


FAIL_ON: tuple[str, ...] = (
    *sorted({*get_args(Verdict), *get_args(GridVerdict)}),
    "stale",
    "problems",
    "removed",
    "worse",
)  # what `--fail-on` may name: a verdict a claim or grid can newly show, a kind of change, or worse:
# an added run judged worse than the current level of its series


def judge(root: Path, docs_dir: str, settings: Settings, signers_from: Ledger | None = None) -> Judged:
    """The publication at `root` judged as its site build would judge it; with `signers_from`
    (the base side), its signatures judged with that side's allowed_signers, not its own."""
    checked = audit(root, docs_dir, stale_is_error=False, signers_from=signers_from)
    if checked.errors:
        return Judged(checked.ledger, checked.receipts, checked.problems, {}, (), settings)
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = reproductions(checked.receipts)
    evaluations, grids = evaluate_publication(checked.ledger, settings, states, reproduced)
    return Judged(checked.ledger, checked.receipts, checked.problems, evaluations, grids, settings)


def under(side: Judged, settings: Settings) -> Judged:
    """The side's claims and grids judged again with other settings (the base's): whether a
    changed mkdocs.yml setting, not the data, flipped a verdict."""
    if _errors(side):
        return side
    states = {run_id: r.state for run_id, r in side.receipts.items()}
    evaluations, grids = evaluate_publication(side.ledger, settings, states, reproductions(side.receipts))
    return replace(side, evaluations=evaluations, grids=grids, settings=settings)


@dataclass(frozen=True)
class VerdictChange:
    id: str
    statement: str
    before: str | None  # None: the claim is new
    after: str | None  # None: the claim was removed
    measured: str  # the effect after the change, in words ("" when none)
    by_settings: bool = False  # with the base's mkdocs.yml settings the verdict would not have changed


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
    settings: tuple[tuple[str, str, str], ...] = ()  # (what, before, after) of mkdocs.yml: settings_changes
    signers: tuple[tuple[str, str], ...] = ()  # ("adds"/"removes", principal) of allowed_signers lines
    files: tuple[tuple[str, str, str], ...] = ()  # (changed run, what happened: FILE_CHANGES, run-relative path)
    resigned: tuple[tuple[str, str, str], ...] = ()  # (run, receipt, verifier): vouches for files this change edits
    refused: str = ""  # why a side could not be read at all (then nothing else is known)
    workflows: tuple[tuple[str, tuple[str, ...], bool], ...] = ()  # (path, its triggers, runs self-hosted)
    hooks: tuple[str, ...] = ()  # the hook files either side's mkdocs.yml names (code the build runs)
    code_folders: tuple[tuple[str, str], ...] = ()  # (folder, "hook" or "theme"): code_folders
    own_signers: tuple[tuple[str, str], ...] = ()  # (run, its state were the change's own allowed_signers trusted)
    history: tuple[AddedPoint, ...] = ()  # each added run against the current segment of its series
    notes: tuple[NoteChange, ...] = ()  # history-file entries added or removed (an exclusion can hide a regression)

    @property
    def empty(self) -> bool:
        found = (
            *(self.added, self.changed, self.removed, self.verdicts, self.corrections, self.grids, self.edited),
            self.notes,
        )
        return (
            not any(found)
            and not self.refused
            and not self.guarded
            and not self.stale
            and not self.problems
            and not self.receipts
            and not self.reruns
        )

    @property
    def downgraded(self) -> tuple[str, ...]:
        """Runs whose receipts vouch for less than before: gone stale, or no longer verified."""
        rank = {"dual-verified": 2, "verified": 1, "unverified": 0, "stale": -1, RESIGNED: -1}
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
            elif name == "worse" and (worse := [h for h in self.history if h.verdict == "worse"]):
                said = ", ".join(f"{h.run} ({h.benchmark}: {h.metric})" for h in worse)
                out.append(f"worse: {said} judged worse than the current level of its series")
            elif hits := [v.id for v in (*self.verdicts, *self.grids) if name in (v.after or "").split(" · ")]:
                out.append(f"{name}: {', '.join(hits)}")
        return out


RESIGNED = "re-signed after an edit"  # a receipt state: it vouches for files the same change edits


def review(
    base: Judged,
    head: Judged,
    measured: Mapping[str, str] | None = None,
    at_base_settings: Judged | None = None,
    history: HistorySettings | None = None,
) -> Review:
    """The differences between two judged sides; `measured` gives each head claim's effect in
    words (the renderer's wording); `at_base_settings`, the head's claims and grids judged with the base's
    settings (`under`), when mkdocs.yml changed them; `history`, the head's history settings
    (default: on, the default along-keys): each added run judged against its series."""
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
    resigned = tuple(found for run in changed for found in _resigned(base, head, run))
    judged = not _errors(base) and not _errors(head)  # a side with errors has no verdicts to compare
    return Review(
        added=tuple(sorted(set(after) - set(before))),
        changed=changed,
        removed=tuple(sorted(set(before) - set(after) - broken)),
        verdicts=_claim_changes(base, head, measured or {}, at_base_settings or head) if judged else (),
        corrections=tuple(
            sorted(
                (ev.claim.id, ev.claim.corrects)
                for ev in head.evaluations.values()
                if ev.claim.corrects and ev.claim.id not in base.evaluations
            )
        ),
        grids=_grid_changes(base, head, at_base_settings or head) if judged else (),
        findings=_findings(base, head),
        stale=gone_stale,
        problems=tuple(p for p in head.problems if str(p) not in known),
        judged=judged,
        edited=_edited(base, head),
        receipts=_receipt_changes(base, head, resigned),
        reruns=_rerun_changes(base, head),
        files=tuple(found for run in changed for found in _file_changes(base.ledger, head.ledger, run)),
        resigned=resigned,
        own_signers=_own_signers(base, head),
        history=_history(base, head, history or HistorySettings()),
        notes=note_changes(base.ledger.history, head.ledger.history),
    )


def _history(base: Judged, head: Judged, chosen: HistorySettings) -> tuple[AddedPoint, ...]:
    """Each run the head adds, judged against the current segment of its series in the base
    (none when history is off or a side has errors)."""
    added = sorted(set(head.ledger.runs) - set(base.ledger.runs))
    if not added or not chosen.enabled or _errors(base) or _errors(head):
        return ()
    sides = [
        (
            side.ledger.runs.values(),
            {r.id: summarize_run(r, side.settings.confidence) for r in side.ledger.runs.values()},
        )
        for side in (base, head)
    ]
    return added_points(
        (*sides[0], base.ledger.history),
        (*sides[1], head.ledger.history),
        added,
        min_effect=head.settings.min_effect,
        confidence=head.settings.confidence,
        along=chosen.along_keys,
    )


def _own_signers(base: Judged, head: Judged) -> tuple[tuple[str, str], ...]:
    """Runs whose receipt state would differ were the change's own allowed_signers trusted
    (the head is judged with the base's): (run, that state)."""
    if base.ledger.allowed_signers == head.ledger.allowed_signers:
        return ()
    own, _ = ledger_receipts(head.ledger)
    judged = head.receipts
    return tuple((run, s.state) for run, s in sorted(own.items()) if run in judged and judged[run].state != s.state)


def _receipt_changes(
    base: Judged, head: Judged, resigned: tuple[tuple[str, str, str], ...]
) -> tuple[tuple[str, str, str], ...]:
    """(run, state before, state after) of every run whose receipt state changed; a run that a
    receipt written or rewritten in this change vouches for after its files were edited reads
    "re-signed after an edit", never verified."""
    again = {run for run, _, _ in resigned}
    out = []
    for run, state in sorted(head.receipts.items()):
        now = RESIGNED if run in again and state.state in ("verified", "dual-verified") else state.state
        if run in base.receipts and base.receipts[run].state != now:
            out.append((run, base.receipts[run].state, now))
    return tuple(out)


def _resigned(base: Judged, head: Judged, run: str) -> list[tuple[str, str, str]]:
    """Receipts of a run that had receipts, that vouch for files this change edited and are
    themselves new or rewritten in it: (run, receipt, verifier). The edit and the vouching come
    from one change."""
    old, new = base.ledger.runs.get(run), head.ledger.runs.get(run)
    if old is None or new is None or not old.receipts or run not in head.receipts:
        return []
    before, after = hashed_files(old.blobs), hashed_files(new.blobs)
    edited = {f for f in after if before.get(f) != after[f]}
    if not edited:
        return []
    out = []
    for status in head.receipts[run].receipts:
        listed = next(r.data.files for r in new.receipts if r.name == status.name)
        same = old.blobs.get(status.name) == new.blobs.get(status.name)
        if status.good and vouches(status) and edited & set(listed) and not same:
            out.append((run, status.name, status.verifier))
    return out


FILE_CHANGES = (  # what `Review.files` says of a file
    *("edited", "added", "removed", "rerun receipt added"),
    *(f"{kind} {how}" for kind in ("receipt", "signature") for how in ("added", "removed", "rewritten")),
)


def _file_changes(base: Ledger, head: Ledger, run: str) -> list[tuple[str, str, str]]:
    """What changed in a run folder both sides hold: its files edited, added or removed, and its
    receipts added (a rerun's named as such), rewritten or removed."""
    old, new = base.runs.get(run), head.runs.get(run)
    if old is None or new is None:
        return []
    out = []
    for name in sorted({*old.blobs, *new.blobs}, key=lambda n: (n.startswith(RECEIPTS_DIR), n)):
        was, now = old.blobs.get(name), new.blobs.get(name)
        receipt = _is_receipt(new, name) or _is_receipt(old, name)
        signature = name.endswith(".sig") and (_is_receipt(new, name[:-4]) or _is_receipt(old, name[:-4]))
        if was == now or (name.startswith(RECEIPTS_DIR) and not receipt and not signature):
            continue  # a rerun's kept trials go with its receipt
        kind = "receipt " if receipt else "signature " if signature else ""
        if was is None:
            rerun = receipt and any(r.name == name and r.data.rerun is not None for r in new.receipts)
            what = "rerun receipt added" if rerun else kind + "added"
        else:
            what = kind + ("removed" if now is None else "rewritten" if kind else "edited")
        out.append((run, what, name))
    return out


def _is_receipt(run: Run, name: str) -> bool:
    return any(r.name == name for r in run.receipts)


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


def _claim_changes(
    base: Judged, head: Judged, measured: Mapping[str, str], at_base_settings: Judged
) -> tuple[VerdictChange, ...]:
    out = []
    for claim_id in sorted(set(base.evaluations) | set(head.evaluations)):
        old, new = base.evaluations.get(claim_id), head.evaluations.get(claim_id)
        was, now = (_shown(old) if old else None), (_shown(new) if new else None)
        either = new or old
        if was != now and either is not None:
            other = at_base_settings.evaluations.get(claim_id)
            by_settings = at_base_settings is not head and other is not None and _shown(other) == was
            out.append(
                VerdictChange(claim_id, either.claim.statement, was, now, measured.get(claim_id, ""), by_settings)
            )
    return tuple(out)


def _shown(ev: Evaluation) -> str:
    """The verdict as the pages show it: "supported · misattributed" when a grid overrules."""
    found = ev.overruled
    return f"{ev.verdict} · {found.verdict}" if found is not None else ev.verdict


def _grid_changes(base: Judged, head: Judged, at_base_settings: Judged) -> tuple[VerdictChange, ...]:
    old = {g.attribution.id: g for g in base.grids}
    new = {g.attribution.id: g for g in head.grids}
    other = {g.attribution.id: g.verdict for g in at_base_settings.grids} if at_base_settings is not head else {}
    out = []
    for grid_id in sorted(set(old) | set(new)):
        was, now = old.get(grid_id), new.get(grid_id)
        before, after = (was.verdict if was else None), (now.verdict if now else None)
        either = now or was
        if before != after and either is not None:
            why = now.reason if now else ""
            by_settings = grid_id in other and other[grid_id] == before
            out.append(VerdictChange(grid_id, either.attribution.statement, before, after, why, by_settings))
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
