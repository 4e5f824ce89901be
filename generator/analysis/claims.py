"""Evaluate the claims of a ledger: each claim's comparison (or figure) and verdict,
its receipt states, what the attribution grids holding its runs say of its credit, and the
correction chains.

Pure: takes a validated ledger, returns frozen `Evaluation`s; nothing here renders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, replace

from ..format.claimed import Claimed, parse_claimed
from ..format.front_matter import Claim
from ..format.models import Incomplete
from ..format.signed import level
from ..ledger.records import Ledger, Report, Run
from ..ledger.references import shared_conditions
from .attribution import attribute_all
from .comparison import ClaimComparison, Comparison, Confound, Settings, Side, compare, side, unit_of
from .credit import CreditCheck, check_credit
from .findings import Correction, correction_of
from .grid_records import Grid
from .receipts import RunState
from .reproduction import Outcome
from .verdicts import INCOMPLETE, Verdict

# Verdicts that credit the claim's change with a gain: a grid that finds the credit wrong
# (misattributed) or inseparable (interacts) overrules them on every page.
CREDITING: tuple[Verdict, ...] = ("supported", "overstated")


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """A claim with its verdict and everything shown beside it."""

    claim: Claim
    report: Report
    verdict: Verdict
    reason: str  # the verdict in plain words
    min_effect: float
    claimed: Claimed | None = None
    comparison: ClaimComparison | None = None  # comparison claims
    figure: Side | None = None  # single-figure claims
    unit: str | None = None
    corrected_by: tuple[str, ...] = ()
    receipts: tuple[tuple[str, RunState], ...] = ()  # (run id, its receipt state)
    reproduced: tuple[tuple[str, Outcome], ...] = ()  # (run id, its rerun's outcome), for rerun runs
    sources: tuple[tuple[str, str], ...] = ()  # (run id, who measured it: "measured here", "republished from X")
    credits: tuple[CreditCheck, ...] = ()  # what attribution grids holding both runs say of the credit
    corrections: tuple[Correction, ...] = ()  # what each correction of this claim found (`with_corrections`)
    correction: Correction | None = None  # a correction: what it found of the claim it corrects
    incomplete: tuple[tuple[str, str], ...] = ()  # (run id, "stopped after 3 of 5 trials (why)") of its incomplete runs

    @property
    def overruled(self) -> CreditCheck | None:
        """The grid that finds the claim's credit misattributed or inseparable, when the claim's
        own verdict credits its change with a gain."""
        if self.verdict not in CREDITING:
            return None
        return next((c for c in self.credits if c.overrules), None)

    @property
    def headline(self) -> str:
        """The verdict counts and filters file the claim under: the grid's, when it overrules."""
        found = self.overruled
        return found.verdict if found is not None else self.verdict

    @property
    def only(self) -> Comparison | None:
        """The single condition of a one-condition comparison claim."""
        return self.comparison.only if self.comparison else None

    @property
    def conditions(self) -> tuple[Comparison, ...]:
        return self.comparison.conditions if self.comparison else ()

    @property
    def confounds(self) -> tuple[Confound, ...]:
        return self.comparison.confounds if self.comparison else ()

    @property
    def flags(self) -> list[str]:
        out = []
        if self.confounds:
            out.append("unmatched conditions")
        if self.corrected_by:
            found = list(dict.fromkeys(c.finding for c in self.corrections if c.finding is not None))
            out.append(f"corrected ({', '.join(found)})" if found else "corrected")
        if any(c.disagreement for c in (*self.corrections, self.correction) if c is not None):
            out.append("finding not borne out")
        if self.verdict == "no trial data":
            out.append("no trial data")
        if self.incomplete and self.verdict != INCOMPLETE:  # judged on its trials (accepted); else the verdict says it
            out.append("incomplete run")
        if self.verdict == "supported" and any(c.understated for c in self.conditions):
            out.append("understated")
        out += [f"credit {c.verdict} by the grid “{c.statement}”" for c in self.credits if c.verdict != "supported"]
        out += self.comparison.flags if self.comparison else []
        states = {state for _, state in self.receipts}
        if "stale" in states:
            out.append("stale run")
        if "unverified" in states:
            out.append("unverified run")
        reruns = {found.state for _, found in self.reproduced}
        if "not reproduced" in reruns:
            out.append("run not reproduced")
        if "rerun unsettled" in reruns:  # neither reproduced nor not: no figure settled either way
            out.append("rerun unsettled")
        if any(words.startswith("republished from") for _, words in self.sources):
            out.append("republished run")
        return out


