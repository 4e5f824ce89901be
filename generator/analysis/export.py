"""The ledger as two tidy tables a notebook can load: every trial of every run (one row per
trial, condition and metric) and every claim (one row per claim and condition)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..format.keys import flatten
from ..format.signed import in_range
from ..ledger.records import Ledger, Run
from .claims import Evaluation, provenance
from .records import Comparison
from .summaries import label_of

TRIAL_COLUMNS = (
    "run",
    "benchmark",
    "source",
    "trial_unit",
    "trial",
    "condition",
    "metric",
    "value",
    "unit",
    "excluded",
    "rate_of",  # a rate's row: the counts it divides ("draft_accepted / draft_tokens"); empty for a metric
)
CLAIM_COLUMNS = (
    "claim",
    "report",
    "statement",
    "metric",
    "baseline",
    "candidate",
    "run",
    "claimed",
    "verdict",
    "condition",  # one label, or both sides' ("size=200 → size=100") when they differ
    "baseline_condition",  # the baseline's own condition (a claim inside one run compares two)
    "candidate_condition",
    "condition_verdict",
    "ratio",
    "ci_low",
    "ci_high",
    "level",
    "n_baseline",
    "n_candidate",
    "difference_pp",  # a rate claim: candidate minus baseline, in percentage points (means of trial rates)
    "corrects",
    "finding",  # a correction: what it found of the claim it corrects
    "cause",  # a correction: what got the credit instead (keys and words, "; "-joined)
    "finding_check",  # borne out | not borne out | not settled | not checked (a correction with a finding)
    "flags",
    "credit_verdict",
    "credit_grid",
)


def trial_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """One row per trial, condition and metric, with the run's condition values and setup as
    columns of their own (`at.<condition>`, `setup.<key>`); reported figures have no trial."""
    return [row for run in sorted(ledger.runs.values(), key=lambda r: r.id) for row in run_trial_rows(run)]


def trial_columns(run: Run) -> set[str]:
    """The columns of the run's trial rows beyond TRIAL_COLUMNS."""
    setup = {f"setup.{k}" for k in flatten(run.meta.setup)} if run.meta.setup else set()
    return {f"at.{c}" for c in run.results.conditions} | setup


def run_trial_rows(run: Run) -> list[dict[str, Any]]:
    """The trial rows of one run, in results.csv order: each metric of a trial, then each rate
    of that trial (its numerator / denominator, with `rate_of` naming them; a trial with no
    attempts has no rate): the trial is the unit of every rate's statistics."""
    rows = []
    setup = {f"setup.{k}": v for k, v in flatten(run.meta.setup).items()} if run.meta.setup else {}
    for row in run.results.rows:
        common = {
            "run": run.id,
            "benchmark": run.meta.benchmark,
            "source": provenance(run),
            "trial_unit": run.meta.trial_unit or "",
            "trial": row.trial if row.trial is not None else "",
            "condition": label_of(run, row.at),
        }
        after = {
            "excluded": row.excluded or "",
            **{f"at.{c}": v for c, v in zip(run.results.conditions, row.at, strict=True)},
            **setup,
        }
        for metric, value in row.values.items():
            unit = run.meta.metrics[metric].unit or ""
            rows.append({**common, "metric": metric, "value": value, "unit": unit, **after})
        for name, rate in run.meta.rates.items():
            num, den = row.values.get(rate.numerator), row.values.get(rate.denominator)
            if num is not None and den is not None and den > 0:
                of = f"{rate.numerator} / {rate.denominator}"
                rows.append({**common, "metric": name, "value": num / den, "unit": "", **after, "rate_of": of})
    return rows


def claim_rows(evaluations: Mapping[str, Evaluation]) -> list[dict[str, Any]]:
    """One row per claim and condition (one row for a claim without conditions)."""
    rows = []
    for claim_id in sorted(evaluations):
        ev = evaluations[claim_id]
        c = ev.claim
        base = {
            "claim": c.id,
            "report": ev.report.path,
            "statement": c.statement,
            "metric": c.metric or "",
            "baseline": c.baseline or "",
            "candidate": c.candidate or "",
            "run": c.run or "",
            "claimed": c.claimed or "",
            "verdict": ev.verdict,
            "corrects": c.corrects or "",
            "finding": c.finding or "",
            "cause": "; ".join(c.causes),
            "finding_check": (ev.correction.check or "") if ev.correction else "",
            "flags": "; ".join(ev.flags),
            "credit_verdict": "; ".join(c.verdict for c in ev.credits),
            "credit_grid": "; ".join(c.grid for c in ev.credits),
        }
        for cond in ev.conditions or (None,):
            found = {
                "condition": cond.label if cond else "",
                "baseline_condition": cond.baseline.label if cond else "",
                "candidate_condition": cond.candidate.label if cond else "",
                "condition_verdict": cond.verdict if cond else ev.verdict,
                "ratio": _in_range(cond.ratio) if cond else None,
                "ci_low": _in_range(cond.ci_low) if cond else None,
                "ci_high": _in_range(cond.ci_high) if cond else None,
                "level": cond.confidence if cond else None,
                "n_baseline": cond.baseline.n if cond else None,
                "n_candidate": cond.candidate.n if cond else None,
                "difference_pp": _points(cond) if cond else None,
            }
            rows.append({k: (base | found)[k] for k in CLAIM_COLUMNS})
    return rows


def _in_range(ratio: float | None) -> float | None:
    """A ratio or bound as exported: empty (null) when out of range (past 1e300 or below 1e-300),
    as the pages write "out of range"."""
    return ratio if ratio is not None and in_range(ratio) else None


def _points(cond: Comparison) -> float | None:
    """A rate claim's difference in percentage points between the means of its trials' rates."""
    base, cand = cond.baseline.proportion, cond.candidate.proportion
    return (cand - base) * 100 if base is not None and cand is not None else None
