"""`benchledger run openai` and `benchledger run command`: measure, then write a run folder."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import BenchledgerError, Problem
from ..format.commands import hidden_problems
from ..format.models import MANIFEST_SCHEMA, ManifestFile
from ..ledger.yamlio import validate
from . import command as cmd
from . import environment
from . import openai as oa
from .asked import CommandOptions, Common, OpenAIOptions
from .local_paths import without_local_paths
from .options import MAX_CONCURRENCY, LoadOptions
from .run_yaml import OpenAIRecord, openai_run_yaml, run_yaml
from .session import Measure, Measured, Outcome, kept_on_crash, notes, run_plan, summary_table
from .wire import Origin
from .writer import RunWriter, check_target, files_words

MAX_TRIALS = 100_000


def _finish(
    writer: RunWriter, outcome: Outcome, common: Common, *, run: dict[str, Any], manifest: dict[str, Any]
) -> Path:
    if not outcome.completed:
        writer.abandon()
        quoted = f"\nThe first error, verbatim: {outcome.quoted}" if outcome.quoted else ""
        raise BenchledgerError(
            Problem(
                file=str(writer.target), message=f"no trial completed ({outcome.stopped}); nothing was written{quoted}"
            )
        )
    columns = ["trial", *run["conditions"], *run["metrics"]]
    if not common.keep_paths:
        run, manifest = without_local_paths(run, manifest)
    return writer.finish(run, manifest, columns)


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
    """--id, --out and --manifest-extra checked now, so a mistake costs nothing measured, and the
    command line, which the run records for `benchledger rerun` to show and execute."""
    unreadable = hidden_problems(common.invocation)
    if unreadable:
        raise BenchledgerError([Problem(file="command line", message=message) for _, message in unreadable])
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
        record.counter_resets += trial.counter_reset
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


def run_openai(common: Common, asked: OpenAIOptions, console: Console) -> Path:
    """Measure an OpenAI-compatible server and write the run folder: every option checked, the
    server probed, each condition's trials measured and written as they finish, then the run."""
    slo = _check_openai_options(asked)
    extra = _check_manifest(common)
    target = _target(asked)
    identity = common.identity(f"{target.model} at {_levels(asked)}")
    writer = RunWriter(common.out, identity[2], common.force, say=_say(console))
    deadline = min(asked.timeout, oa.PROBE_DEADLINE_S)
    server_info = environment.server(target.base_url, oa.server_root(target.base_url), deadline)
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
        run = openai_run_yaml(common, identity, asked, target, outcome=outcome, record=record, slo=slo)
        writer.write_raw("requests-detail.jsonl", "".join(json.dumps(d) + "\n" for d in record.details))
        manifest = environment.manifest(extra, server_info)
        path = _finish(writer, outcome, common, run=run, manifest=manifest)
        rate = ("draft_accepted", "draft_tokens") if record.drafted else None
        _report(console, outcome, summary_table(outcome, "tokens_per_second", "tok/s", rate), writer)
        if outcome.error is not None:
            raise outcome.error
        return path


def _target(asked: OpenAIOptions) -> oa.Target:
    """What every request goes to and sends; the server is asked for its models first, so a wrong
    URL fails before the first trial, naming it."""
    prompt_set = oa.load_prompts(asked.prompts)
    base_url = asked.base_url.rstrip("/")
    Origin.parse(base_url)
    models = oa.probe(base_url, min(asked.timeout, oa.PROBE_DEADLINE_S))
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


def _say(console: Console) -> Callable[[str], None]:
    return lambda words: console.print(words, markup=False, soft_wrap=True)


def _report(console: Console, outcome: Outcome, table: Any, writer: RunWriter) -> None:
    console.print(table)
    if outcome.stopped:
        console.print("Stopped early:", outcome.stopped, style="bold red", markup=False)
    if writer.replaced is not None:
        replaced = f"Replaced {writer.target}: {files_words(writer.replaced)} were deleted."
        console.print(replaced, markup=False, soft_wrap=True)
    cut = outcome.incomplete()
    shown = f" (incomplete: {cut['completed_trials']} of {cut['planned_trials']} trials completed)" if cut else ""
    console.print(f"Wrote {writer.target}{shown}", markup=False, soft_wrap=True)


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
    writer = RunWriter(common.out, identity[2], common.force, say=_say(console))
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
            [
                f"{failures} failed {'execution was' if failures == 1 else 'executions were'} retried and not "
                "counted as trials; see raw/executions.jsonl."
            ]
            if failures
            else []
        )
        run = run_yaml(
            common,
            identity,
            {"kind": "command", "command": asked.command, "timeout_s": asked.timeout},
            benchmark=common.benchmark or Path(asked.command[0]).name,
            conditions=[],
            metrics=metrics,
            rates={},
            warmup=asked.warmup,
            note=notes(outcome, [{}], asked.trials, extra_notes),
            incomplete=outcome.incomplete(),
        )
        writer.write_raw("executions.jsonl", "".join(json.dumps(entry) + "\n" for entry in log))
        path = _finish(writer, outcome, common, run=run, manifest=environment.manifest(extra))
        _report(console, outcome, summary_table(outcome, "wall_seconds", "s", None), writer)
    if outcome.error is not None:
        raise outcome.error
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