def provenance(run: Run) -> str:
    """Who measured a run, in words (the run page links the citation)."""
    src = run.meta.source
    if src.kind == "measured":
        return "measured here"
    where = f" ({src.url})" if src.url else ""
    return f"{'republished from' if src.kind == 'republished' else 'reported by'} {src.citation}{where}"


def corrections(ledger: Ledger) -> dict[str, tuple[str, ...]]:
    """For each claim id, the ids of the claims that correct it directly."""
    out: dict[str, list[str]] = {}
    for _, claim in ledger.claims:
        if claim.corrects is not None:
            out.setdefault(claim.corrects, []).append(claim.id)
    return {k: tuple(v) for k, v in out.items()}


STATEMENT_REASON = (
    "No trial data: a statement published as prose, without figures. Committing the runs "
    "behind it (several trials per side) would let the ledger evaluate it."
)


def evaluate(
    report: Report,
    claim: Claim,
    ledger: Ledger,
    settings: Settings,
    *,
    states: Mapping[str, RunState] | None = None,
    fixes: Mapping[str, tuple[str, ...]] | None = None,
    reproduced: Mapping[str, Outcome] | None = None,
) -> Evaluation:
    """The verdict and everything shown beside it, for one claim. `states` holds each run's
    receipt state (unverified when absent); `fixes` is `corrections(ledger)`, when known."""
    claimed = parse_claimed(claim.claimed) if claim.claimed else None
    if claim.min_effect is not None:
        settings = replace(settings, min_effect=claim.min_effect)
    corrected = (fixes if fixes is not None else corrections(ledger)).get(claim.id, ())
    runs = list(dict.fromkeys(r for r in (claim.baseline, claim.candidate, claim.run) if r is not None))
    receipts = tuple((r, (states or {}).get(r, "unverified")) for r in runs)
    sources = tuple((r, provenance(ledger.runs[r])) for r in runs if r in ledger.runs)
    base = Evaluation(
        claim=claim,
        report=report,
        verdict="no trial data",
        reason=STATEMENT_REASON,
        min_effect=settings.min_effect,
        claimed=claimed,
        corrected_by=corrected,
        receipts=receipts,
        sources=sources,
        reproduced=tuple((r, (reproduced or {})[r]) for r in runs if r in (reproduced or {})),
    )
    cut = tuple((r, _stopped(gap)) for r in runs if r in ledger.runs and (gap := ledger.runs[r].meta.incomplete))
    base = replace(base, incomplete=cut)
    if claim.kind == "statement":
        return base
    if claim.kind == "figure":
        return _unless_incomplete(_figure(base, ledger, settings))
    assert claim.baseline and claim.candidate and claim.metric
    baseline, candidate = ledger.runs[claim.baseline], ledger.runs[claim.candidate]
    conditions = claim.at_list if claim.at_list is not None else shared_conditions(baseline, candidate)
    own = (claim.baseline_at, claim.candidate_at)
    found = compare(
        baseline, candidate, claim.metric, conditions, varies=claim.varies, settings=settings, claimed=claimed, own=own
    )
    return _unless_incomplete(
        replace(base, verdict=found.verdict, reason=found.reason, comparison=found, unit=found.unit)
    )


ACCEPTED = "incomplete: accepted"  # what a claim says to be judged on an incomplete run's trials (code on the card)


def _stopped(gap: Incomplete) -> str:
    """'stopped after 3 of 5 trials (why)', or 'stopped early (why)' when run.yaml gives no counts."""
    done, planned = gap.completed_trials, gap.planned_trials
    when = f"after {done} of {planned} trials" if done is not None and planned is not None else "early"
    return f"stopped {when} ({gap.reason})"


