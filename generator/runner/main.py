"""`benchledger run openai` and `benchledger run command`: measure, then write a run folder."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import BenchledgerError, Problem
from ..format.hashing import file_hash
from ..format.models import MANIFEST_SCHEMA, RUN_SCHEMA, ManifestFile
from ..ledger.yamlio import validate
from . import command as cmd
from . import environment, selfcheck
from . import openai as oa
from .asked import CommandOptions, Common, OpenAIOptions
from .local_paths import without_local_paths
from .options import MAX_CONCURRENCY, STREAMS_PER_WORKER, LoadOptions, cores
from .selfcheck import ClientFigures
from .session import Measure, Measured, Outcome, kept_on_crash, notes, run_plan, summary_table
from .wire import Origin
from .writer import RunWriter, check_target

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


MAX_TRIALS = 100_000


def _run_yaml(
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
    if note:
        data["notes"] = note
    data["runner"] = runner | {"invocation": common.invocation}
    return data


def _finish(
    writer: RunWriter, outcome: Outcome, common: Common, *, run: dict[str, Any], manifest: dict[str, Any]
) -> Path:
    if not outcome.completed:
        writer.abandon()
        raise BenchledgerError(
            Problem(file=str(writer.target), message=f"no trial completed ({outcome.stopped}); nothing was written")
        )
    columns = ["trial", *run["conditions"], *run["metrics"]]
    if not common.keep_paths:
        run, manifest = without_local_paths(run, manifest)
    return writer.finish(run, manifest, columns)


@dataclass
class OpenAIRecord:
    """What the OpenAI runner keeps besides the trial rows: per-request details for raw/."""

    details: list[dict[str, Any]] = field(default_factory=list)
    drafted: bool = False


def _check_openai_options(asked: OpenAIOptions) -> dict[str, float]:
    """Every option checked before the first request, each with its fix; the parsed SLOs."""
    if asked.endpoint not in ("chat", "completions"):
        message = f"expected chat or completions, got {asked.endpoint!r}"
        raise BenchledgerError(Problem(file="--endpoint", message=message))
    levels = asked.concurrency
    if not levels or min(levels) < 1 or max(levels) > MAX_CONCURRENCY:
        raise BenchledgerError(
            Problem(file="--concurrency", message=f"give levels from 1 to {MAX_CONCURRENCY}, e.g. 1,8")
        )
    requests, temperature, timeout = asked.requests, asked.temperature, asked.timeout
    checks = [
        ("--requests", requests is None or 1 <= requests <= 10**6, "give at least 1 request per trial"),
        ("--max-tokens", 1 <= asked.max_tokens <= 10**7, "give at least 1 token to generate"),
        ("--temperature", math.isfinite(temperature) and 0 <= temperature <= 100, "give a temperature >= 0"),
        ("--timeout", math.isfinite(timeout) and 0 < timeout <= 86_400, "give seconds above 0, e.g. 600"),
    ]
    _check_counts(asked.trials, asked.warmup, checks)
    return asked.load.check()


def _check_counts(trials: int, warmup: int, checks: list[tuple[str, bool, str]]) -> None:
    checks = [
        ("--trials", 1 <= trials <= MAX_TRIALS, f"give 1 to {MAX_TRIALS:,} trials"),
        ("--warmup", 0 <= warmup <= MAX_TRIALS, f"give 0 to {MAX_TRIALS:,} warmup trials"),
        *checks,
    ]
    problems = [Problem(file=flag, message=fix) for flag, ok, fix in checks if not ok]
    if problems:
        raise BenchledgerError(problems)


def _check_manifest(common: Common) -> dict[str, Any]:
    """--id, --out and --manifest-extra checked now, so a mistake costs nothing measured."""
    check_target(common.out, common.run_id, common.force)
    extra = common.extra()
    validate(ManifestFile, environment.deep_merge({"schema": MANIFEST_SCHEMA}, extra), str(common.manifest_extra), {})
    common.setup_values()
    return extra


def _openai_measure(
    target: oa.Target, requests: int | None, record: OpenAIRecord, options: LoadOptions, slo: dict[str, float]
) -> Measure:
    """One trial at one condition: send the requests, keep their rows and details."""
    count = itertools.count(1)

    def measure(cond: dict[str, Any], advance: Any) -> Measured:
        n = options.requests(requests, cond)
        load = options.load(cond, f"{options.seed}:{next(count)}")  # each trial its own seeded arrivals
        trial = asyncio.run(oa.run_trial(target, load.concurrency, n, lambda _: advance(1), load=load, slo=slo))
        if not trial.ok:
            first = trial.requests[0].error if trial.requests else "no request sent"
            return Measured(failed=f"all {n} requests failed; the first error is quoted below", quoted=first)
        record.drafted = record.drafted or trial.drafted
        record.details.extend({**cond, **_detail(r)} for r in trial.requests)
        return Measured(trial.row(), [_request_row(r) for r in trial.requests])

    return measure


def _request_row(r: oa.RequestResult) -> dict[str, Any]:
    ok = not r.error
    return {
        "request": r.request,
        "start_s": r.start_s,
        "ttft_s": r.ttft_s,
        "latency_s": r.latency_s,
        "output_tokens": r.output_tokens if ok else None,
        "draft_tokens": r.draft_tokens if ok else None,
        "draft_accepted": r.draft_accepted if ok else None,
        "error": r.error,
    }


def _detail(r: oa.RequestResult) -> dict[str, Any]:
    return {
        "request": r.request,
        "token_source": r.token_source,
        "malformed_sse_lines": r.malformed,
        "refused_fields": r.refused,
        "server_decode_rate": r.server_decode_rate,
        "send_delay_s": None if r.send_delay_s is None else round(r.send_delay_s, 6),
        "gaps_s": [round(g, 6) for g in r.gaps],
    }


def _openai_notes(outcome: Outcome, record: OpenAIRecord) -> list[str]:
    failed = sum(1 for _, _, m in outcome.completed for r in m.requests if r["error"])
    malformed = sum(d["malformed_sse_lines"] for d in record.details)
    refused = sum(len(d["refused_fields"]) for d in record.details)
    out = []
    if failed or malformed:
        out.append(
            f"{failed} request(s) failed and {malformed} malformed SSE line(s) were skipped in "
            "the recorded trials; see requests.csv."
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
    if refused:
        out.append(
            f"{refused} field(s) from the server were of the wrong type, negative or impossible (such as more "
            "accepted than drafted tokens) and were not recorded; see raw/requests-detail.jsonl."
        )
    return out


def _why(row: dict[str, float]) -> str:
    return "; ".join(ClientFigures.from_row(row).reasons())


def run_openai(common: Common, asked: OpenAIOptions, console: Console) -> Path:
    """Measure an OpenAI-compatible server and write the run folder: every option checked, the
    server probed, each condition's trials measured and written as they finish, then the run."""
    slo = _check_openai_options(asked)
    extra = _check_manifest(common)
    target = _target(asked)
    identity = common.identity(f"{target.model} at {_levels(asked)}")
    writer = RunWriter(common.out, identity[2], common.force)
    server_info = environment.server(target.base_url, oa.server_root(target.base_url))
    record = OpenAIRecord()
    conditions = asked.load.conditions(asked.concurrency)
    measure = _openai_measure(target, asked.requests, record, asked.load, slo)
    with kept_on_crash(writer, console):
        outcome = run_plan(
            conditions,
            measure,
            writer,
            console,
            trials=asked.trials,
            warmup=asked.warmup,
            units=lambda c: asked.load.requests(asked.requests, c),
            unit_name="requests",
        )
        run = _openai_run_yaml(common, identity, asked, target, outcome=outcome, record=record, slo=slo)
        writer.write_raw("requests-detail.jsonl", "".join(json.dumps(d) + "\n" for d in record.details))
        manifest = environment.manifest(extra, server_info)
        path = _finish(writer, outcome, common, run=run, manifest=manifest)
        rate = ("draft_accepted", "draft_tokens") if record.drafted else None
        _report(console, outcome, summary_table(outcome, "tokens_per_second", "tok/s", rate), path)
        return path


