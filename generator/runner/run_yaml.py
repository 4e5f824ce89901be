"""run.yaml of a measured run: the metrics each runner declares, the runner section (what
was sent and how the load was offered), and the notes on what went wrong."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.hashing import file_hash
from ..format.models import RUN_SCHEMA
from . import openai as oa
from . import selfcheck
from .asked import Common, OpenAIOptions
from .options import STREAMS_PER_WORKER, cores
from .selfcheck import ClientFigures
from .session import Outcome, notes

OPENAI_METRICS: dict[str, dict[str, str]] = {
    "tokens_per_second": {"unit": "tok/s", "better": "higher"},
    "requests_per_second": {"unit": "req/s", "better": "higher"},
    **{
        f"{name}_p{q}_s": {"unit": "s", "better": "lower"}
        for name in ("ttft", "itl", "tpot", "latency")
        for q in (50, 90, 99)
    },
    "tpot_mean_s": {"unit": "s", "better": "lower"},
    "errors": {"unit": "requests", "better": "lower"},
}
GOODPUT_METRICS = {
    "goodput_requests_per_second": {"unit": "req/s", "better": "higher"},
    "slo_attainment": {"unit": "fraction", "better": "higher"},
}
_CLIENT = "the benchmark client's own error, not the server's: "
CLIENT_METRICS: dict[str, dict[str, str]] = {
    "client_lag_p50_s": {"unit": "s", "description": _CLIENT + "event-loop lag, median"},
    "client_lag_p99_s": {"unit": "s", "description": _CLIENT + "event-loop lag, 99th percentile"},
    "client_lag_max_s": {"unit": "s", "description": _CLIENT + "event-loop lag, largest"},
    "client_cpu": {"unit": "cores", "description": _CLIENT + "CPU time of its event loop over the wall time"},
    "send_delay_p50_s": {"unit": "s", "description": _CLIENT + "scheduled send to bytes sent, median"},
    "send_delay_p99_s": {"unit": "s", "description": _CLIENT + "scheduled send to bytes sent, 99th percentile"},
    "client_bound": {"unit": "flag", "description": _CLIENT + "1 when lag, send delay or CPU passed the limits"},
}
DRAFT_METRICS = {"draft_tokens": {"unit": "tokens"}, "draft_accepted": {"unit": "tokens"}}


def run_yaml(
    common: Common,
    identity: tuple[str, str, str],
    runner: dict[str, Any],
    *,
    benchmark: str,
    conditions: list[str],
    metrics: dict[str, Any],
    rates: dict[str, Any],
    warmup: int,
    note: str | None,
    incomplete: dict[str, Any] | None = None,
) -> dict[str, Any]:
    date, title, run_id = identity
    data: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "id": run_id,
        "title": title,
        "date": date,
        "benchmark": benchmark,
        "setup": common.setup_values(),
        "conditions": conditions,
        "metrics": metrics,
    }
    if rates:
        data["rates"] = rates
    # run command starts a fresh process per trial; run openai sends each trial's requests to
    # one long-running server: its trials share that server's state (a session).
    unit = "process" if runner.get("kind") == "command" else "session"
    data |= {"warmup_trials": warmup, "trial_unit": unit, "source": {"kind": "measured"}}
    if incomplete:
        data["incomplete"] = incomplete
    if note:
        data["notes"] = note
    data["runner"] = runner | {"invocation": common.invocation}
    return data


@dataclass
class OpenAIRecord:
    """What the OpenAI runner keeps besides the trial rows: per-request details for raw/."""

    details: list[dict[str, Any]] = field(default_factory=list)
    drafted: bool = False
    counter_resets: int = 0  # trials around which vLLM's draft counters went down


def _openai_notes(outcome: Outcome, record: OpenAIRecord) -> list[str]:
    failed = sum(1 for _, _, m in outcome.completed for r in m.requests if r["error"])
    malformed = sum(d["malformed_sse_lines"] for d in record.details)
    refused = sum(len(d["refused_fields"]) for d in record.details)
    out = []
    if failed or malformed:
        out.append(
            f"{failed} {'request' if failed == 1 else 'requests'} failed and {malformed} malformed SSE "
            f"{'line was' if malformed == 1 else 'lines were'} skipped in the recorded trials; see requests.csv."
        )
    bound = [m for _, _, m in outcome.completed if m.row.get("client_bound")]
    if bound:
        out.append(
            f"{len(bound)} of {len(outcome.completed)} trials were client-bound (client_bound = 1 in results.csv): "
            "the client's own event-loop lag, send delay or CPU passed the runner's limits, so those figures may "
            "describe the client more than the server. The first: "
            + next(_why(m.row) for m in bound)
            + ". More worker processes (--workers), fewer streams per process or a less loaded machine avoid it."
        )
    if record.counter_resets:
        n = record.counter_resets
        out.append(
            f"In {n} {'trial' if n == 1 else 'trials'} vLLM's draft counters went down between the scrapes before "
            f"and after {'it' if n == 1 else 'them'} (the server restarted or reset them); as Prometheus counts a "
            "reset, those trials count drafts from the reset only, so their draft figures may be low."
        )
    if refused:
        out.append(
            f"{refused} {'field' if refused == 1 else 'fields'} from the server {'was' if refused == 1 else 'were'} "
            "of the wrong type, negative or impossible (such as more "
            "accepted than drafted tokens) and were not recorded; see raw/requests-detail.jsonl."
        )
    return out


def _why(row: dict[str, float]) -> str:
    return "; ".join(ClientFigures.from_row(row).reasons())


def openai_run_yaml(
    common: Common,
    identity: tuple[str, str, str],
    asked: OpenAIOptions,
    target: oa.Target,
    *,
    outcome: Outcome,
    record: OpenAIRecord,
    slo: dict[str, float],
) -> dict[str, Any]:
    """run.yaml of a measured server: its metrics (goodput under SLOs, drafts when the server
    drafted), what was sent, and the notes on what went wrong."""
    metrics = dict(OPENAI_METRICS) | (GOODPUT_METRICS if slo else {}) | CLIENT_METRICS
    metrics |= DRAFT_METRICS if record.drafted else {}
    conditions = asked.load.conditions(asked.concurrency)
    return run_yaml(
        common,
        identity,
        _runner_section(target, asked, slo, record),
        benchmark=common.benchmark or f"openai-{asked.endpoint}-stream",
        conditions=[next(iter(conditions[0]))],
        metrics=metrics,
        rates={"acceptance": {"numerator": "draft_accepted", "denominator": "draft_tokens"}} if record.drafted else {},
        warmup=asked.warmup,
        note=notes(outcome, conditions, asked.trials, _openai_notes(outcome, record)),
        incomplete=outcome.incomplete(),
    )


def _runner_section(
    target: oa.Target, asked: OpenAIOptions, slo: dict[str, float], record: OpenAIRecord
) -> dict[str, Any]:
    """run.yaml's runner: what was sent, how the load was offered, and the client's limits."""
    prompts, requests, options = asked.prompts, asked.requests, asked.load
    runner: dict[str, Any] = {
        "kind": "openai",
        "base_url": target.base_url,
        "model": target.model,
        "endpoint": target.endpoint,
        "max_tokens": target.max_tokens,
        "temperature": target.temperature,
        "requests_per_trial": requests
        or ("10 s of arrivals, at least 16" if options.request_rate else "4 x concurrency"),
        "output_tokens_source": sorted({d["token_source"] for d in record.details if d["token_source"]}),
        "prompts": prompts or "built-in",
    }
    if prompts:
        runner["prompts_sha256"] = file_hash(Path(prompts).read_bytes())
    if options.request_rate:
        runner["load"] = {
            "kind": "open loop",
            "arrivals": "Poisson" if options.burstiness == 1 else f"gamma, shape {options.burstiness:g}",
            "burstiness": options.burstiness,
            "seed": options.seed,
            "max_concurrency": options.max_concurrency,
            "latency_from": "scheduled arrival",
        }
    else:
        runner["load"] = {
            "kind": "closed loop",
            "latency_from": "scheduled send (the end of the stream's last request)",
        }
    if slo:
        runner["slo_s"] = slo
    runner["workers"] = options.workers or f"auto ({STREAMS_PER_WORKER} streams a process, at most {cores()})"
    if options.ray is not None:
        runner["ray"] = options.ray
    runner["client_limits"] = {
        "loop_lag_p99_s": selfcheck.LAG_P99_LIMIT_S,
        "send_delay_p99_s": selfcheck.SEND_DELAY_P99_LIMIT_S,
        "cpu_cores": selfcheck.CPU_LIMIT,
    }
    return runner