def _unless_incomplete(ev: Evaluation) -> Evaluation:
    """The verdict "incomplete run" for a claim resting on a run that stopped before every
    planned trial, unless the claim says `incomplete: accepted` (or has no trial data); what its
    trials would give stays in the reason. Every condition reads the claim's verdict, so the
    forest, its table and the export say what the card says."""
    if not ev.incomplete or ev.claim.incomplete == "accepted" or ev.verdict == "no trial data":
        return ev
    runs = " ".join(f"Run {run} {stopped}." for run, stopped in ev.incomplete)
    said = ev.reason.strip()
    named = ev.verdict.capitalize()
    # "Inconclusive: the interval ..." -> "would be inconclusive: the interval ..."; "The stated
    # figure ..." -> "would be supported: the stated figure ..."
    rest = said[len(named) :] if said.startswith(named) else f": {said[:1].lower()}{said[1:]}"
    rest += "" if rest.endswith(".") else "."
    have = "it has" if len(ev.incomplete) == 1 else "they have"
    reason = (
        f"{runs} On the trials {have}, the claim would be {ev.verdict}{rest} To judge it on them, add "
        f"`{ACCEPTED}` to the claim; or measure the run again in full."
    )
    comparison = ev.comparison
    if comparison is not None:
        conditions = tuple(replace(c, verdict=INCOMPLETE) for c in comparison.conditions)
        comparison = replace(comparison, conditions=conditions, verdict=INCOMPLETE)
    return replace(ev, verdict=INCOMPLETE, reason=reason, comparison=comparison)


def _figure(base: Evaluation, ledger: Ledger, settings: Settings) -> Evaluation:
    """A single-figure claim: does the stated figure lie inside the interval of the mean?"""
    claim = base.claim
    assert claim.run is not None and claim.metric is not None
    run = ledger.runs[claim.run]
    fig = side(run, claim.metric, claim.at if isinstance(claim.at, dict) else {}, settings.confidence)
    reason = (
        "No trial data: a single figure copied from a publication that reported no trials."
        if fig.reported
        else "A single figure: its trials and interval are shown; it is compared with nothing."
    )
    found: Verdict = "no trial data" if fig.reported or fig.n < 2 else "within noise"
    if found != "no trial data" and fig.summary and fig.summary.ci_low is not None:
        inside = fig.summary.ci_low <= (claim.value or math.nan) <= (fig.summary.ci_high or math.nan)
        found = "supported" if inside else "contradicted"
        reason = (
            f"The stated figure {'lies inside' if inside else 'lies outside'} the "
            f"{level(settings.confidence)} interval of the mean of {fig.n} trials."
        )
    return replace(base, verdict=found, reason=reason, figure=fig, unit=unit_of(run, claim.metric))


# A claim's evaluation from an earlier build, under the key it was made with (`evaluation_key`):
# the build cache keeps one per claim, so a build re-evaluates only claims whose inputs changed.
Remembered = MutableMapping[str, tuple[tuple[object, ...], Evaluation]]


def evaluation_key(
    claim: Claim,
    ledger: Ledger,
    settings: Settings,
    *,
    states: Mapping[str, RunState],
    fixes: Mapping[str, tuple[str, ...]],
    reproduced: Mapping[str, Outcome],
) -> tuple[object, ...]:
    """Everything `evaluate` reads for this claim but its report: the claim as written (its JSON,
    so a value's type counts: `at: {x: 1}` and `at: {x: true}` select different rows), the
    verdict settings, the claim's corrections, and each of its runs' digest (every byte of its
    files), receipt state and reproduction. Equal keys give equal evaluations, for the same code
    (the build cache is dropped when benchledger's code changes)."""
    runs = [r for r in (claim.baseline, claim.candidate, claim.run) if r is not None]
    held = tuple(
        (r, ledger.runs[r].digest if r in ledger.runs else None, states.get(r), reproduced.get(r)) for r in runs
    )
    by_id = {c.id: c for _, c in ledger.claims}
    fixed = tuple(_written(by_id[i], ledger) for i in fixes.get(claim.id, ()) if i in by_id)
    corrected = _written(by_id[claim.corrects], ledger) if claim.corrects in by_id else None
    return (claim.model_dump_json(), settings, fixed, corrected, held)  # JSON: 1, 1.0 and true differ


def _written(claim: Claim, ledger: Ledger) -> tuple[object, ...]:
    """A related claim as written (its finding and cause too) and its runs' digests: what a
    claim's corrections (and the claim a correction corrects) bring to its page."""
    runs = (claim.baseline, claim.candidate, claim.run)
    return (claim.model_dump_json(), tuple(ledger.runs[r].digest for r in runs if r is not None and r in ledger.runs))