def _target(asked: OpenAIOptions) -> oa.Target:
    """What every request goes to and sends; the server is asked for its models first, so a wrong
    URL fails before the first trial, naming it."""
    prompt_set = oa.load_prompts(asked.prompts)
    base_url = asked.base_url.rstrip("/")
    Origin.parse(base_url)
    models = oa.probe(base_url, min(asked.timeout, 30))
    model = asked.model or (models[0] if models else None)
    if not model:
        raise BenchledgerError(Problem(file=base_url + "/models", message="lists no model; pass --model"))
    return oa.Target(
        base_url=base_url,
        model=model,
        endpoint=asked.endpoint,
        max_tokens=asked.max_tokens,
        temperature=asked.temperature,
        timeout=asked.timeout,
        prompts=prompt_set,
    )


def _levels(asked: OpenAIOptions) -> str:
    """The load in words, for the default title: "concurrency 1,8" or "2,4 requests/s"."""
    if asked.load.request_rate:
        return f"{','.join(f'{r:g}' for r in asked.load.request_rate)} requests/s"
    return f"concurrency {','.join(map(str, asked.concurrency))}"


def _openai_run_yaml(
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
    return _run_yaml(
        common,
        identity,
        _runner_section(target, asked, slo, record),
        benchmark=common.benchmark or f"openai-{asked.endpoint}-stream",
        conditions=[next(iter(conditions[0]))],
        metrics=metrics,
        rates={"acceptance": {"numerator": "draft_accepted", "denominator": "draft_tokens"}} if record.drafted else {},
        warmup=asked.warmup,
        note=notes(outcome, conditions, asked.trials, _openai_notes(outcome, record)),
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


def _report(console: Console, outcome: Outcome, table: Any, path: Path) -> None:
    console.print(table)
    if outcome.stopped:
        console.print("Stopped early:", outcome.stopped, style="bold red", markup=False)
    console.print(f"Wrote {path}", markup=False)


def _command_measure(
    command: list[str], found: list[cmd.Extractor], timeout: float | None, log: list[dict[str, Any]]
) -> Measure:
    """One trial: execute until it succeeds, at most MAX_FAILURES_IN_A_ROW times; log every try."""

    def measure(_cond: dict[str, Any], advance: Any) -> Measured:  # a command has one condition, {}
        for _ in range(cmd.MAX_FAILURES_IN_A_ROW):
            done = cmd.execute(command, found, timeout)
            log.append(
                {
                    "wall_seconds": round(done.wall_seconds, 6),
                    "exit_code": done.exit_code,
                    "error": done.error,
                    "stderr_tail": done.stderr_tail,
                }
            )
            if not done.error:
                advance(1)
                return Measured({"wall_seconds": done.wall_seconds, **done.values})
        return Measured(failed=f"{cmd.MAX_FAILURES_IN_A_ROW} failures in a row (last: {log[-1]['error']})")

    return measure


def run_command(common: Common, asked: CommandOptions, console: Console) -> Path:
    """Run a command repeatedly and write the run folder."""
    extra, found = _check_command_options(common, asked)
    identity = common.identity(Path(asked.command[0]).name)
    writer = RunWriter(common.out, identity[2], common.force)
    log: list[dict[str, Any]] = []
    measure = _command_measure(asked.command, found, asked.timeout, log)
    with kept_on_crash(writer, console):
        outcome = run_plan(
            [{}],
            measure,
            writer,
            console,
            trials=asked.trials,
            warmup=asked.warmup,
            units=lambda _: 1,
            unit_name="executions",
        )
        metrics: dict[str, Any] = {"wall_seconds": {"unit": "s", "better": "lower"}}
        metrics |= {e.name: dict(asked.declared.get(e.name, {})) for e in found}
        failures = sum(1 for entry in log if entry["error"])
        extra_notes = (
            [f"{failures} failed execution(s) were retried and not counted as trials; see raw/executions.jsonl."]
            if failures
            else []
        )
        run = _run_yaml(
            common,
            identity,
            {"kind": "command", "command": asked.command, "timeout_s": asked.timeout},
            benchmark=common.benchmark or Path(asked.command[0]).name,
            conditions=[],
            metrics=metrics,
            rates={},
            warmup=asked.warmup,
            note=notes(outcome, [{}], asked.trials, extra_notes),
        )
        writer.write_raw("executions.jsonl", "".join(json.dumps(entry) + "\n" for entry in log))
        path = _finish(writer, outcome, common, run=run, manifest=environment.manifest(extra))
        _report(console, outcome, summary_table(outcome, "wall_seconds", "s", None), path)
    return path


def _check_command_options(common: Common, asked: CommandOptions) -> tuple[dict[str, Any], list[cmd.Extractor]]:
    """Every option checked before the first execution; the manifest extras and the metric readers."""
    if not asked.command:
        raise BenchledgerError(Problem(file="command", message="give the command after --, e.g. -- ./bench --flag"))
    timeout = asked.timeout
    ok_timeout = timeout is None or (math.isfinite(timeout) and 0 < timeout <= 86_400)
    _check_counts(asked.trials, asked.warmup, [("--timeout", ok_timeout, "give seconds above 0, e.g. 60")])
    extra = _check_manifest(common)
    cmd.check_executable(asked.command[0])
    found = cmd.extractors(asked.regexes, asked.json_paths)
    unknown = sorted(set(asked.declared) - {e.name for e in found})
    if unknown:
        names = ", ".join(e.name for e in found) or "none"
        message = f"--unit/--better name {unknown[0]!r}, which no --metric or --json-metric reads (they read: {names})"
        raise BenchledgerError(Problem(file="--unit", message=message))
    return extra, found
