"""What a correction found, and whether its runs bear it out.

A correction (a claim with `corrects:`) may say what it found of the claim it corrects
(`finding:` misattributed, overstated, contradicted, within noise or withdrawn) and what got
the credit instead (`cause:`, dotted keys or words). When the correction compares runs, the
corrected claim's own `claimed` is judged again on the correction's runs, and the finding must
agree with that verdict:

- contradicted, overstated and within noise: the verdict is the finding;
- misattributed: the verdict is not supported, and every key of `cause` is recorded, equal,
  on both of the correction's sides (the correction held the cause fixed);
- withdrawn is never checked, nor is a correction without runs (its finding is its author's word).

Beside the finding, the keys that both of the correction's runs record with one value and
neither of the corrected claim's runs records: what the correction held equal that the
original could not be checked for (the seed's lesson: the kernel path nobody recorded).

Pure: takes claims and loaded runs, returns frozen records.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

from ..format.claimed import parse_claimed
from ..format.front_matter import FINDINGS, Claim, Finding
from ..format.keys import as_yaml
from ..ledger.records import Ledger, Run
from ..ledger.references import shared_conditions
from .comparison import Settings, compare
from .verdicts import Verdict

__all__ = ["CHECKED", "FINDINGS", "RULE", "Correction", "correction_of"]
CHECKED: tuple[Finding, ...] = ("misattributed", "overstated", "contradicted", "within noise")
VERDICT_FINDINGS: tuple[Finding, ...] = tuple(f for f in CHECKED if f in get_args(Verdict))
Check = Literal["borne out", "not borne out", "not settled", "not checked"]
UNSETTLED: tuple[Verdict, ...] = ("inconclusive", "no trial data")
# When each finding is borne out by the correction's runs (the methods page prints these).
RULE: dict[Finding, str] = {
    **{f: f"the verdict on the correction's runs is {f}" for f in VERDICT_FINDINGS},
    "misattributed": "the verdict on the correction's runs is not supported, and every key of its cause is "
    "recorded, with one value, on both of the correction's sides",
    "withdrawn": "never checked",
}


@dataclass(frozen=True, kw_only=True)
class Correction:
    """One correction of a claim: what it found, and what its runs say of that."""

    correction: str  # the correcting claim's id
    corrects: str  # the corrected claim's id
    finding: Finding | None
    cause_keys: tuple[str, ...] = ()
    cause_words: tuple[str, ...] = ()
    credited: tuple[str, ...] = ()  # the keys the corrected claim says it varies
    rejudged: Verdict | None = None  # the corrected claim's `claimed` judged on the correction's runs
    held: tuple[tuple[str, str, str], ...] = ()  # each cause key: (key, baseline's value, candidate's value)
    held_equal: tuple[tuple[str, str], ...] = ()  # (key, value) both correction runs record, the original's neither
    cause_unrecorded: tuple[str, ...] = ()  # cause keys neither of the corrected claim's runs records
    disagreement: str | None = None  # why the runs do not bear the finding out; None when they do or unchecked

    @property
    def checked(self) -> bool:
        """Whether the correction's runs were held against its finding."""
        return self.rejudged is not None and self.finding in CHECKED

    @property
    def check(self) -> Check | None:
        """What the correction's runs say of its finding; None when it states none."""
        if self.finding is None:
            return None
        if self.disagreement:
            return "not borne out"
        if not self.checked:
            return "not checked"
        return "borne out" if self.settled else "not settled"

    @property
    def settled(self) -> bool:
        """Whether the verdict on the correction's runs settles anything: not when inconclusive or
        without trial data (a misattribution is then not contradicted, and not borne out either:
        noisier runs never make a finding easier to bear out)."""
        return self.rejudged not in (None, *UNSETTLED)


MISSING = "(not recorded)"


def correction_of(original: Claim, fix: Claim, ledger: Ledger, settings: Settings) -> Correction:
    """What `fix` found of `original`, checked against the correction's runs when it has them."""
    recorded = _recorded(original, ledger)
    found = Correction(
        correction=fix.id,
        corrects=original.id,
        finding=fix.finding,
        cause_keys=fix.cause_keys,
        cause_words=fix.cause_words,
        credited=tuple(original.varies),
        cause_unrecorded=tuple(k for k in fix.cause_keys if k not in recorded),
    )
    runs = _sides(fix, ledger)
    if runs is None:
        return found
    baseline, candidate = runs
    b, c = baseline.environment(), candidate.environment()
    held = tuple((k, as_yaml(b.get(k, MISSING)), as_yaml(c.get(k, MISSING))) for k in fix.cause_keys)
    equal = tuple((k, as_yaml(b[k])) for k in sorted(set(b) & set(c)) if b[k] == c[k] and k not in recorded)
    found = replace(found, held=held, held_equal=equal)
    if fix.finding is None or fix.finding == "withdrawn":
        return found
    rejudged = _rejudged(original, fix, (baseline, candidate), settings)
    return replace(found, rejudged=rejudged, disagreement=_disagreement(found, rejudged, original))


def _sides(claim: Claim, ledger: Ledger) -> tuple[Run, Run] | None:
    """A comparison claim's two runs, when both are in the ledger."""
    if claim.kind != "comparison" or claim.baseline not in ledger.runs or claim.candidate not in ledger.runs:
        return None
    assert claim.baseline is not None and claim.candidate is not None
    return ledger.runs[claim.baseline], ledger.runs[claim.candidate]


def _recorded(claim: Claim, ledger: Ledger) -> set[str]:
    """The dotted keys either of a claim's runs records."""
    runs = [ledger.runs[r] for r in (claim.baseline, claim.candidate, claim.run) if r is not None and r in ledger.runs]
    return {key for run in runs for key in run.environment()}


def _rejudged(original: Claim, fix: Claim, runs: tuple[Run, Run], settings: Settings) -> Verdict:
    """The original's `claimed` (its direction when it states none) judged on the correction's runs,
    at the correction's metric and conditions."""
    assert fix.metric is not None
    baseline, candidate = runs
    claimed = parse_claimed(original.claimed) if original.claimed else None
    conditions = fix.at_list if fix.at_list is not None else shared_conditions(baseline, candidate)
    if fix.min_effect is not None:
        settings = replace(settings, min_effect=fix.min_effect)
    found = compare(
        baseline,
        candidate,
        fix.metric,
        conditions,
        varies=fix.varies,
        settings=settings,
        claimed=claimed,
        own=(fix.baseline_at, fix.candidate_at),
    )
    return found.verdict


def _disagreement(found: Correction, rejudged: Verdict, original: Claim) -> str | None:
    """Why the correction's runs do not bear its finding out, in words; None when they do."""
    said = f"the claim ({original.claimed})" if original.claimed else "the claim"
    if found.finding in VERDICT_FINDINGS and rejudged != found.finding:
        return f"it finds {found.finding}, but {said} judged on its runs is {rejudged}"
    if found.finding != "misattributed":
        return None
    if rejudged == "supported":
        return f"it finds the credit misattributed, but {said} judged on its runs is supported"
    loose = [f"{k} ({left} / {right})" for k, left, right in found.held if left != right or left == MISSING]
    if loose:
        return f"it names {', '.join(found.cause_keys)} as the cause, but its runs do not hold {', '.join(loose)} equal"
    return None