def evaluate_all(
    ledger: Ledger,
    settings: Settings,
    states: Mapping[str, RunState] | None = None,
    reproduced: Mapping[str, Outcome] | None = None,
    *,
    remembered: Remembered | None = None,
) -> dict[str, Evaluation]:
    """Every claim's evaluation. With `remembered`, a claim whose key is unchanged keeps its
    remembered evaluation (with its report as now read), and every other is evaluated and remembered."""
    from ..forked import forked_map  # the build's workers

    fixes = corrections(ledger)
    out: dict[str, Evaluation | None] = {}
    keys: dict[str, tuple[object, ...]] = {}
    todo: list[tuple[Report, Claim]] = []
    for report, claim in ledger.claims:
        out[claim.id] = None  # in the ledger's order
        if remembered is None:
            todo.append((report, claim))
            continue
        key = evaluation_key(claim, ledger, settings, states=states or {}, fixes=fixes, reproduced=reproduced or {})
        known = remembered.get(claim.id)
        if known is not None and known[0] == key:
            out[claim.id] = replace(known[1], report=report, claim=claim)
            continue
        keys[claim.id] = key
        todo.append((report, claim))

    def judged(item: tuple[Report, Claim]) -> Evaluation:
        report, claim = item
        return evaluate(report, claim, ledger, settings, states=states, fixes=fixes, reproduced=reproduced)

    for (_, claim), evaluation in zip(todo, forked_map(judged, todo, least=32, what="claims judged"), strict=True):
        out[claim.id] = evaluation
        if remembered is not None:
            remembered[claim.id] = (keys[claim.id], evaluation)
    if remembered is not None:
        for gone in set(remembered) - set(out):
            del remembered[gone]
    return {claim_id: evaluation for claim_id, evaluation in out.items() if evaluation is not None}


def evaluate_publication(
    ledger: Ledger,
    settings: Settings,
    states: Mapping[str, RunState] | None = None,
    reproduced: Mapping[str, Outcome] | None = None,
    *,
    remembered: Remembered | None = None,
) -> tuple[dict[str, Evaluation], tuple[Grid, ...]]:
    """Every claim judged, every attribution grid judged, and each claim with what the grids
    holding its runs say of its credit: what the site and `benchledger export` both publish.
    `remembered` is the build cache's (see `evaluate_all`)."""
    grids = tuple(attribute_all(ledger, settings))
    evaluations = evaluate_all(ledger, settings, states, reproduced, remembered=remembered)
    return with_corrections(with_credits(evaluations, grids), ledger, settings), grids


def with_corrections(
    evaluations: Mapping[str, Evaluation], ledger: Ledger, settings: Settings
) -> dict[str, Evaluation]:
    """Each correction with what it found of the claim it corrects (`findings.correction_of`),
    and each corrected claim with its corrections' findings, in the order `corrected_by` lists them."""
    found: dict[str, Correction] = {}
    for claim_id, ev in evaluations.items():
        original = evaluations.get(ev.claim.corrects or "")
        if original is not None:
            found[claim_id] = correction_of(original.claim, ev.claim, ledger, settings)
    out = {}
    for claim_id, ev in evaluations.items():
        mine = tuple(found[i] for i in ev.corrected_by if i in found)
        out[claim_id] = (
            replace(ev, corrections=mine, correction=found.get(claim_id)) if mine or claim_id in found else ev
        )
    return out


def with_credits(evaluations: Mapping[str, Evaluation], grids: tuple[Grid, ...]) -> dict[str, Evaluation]:
    """Each evaluation with the checks of every grid that bears on its claim."""
    out = {}
    for claim_id, ev in evaluations.items():
        checks = tuple(found for g in grids if (found := check_credit(ev.claim, ev.conditions, g)) is not None)
        out[claim_id] = replace(ev, credits=checks) if checks else ev
    return out


def chain(claim_id: str, ledger: Ledger) -> list[str]:
    """The claim's whole correction chain: the original first, then corrections by date."""
    by_id = {c.id: c for _, c in ledger.claims}
    root = claim_id
    while (parent := by_id[root].corrects) is not None and parent in by_id:
        root = parent
    fixes = corrections(ledger)
    out, todo = [], [root]
    while todo:
        current = todo.pop(0)
        if current in out:
            break
        out.append(current)
        todo.extend(sorted(fixes.get(current, ()), key=lambda i: (str(by_id[i].date), i)))
    return out
