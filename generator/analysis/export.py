"""The ledger as tidy tables a notebook can load: every trial of every run (one row per trial
and condition, a column per metric and rate), every run (what all its trials share: benchmark,
source, setup, units) and every claim (one row per claim and condition).

A trial row holds only what varies by trial; what a run's trials share is written once, in its
run row (`trials.merge(runs, on="run")` joins them), so the trials table stays within a small
multiple of the results.csv files it is read from."""

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
    "trial",  # empty for a reported figure: it has no trial
    "condition",  # the label claims use ("concurrency=8"; "all" for a run without conditions)
    "excluded",  # why the trial is excluded from the statistics; empty when it counts
)
# then at.<condition> (the trial's value of each condition), metric.<name> (the trial's figure)
# and rate.<name> (the trial's proportion, numerator / denominator; empty with no attempts)
RUN_COLUMNS = (
    "run",
    "date",
    "title",
    "benchmark",
    "source",
    "trial_unit",
)
# then setup.<key>, unit.<metric> (its unit in this run) and rate_of.<rate> ("a / b")
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
    """One row per trial and condition of every run, runs in id order."""
    return [row for run in sorted(ledger.runs.values(), key=lambda r: r.id) for row in run_trial_rows(run)]


def trial_columns(run: Run) -> set[str]:
    """The columns of the run's trial rows beyond TRIAL_COLUMNS."""
    return (
        {f"at.{c}" for c in run.results.conditions}
        | {f"metric.{m}" for m in run.meta.metrics}
        | {f"rate.{r}" for r in run.meta.rates}
    )


def run_trial_rows(run: Run) -> list[dict[str, Any]]:
    """The trial rows of one run, in results.csv order: its conditions, each metric's figure and
    each rate's proportion of that trial (none for a trial with no attempts): the trial is the
    unit of every rate's statistics."""
    rows = []
    for row in run.results.rows:
        found: dict[str, Any] = {
            "run": run.id,
            "trial": row.trial if row.trial is not None else "",
            "condition": label_of(run, row.at),
            "excluded": row.excluded or "",
            **{f"at.{c}": v for c, v in zip(run.results.conditions, row.at, strict=True)},
            **{f"metric.{m}": _number(v) for m, v in row.values.items()},
        }
        for name, rate in run.meta.rates.items():
            num, den = row.values.get(rate.numerator), row.values.get(rate.denominator)
            if num is not None and den is not None and den > 0:
                found[f"rate.{name}"] = num / den
        rows.append(found)
    return rows


def run_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """One row per run, in id order: what every trial of the run shares."""
    rows = []
    for run in sorted(ledger.runs.values(), key=lambda r: r.id):
        meta = run.meta
        rows.append(
            {
                "run": run.id,
                "date": meta.date.isoformat(),
                "title": meta.title,
                "benchmark": meta.benchmark,
                "source": provenance(run),
                "trial_unit": meta.trial_unit or "",
                **({f"setup.{k}": v for k, v in flatten(meta.setup).items()} if meta.setup else {}),
                **{f"unit.{m}": metric.unit or "" for m, metric in meta.metrics.items()},
                **{f"rate_of.{r}": f"{rate.numerator} / {rate.denominator}" for r, rate in meta.rates.items()},
            }
        )
    return rows


EXACT_INTEGERS = 2**53  # every whole number below this is exactly a float


def _number(value: float) -> float | int:
    """A whole figure as the integer it is (1367, not 1367.0), as results.csv writes it."""
    whole = isinstance(value, float) and value.is_integer() and abs(value) < EXACT_INTEGERS
    return int(value) if whole else value


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
