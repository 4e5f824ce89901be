"""Per-run statistics: every condition x metric summarized, every rate summarized over its
trials (one proportion per trial), and the requests' latency percentiles at each condition.

Pure: takes a loaded `Run`, returns frozen records; nothing here renders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..format.conditions import condition_label
from ..format.models import Rate
from ..ledger.records import Row, Run
from .rates import RateSummary, summarize_rate
from .stats import CONFIDENCE, Summary, summarize, warnings


def label_of(run: Run, at: Sequence[str]) -> str:
    """The condition label of one condition tuple of a run."""
    return condition_label(zip(run.results.conditions, at, strict=True))


def rate_trials(
    rows: Sequence[Row], rate: Rate, confidence: float = CONFIDENCE
) -> tuple[tuple[int | None, ...], RateSummary]:
    """A rate at one condition: the trials that attempted anything, and the summary whose
    `per_trial` holds their rates (a trial with no attempts has none), with the trial as the
    unit of its interval."""
    num = [r.values[rate.numerator] for r in rows]
    den = [r.values[rate.denominator] for r in rows]
    trials = tuple(r.trial for r, d in zip(rows, den, strict=True) if d > 0)
    return trials, summarize_rate(num, den, confidence)


@dataclass(frozen=True, kw_only=True, slots=True)
class MetricAt:
    """One metric at one condition: the trials and their summary."""

    at: tuple[str, ...]
    label: str
    metric: str
    trials: tuple[int | None, ...]
    values: tuple[float, ...]
    summary: Summary | None  # None for reported figures
    warnings: tuple[str, ...]
    published: tuple[float, int] | None = None  # reported: the published (SD, n) beside the mean
    sd_below: bool = False  # the published SD is an upper bound (printed 0.00: below 0.005)
    excluded: tuple[tuple[int | None, float, str], ...] = ()  # (trial, value, reason), out of the statistics

    @property
    def reported(self) -> float | None:
        return self.values[0] if self.summary is None and self.values else None


@dataclass(frozen=True)
class RateAt:
    at: tuple[str, ...]
    label: str
    rate: str
    summary: RateSummary


@dataclass(frozen=True, kw_only=True)
class RequestsAt:
    """Latency distribution of the requests at one condition (all trials pooled)."""

    at: tuple[str, ...]
    label: str
    requests: int  # measured requests
    errors: int  # of the measured requests
    ttft: tuple[float, float, float] | None  # p50, p90, p99 seconds
    latency: tuple[float, float, float] | None
    left_out: int = 0  # warm-up and cool-down requests (requests.csv `phase`), out of the statistics


@dataclass(frozen=True, slots=True)
class RunSummary:
    metrics: tuple[MetricAt, ...]
    rates: tuple[RateAt, ...]
    requests: tuple[RequestsAt, ...]

    def at(self, metric: str) -> list[MetricAt]:
        return [m for m in self.metrics if m.metric == metric]


def _percentiles(values: list[float]) -> tuple[float, float, float] | None:
    if not values:
        return None
    p50, p90, p99 = np.percentile(np.asarray(values), [50, 90, 99])
    return float(p50), float(p90), float(p99)


def summarize_run(run: Run, confidence: float = CONFIDENCE) -> RunSummary:
    """Summaries of every metric and rate at every condition of one run."""
    results, meta = run.results, run.meta
    metrics, rates, requests = [], [], []
    same: dict[tuple[int | None, ...], tuple[int | None, ...]] = {}  # one tuple of trial numbers, however many metrics
    for at in results.condition_values():
        label = label_of(run, at)
        rows, excluded = results.select(at), results.excluded_at(at)
        for name, metric in meta.metrics.items():
            kept = [r for r in rows if name in r.values]
            values = tuple(r.values[name] for r in kept)
            if not values:
                continue
            trials = tuple(r.trial for r in kept)
            trials = same.setdefault(trials, trials)
            left_out = tuple((r.trial, r.values[name], r.excluded or "") for r in excluded if name in r.values)
            reported = run.reported  # a figure a source gave: no summary, no warnings, its published spread
            metrics.append(
                MetricAt(
                    at=at,
                    label=label,
                    metric=name,
                    trials=trials,
                    values=values,
                    summary=None if reported else summarize(values, confidence),
                    warnings=() if reported else tuple(warnings(values, metric.better)),
                    published=kept[0].spread.get(name) if reported and len(kept) == 1 else None,
                    sd_below=reported and len(kept) == 1 and name in kept[0].sd_below,
                    excluded=() if reported else left_out,
                )
            )
        if not run.reported:
            for name, rate in meta.rates.items():
                rates.append(RateAt(at, label, name, rate_trials(rows, rate, confidence)[1]))
        if run.requests:
            here = [q for q in run.requests if q.at == at]
            mine = [q for q in here if q.phase == "measured"]  # warm-up and cool-down stay out, as the tool left them
            if here:
                ok = [q for q in mine if not q.error]
                requests.append(
                    RequestsAt(
                        at=at,
                        label=label,
                        requests=len(mine),
                        errors=len(mine) - len(ok),
                        left_out=len(here) - len(mine),
                        ttft=_percentiles([q.ttft_s for q in ok if q.ttft_s is not None]),
                        latency=_percentiles([q.latency_s for q in ok if q.latency_s is not None]),
                    )
                )
    return RunSummary(tuple(metrics), tuple(rates), tuple(requests))
