"""vLLM's serving benchmark as a run: the JSON of `vllm bench serve --save-result` (and of the
older `benchmarks/benchmark_serving.py --save-result`, the same shape).

One file (or one line of an `--append-result` file) is one benchmark pass against a running
server: one trial (`trial_unit: session`). The traffic it was given (`request_rate`,
`max_concurrency`, and any other recorded argument or `--metadata KEY=VALUE` that differs
between files) is the condition; passes with the same condition are trials 1, 2, 3 in the order
given. Each pass's throughputs and its mean, median and percentile latencies become that
trial's metrics. With `--save-detailed` the file also holds every request: those become
requests.csv (`vllm_bench_requests`). Backend, model and tokenizer go to the manifest, with
every other recorded setting (`vllm bench sweep`'s `max_num_seqs` too; `run_number` is the
trial). Every figure the tool measured is a metric with its unit and direction, never a
setting: completed and failed requests (an older writer's unfinished prompts counted as
failed), the duration, token counts, vLLM's speculative-decoding counts, and a fork's own
latencies (`*_ms`, `*_s`), throughputs and outcome counters (`conversations_completed`,
`conversations_failed`). The older benchmark_serving.py names end-to-end latency
`mean_latency_ms`, `median_latency_ms`, `p99_latency_ms` (before vLLM renamed it `e2el`): they
are read as `mean_e2el_ms`, `median_e2el_ms`, `p99_e2el_ms`. Request standard deviations, input
lengths and generated texts are not metrics; they stay in the original file under raw/. A pass
in which no request completed is refused (vLLM writes 0 for what it could not measure), and so
are passes that report different figures (different `--percentile-metrics`), naming the
difference. Keys and units follow vLLM's own writer (vllm/benchmarks/serve.py,
tests/fixtures/vllm-bench/).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.models import NAME_PATTERN
from .common import Imported, finite, load_json
from .vllm_bench_requests import PER_REQUEST, failure_notes, request_rows

THROUGHPUTS = {
    "request_throughput": "req/s",
    "output_throughput": "tok/s",
    "total_token_throughput": "tok/s",
    "request_goodput": "req/s",
    "max_output_tokens_per_s": "tok/s",
}
# `latency` is the older benchmark_serving.py's name for e2el (read as e2el, see _name)
LATENCY = re.compile(r"^(mean|median|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|latency)_ms$")
SPECULATIVE = {"spec_decode_acceptance_rate": "%", "spec_decode_acceptance_length": "tokens"}
DRAFTS = ("spec_decode_accepted_tokens", "spec_decode_draft_tokens")  # counts: the acceptance rate with its n
# what a pass counted or timed, beside its throughputs and latencies: metrics, kept when every pass has them
COUNTS = {
    "input_throughput": {"unit": "tok/s", "better": "higher"},
    "completed": {"unit": "requests", "better": "higher"},
    "failed": {"unit": "requests", "better": "lower"},
    "duration": {"unit": "s"},
    "total_input_tokens": {"unit": "tokens"},
    "total_output_tokens": {"unit": "tokens"},
    "max_concurrent_requests": {"unit": "requests"},
    "spec_decode_num_drafts": {"unit": "drafts"},
}
# a fork's own figures, known by their names' endings: never settings
FORK_FIGURES: tuple[tuple[re.Pattern[str], dict[str, str]], ...] = (
    (re.compile(r"^(?!std_).*_ms$"), {"unit": "ms", "better": "lower"}),
    (re.compile(r"^(?!std_).*_s$"), {"unit": "s", "better": "lower"}),
    (re.compile(r"_(?:throughput|per_second|per_s)$"), {"unit": "1/s", "better": "higher"}),
    (re.compile(r"(?:^|_)(?:completed|succeeded|successful|success)$"), {"unit": "count", "better": "higher"}),
    (
        re.compile(r"(?:^|_)(?:failed|failures|errors|error_count|cancelled|canceled|incomplete|timeouts|timed_out)$"),
        {"unit": "count", "better": "lower"},
    ),
)
TRAFFIC = ("request_rate", "max_concurrency")
RECORDED = (
    "burstiness",
    "num_prompts",
    "backend",
    "endpoint_type",
    "model_id",
    "tokenizer_id",
    "label",
    "best_of",
    "use_beam_search",
    "version",
)
KNOWN_TEXT = {"date", "ramp_up_strategy", *RECORDED, *TRAFFIC}
# What vLLM's writer computes: never a setting, whatever its type.
OUTCOME = re.compile(
    r"^(?:(?:mean|median|std|p\d+(?:\.\d+)?)_(?:ttft|tpot|itl|e2el|latency)_ms|spec_decode_\w+|duration|completed|failed|"
    r"total_input_tokens|total_output_tokens|max_concurrent_requests|rtfx|input_throughput|queue_times|"
    r"generated_texts|date)$"
)
TRIAL_INDEX = "run_number"  # `vllm bench sweep` numbers the passes of one configuration


def parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    """Read one or more vLLM serving-benchmark result files into one run."""
    passes = [(where, record) for name, data in files for where, record in _records(name, data)]
    for (name, path), record in passes:
        _refuse_empty_pass(name, path, record)
    _refuse_mixed_metrics(passes)
    conditions = _conditions(passes)
    unfinished = {where: _unfinished(record) for where, record in passes}
    metrics = _metrics([record for _, record in passes])
    rows: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    notes = _figure_notes(passes, metrics)
    counts: dict[tuple[str, ...], int] = {}
    for (name, path), record in passes:
        at = {c: _condition(record.get(c)) for c in conditions}
        trial = counts[tuple(at.values())] = counts.get(tuple(at.values()), 0) + 1
        rows.append({"trial": trial, **at, **{m: _summary(name, path, record, m) for m in metrics}})
        found = request_rows(name, path, record, trial, at)
        requests += found
        label = f"Trial {trial} at {', '.join(f'{k}={v}' for k, v in at.items())}"
        notes += failure_notes(label, _where(name, path), record, found, unfinished[(name, path)])
    if not requests and passes:
        notes.append("The files hold no per-request data (vLLM writes it with --save-detailed).")
    first = passes[0][1]
    day = min((d for _, r in passes if (d := _day(r.get("date"))) is not None), default=None)
    manifest = _manifest(first, conditions)
    imported = Imported(
        tool="vllm-bench",
        format="json",
        conditions=conditions,
        metrics=metrics,
        rows=rows,
        manifest=manifest,
        date=day,
        trial_unit="session",
        per_trial=True,
    )
    imported.notes, imported.requests = notes, requests
    unread = [(n, p, r["date"]) for (n, p), r in passes if isinstance(r.get("date"), str) and r["date"].strip()]
    if day is None and unread:
        name, path, text = unread[0]
        imported.undated = (
            f"{_where(name, path)}: its date {text[:40]!r} cannot be read (vLLM writes YYYYMMDD-HHMMSS; ISO 8601 "
            "is read too)"
        )
    if all(k in metrics for k in DRAFTS):
        imported.rates = {"acceptance": {"numerator": DRAFTS[0], "denominator": DRAFTS[1]}}
    return imported


def _records(name: str, data: bytes) -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """One saved result, or several (`--append-result` writes one JSON object per line)."""
    lines = [line for line in data.decode("utf-8-sig", errors="replace").splitlines() if line.strip()]
    try:
        out = [((name, "$"), load_json(name, data, "a vLLM serving-benchmark result (JSON)"))]
    except BenchledgerError:
        if len(lines) < 2:
            raise
        found = [load_json(f"{name} line {i}", line.encode(), "a vLLM result line") for i, line in enumerate(lines, 1)]
        out = [((name, f"line {i}"), item) for i, item in enumerate(found, 1)]
    for (file, path), record in out:
        if not isinstance(record, dict):
            kind = type(record).__name__
            message = f"is a JSON {kind}; expected the object `vllm bench serve --save-result` writes"
            raise BenchledgerError(Problem(file=file, field=path, message=message))
        if not any(k in record for k in ("request_throughput", "duration", "ttfts")):
            message = (
                "has no request_throughput (nor duration, nor ttfts): expected the object "
                "`vllm bench serve --save-result` writes"
            )
            raise BenchledgerError(Problem(file=file, field=f"{path}.request_throughput", message=message))
    return out


def _refuse_empty_pass(name: str, path: str, record: dict[str, Any]) -> None:
    """A pass in which no request completed measured nothing: vLLM still writes 0 for its
    latencies and throughputs, and those zeros must never become a trial."""
    completed, failed = record.get("completed"), record.get("failed")
    if completed == 0 and not isinstance(completed, bool):
        of = f"all {failed:g} of its requests failed" if finite(failed) and failed > 0 else "no request completed"
        message = (
            f"{of} (completed: 0), so its latencies and throughputs (written as 0) measured nothing; fix the "
            "server and rerun the pass, or import the other files without this one"
        )
        raise BenchledgerError(Problem(file=name, field=f"{path}.completed", message=message))


def _refuse_mixed_metrics(passes: list[tuple[tuple[str, str], dict[str, Any]]]) -> None:
    """Every pass must report the same figures (vLLM writes only its --percentile-metrics and
    --metric-percentiles): a run whose trials lack a metric cannot be summarised."""
    figures = [
        {_name(k) for k, v in record.items() if finite(v) and (LATENCY.match(k) or k in THROUGHPUTS)}
        for _, record in passes
    ]
    union = set().union(*figures) if figures else set()
    for ((name, path), _), found in zip(passes, figures, strict=True):
        missing = sorted(union - found)
        if missing:
            other = next((n for ((n, _), _), f in zip(passes, figures, strict=True) if missing[0] in f), "")
            message = (
                f"lacks {', '.join(missing)}, which {other} reports (the passes ran with different "
                "--percentile-metrics or --metric-percentiles); import passes that report the same figures "
                "together, or these as separate runs"
            )
            raise BenchledgerError(Problem(file=name, field=f"{path}.{missing[0]}", message=message))


# columns results.csv and requests.csv already hold: a condition by one of these names would overwrite them
RESERVED_COLUMNS = frozenset(
    {"trial", "request", "start_s", "ttft_s", "latency_s", "output_tokens", "draft_tokens", "draft_accepted", "error"}
)


def _conditions(passes: list[tuple[tuple[str, str], dict[str, Any]]]) -> list[str]:
    """The traffic, plus every recorded argument or metadata key that differs between passes."""
    records = [record for _, record in passes]
    keys = [k for k in TRAFFIC if any(k in r for r in records)]
    metadata = [k for r in records for k in r if _setting(k, r[k]) and k not in KNOWN_TEXT]
    for key in dict.fromkeys([*RECORDED, *metadata]):
        if len({_condition(r.get(key)) for r in records}) > 1:
            if not re.match(NAME_PATTERN, key) or key in RESERVED_COLUMNS:
                (file, path), _ = passes[0]
                message = (
                    f"{key[:40]!r} differs between files but cannot name a column (results.csv and requests.csv "
                    "already use that name); import them as separate runs"
                )
                raise BenchledgerError(Problem(file=file, field=path, message=message))
            keys.append(key)
    return keys or ["request_rate"]


def _setting(key: str, value: Any) -> bool:
    """A recorded argument or `--metadata` value (a sweep's server settings too), not a figure."""
    if key in THROUGHPUTS or key in PER_REQUEST or key == TRIAL_INDEX or OUTCOME.match(key) or LATENCY.match(key):
        return False
    if _fork_figure(key, value) is not None:
        return False
    return isinstance(value, str | int | float | bool)


def _fork_figure(key: str, value: Any) -> dict[str, str] | None:
    """The unit and direction of a figure a fork measured (`conversations_failed`, `mean_e2e_ms`,
    `requests_per_second`), known by its name's ending and its number; None for anything else."""
    if not isinstance(value, int | float) or isinstance(value, bool) or key in (*TRAFFIC, *RECORDED, TRIAL_INDEX):
        return None
    if key.endswith("_latency") and not key.startswith("std_"):
        return {"better": "lower"}  # a latency whose unit the file does not say
    return next((dict(spec) for pattern, spec in FORK_FIGURES if pattern.search(key)), None)


def _unfinished(record: dict[str, Any]) -> int:
    """Prompts an older writer (no `failed` key) sent but did not complete: counted as `failed`
    (in the record), so the pass never reads as complete."""
    completed, prompts = record.get("completed"), record.get("num_prompts")
    if "failed" in record or not (finite(completed) and finite(prompts)) or not 0 <= completed <= prompts:
        return 0
    record["failed"] = int(prompts - completed)
    return int(prompts - completed)


def _where(name: str, path: str) -> str:
    return name if path == "$" else f"{name} {path}"


def _figure_notes(passes: list[tuple[tuple[str, str], dict[str, Any]]], metrics: dict[str, Any]) -> list[str]:
    """Figures that could not be kept: a number that is not finite (Infinity, NaN), or one that only
    some passes report; each is named, never dropped silently."""
    notes: list[str] = []
    partial: dict[str, str] = {}
    for (name, path), record in passes:
        for key, value in record.items():
            figure = _figure_spec(key, value) is not None and key != "spec_decode_acceptance_rate"
            if figure and isinstance(value, float) and not math.isfinite(value) and _name(key) not in metrics:
                notes.append(
                    f"{_where(name, path)}: {key} is {value!r} ({'not a number' if value != value else 'infinite'}),"
                    " so it is not kept as a figure; the original under raw/ keeps it."
                )
            elif figure and finite(value) and _name(key) not in metrics:
                partial.setdefault(key, name)
            elif figure and value is not None and not isinstance(value, float) and _name(key) not in metrics:
                what = (
                    f"an integer of {len(str(abs(value)))} digits, more than a number of a run file holds"
                    if isinstance(value, int) and not isinstance(value, bool)
                    else f"{json.dumps(value)[:40]}, not a number"
                )
                notes.append(f"{_where(name, path)}: {key} is {what}, so it is not kept as a figure; raw/ keeps it.")
    legacy = sorted({k for _, r in passes for k in r if LATENCY.match(k) and k.endswith("_latency_ms")})
    if legacy:
        notes.append(
            f"{', '.join(legacy)} (the older benchmark_serving.py's end-to-end latency) are kept as "
            f"{', '.join(_name(k) for k in legacy)}, today's names for the same figures."
        )
    if partial:
        shown = ", ".join(sorted(partial)[:8])
        notes.append(
            f"Only some of the passes report {shown}, so {'it is' if len(partial) == 1 else 'they are'} not "
            "kept as metrics (results.csv needs a value in every row); the originals under raw/ keep them."
        )
    return notes


def _figure_spec(key: str, value: Any) -> dict[str, str] | None:
    """The metric a key of a saved result is, whatever its value: None for settings and lists."""
    if key in THROUGHPUTS:
        return {"unit": THROUGHPUTS[key], "better": "higher"}
    if LATENCY.match(key):
        return {"unit": "ms", "better": "lower"}
    if key in SPECULATIVE:
        return {"unit": SPECULATIVE[key], "better": "higher"}
    if key in DRAFTS:
        return {"unit": "tokens"}
    if key in COUNTS:
        return dict(COUNTS[key])
    if OUTCOME.match(key) or key in PER_REQUEST or key == TRIAL_INDEX:
        return None
    return _fork_figure(key, value)


def _metrics(records: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    present = list(dict.fromkeys(k for r in records for k, v in r.items() if finite(v)))
    for key in (k for k in present if LATENCY.match(k)):
        twin = next((k for k in present if k != key and _name(k) == _name(key)), None)
        if twin is not None:  # p99.9_ttft_ms and p99_9_ttft_ms: one would silently stand for both
            message = f"{key!r} and {twin!r} would both be the metric {_name(key)!r}; keep one of them"
            raise BenchledgerError(Problem(file="vllm-bench", message=message))
    out = {k: {"unit": unit, "better": "higher"} for k, unit in THROUGHPUTS.items() if k in present}
    out |= {_name(k): {"unit": "ms", "better": "lower"} for k in present if LATENCY.match(k)}
    out |= {k: {"unit": unit, "better": "higher"} for k, unit in SPECULATIVE.items() if k in present}
    if all(k in present for k in DRAFTS):
        out.pop("spec_decode_acceptance_rate", None)  # derived from the counts instead, as a rate
        out |= {k: {"unit": "tokens"} for k in DRAFTS}
    if not out:
        raise BenchledgerError(
            Problem(file="vllm-bench", message="no throughput or latency figure in any file; is this a saved result?")
        )
    everywhere = [k for k in present if all(finite(r.get(k)) for r in records)]
    out |= {k: dict(spec) for k, spec in COUNTS.items() if k in everywhere}
    forks = [k for k in everywhere if k not in COUNTS and not (LATENCY.match(k) or OUTCOME.match(k))]
    out |= {k: spec for k in forks if k not in out and (spec := _fork_figure(k, records[0][k])) is not None}
    return out


def _name(key: str) -> str:
    """The metric a saved key becomes: p99.9_ttft_ms -> p99_9_ttft_ms; the older writer's end-to-end
    latency (mean_latency_ms) -> mean_e2el_ms, today's name for the same figure."""
    name = key.replace(".", "_")
    return name[: -len("_latency_ms")] + "_e2el_ms" if LATENCY.match(key) and name.endswith("_latency_ms") else name


def _summary(name: str, path: str, record: dict[str, Any], metric: str) -> float | None:
    key = next((k for k in record if _name(k) == metric), metric)
    value = record.get(key)
    if value is None:
        return None
    if not finite(value) or value < 0:
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.{key}", message=f"{str(value)[:40]!r} is not a number >= 0")
        )
    return float(value)


def _condition(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)[:200] if not isinstance(value, dict | list) else json.dumps(value, sort_keys=True)[:200]


def _day(value: Any) -> dt.date | None:
    """vLLM writes `date` as YYYYMMDD-HHMMSS; forks and wrappers write ISO 8601 (2025-06-02T10:15:00+00:00)."""
    text = str(value).strip() if isinstance(value, str) else ""
    try:
        return dt.datetime.strptime(text[:15], "%Y%m%d-%H%M%S").date()
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(text).date()
    except ValueError:
        return None


def _manifest(first: dict[str, Any], conditions: list[str]) -> dict[str, Any]:
    """Backend, model and tokenizer (when they did not vary), and the recorded traffic shape."""
    fixed = {k: first.get(k) for k in RECORDED if k not in conditions and isinstance(first.get(k), str | int | float)}
    out: dict[str, Any] = {}
    if isinstance(fixed.get("model_id"), str):
        out["model"] = {"name": fixed.pop("model_id")}
    named = {"backend": "backend", "endpoint_type": "endpoint_type", "version": "backend_version"}
    software = {"client": "vllm bench serve"} | {named[k]: v for k, v in fixed.items() if k in named}
    out["software"] = software
    load = {k: v for k, v in fixed.items() if k not in named}
    if load:
        out["load"] = load
    metadata = {
        k: v[:200] if isinstance(v, str) else v
        for k, v in first.items()
        if _setting(k, v) and k not in KNOWN_TEXT | set(conditions)
    }
    if metadata:
        out["metadata"] = metadata  # what `--metadata KEY=VALUE` recorded
    return out
