"""GuideLLM's benchmark report (`benchmarks.json`, or the same as YAML) as a run.

A report holds one benchmark per load level of its profile (a concurrency, a request rate, or
a sweep's synchronous, throughput and rate steps). Each benchmark is one pass at that load: a
trial (`trial_unit: session`). The load is the condition: `concurrency` when every benchmark
ran a fixed number of streams, `rate` when every one ran a fixed request rate, else
`strategy` and `load` ("4 streams", "2.5 req/s", "max"). Several reports of the same loads
are trials 1, 2, 3 in the order given; a sweep's rates are computed from its own throughput
step, so two sweeps rarely share them. Each pass's metrics are GuideLLM's summaries over its
successful requests (mean, median, p99); the requests GuideLLM kept (a sample, see its
`--sample-requests`) go to requests.csv, errored and incomplete ones with their error.
GuideLLM's version, Python and platform, and the model go to the manifest. A report that
holds a credential (under any key, header, flag or URL that names one: common.credential_paths)
is refused: the original is published under raw/. Shapes follow GuideLLM's report schema
(src/guidellm/benchmark/schemas/generative/, tests/fixtures/guidellm/).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from ..errors import BenchledgerError, Problem
from ..ledger.yamlio import parse_yaml
from .common import Imported, finite, load_json, refuse_credentials

SUMMARIES: dict[str, tuple[str, str, tuple[str, ...]]] = {  # guidellm metric -> unit, better, statistics
    "requests_per_second": ("req/s", "higher", ("mean",)),
    "output_tokens_per_second": ("tok/s", "higher", ("mean",)),
    "tokens_per_second": ("tok/s", "higher", ("mean",)),
    "time_to_first_token_ms": ("ms", "lower", ("mean", "median", "p99")),
    "inter_token_latency_ms": ("ms", "lower", ("mean", "median", "p99")),
    "time_per_output_token_ms": ("ms", "lower", ("mean", "median", "p99")),
    "request_latency": ("s", "lower", ("mean", "median", "p99")),
}
MAX_ERROR = 500


def parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    """Read one or more GuideLLM reports into one run."""
    passes: list[tuple[str, str, dict[str, Any]]] = []
    reports = []
    for name, data in files:
        report = _report(name, data)
        reports.append(report)
        passes += [(name, f"$.benchmarks[{i}]", b) for i, b in enumerate(report["benchmarks"])]
    loads = [_load(name, path, b) for name, path, b in passes]
    conditions = _conditions(loads)
    metrics = _metrics([b for _, _, b in passes])
    rows, requests, notes = [], [], []
    counts: dict[tuple[str, ...], int] = {}
    for (name, path, bench), load in zip(passes, loads, strict=True):
        at = _at(load, conditions)
        trial = counts[tuple(at.values())] = counts.get(tuple(at.values()), 0) + 1
        rows.append({"trial": trial, **at, **{m: _summary(name, path, bench, m) for m in metrics}})
        requests += [{"trial": trial, **at} | r for r in _requests(name, path, bench)]
        failed = _failed(bench)
        if failed:
            shown = ", ".join(f"{k}={v}" for k, v in at.items())
            notes.append(f"Trial {trial} at {shown}: {failed} ({name} {path}).")
    notes += _notes(conditions, requests)
    day = min((d for _, _, b in passes if (d := _day(b)) is not None), default=None)
    imported = Imported(
        tool="guidellm",
        format="report",
        conditions=conditions,
        metrics=metrics,
        rows=rows,
        manifest=_manifest(reports[0]),
        date=day,
        trial_unit="session",
        per_trial=True,
    )
    imported.notes, imported.requests = notes, requests
    return imported


def _report(name: str, data: bytes) -> dict[str, Any]:
    if name.lower().endswith((".yaml", ".yml")):
        found, _ = parse_yaml(data.decode("utf-8-sig", errors="replace"), name)  # bounded; located errors
    else:
        found = load_json(name, data, "a GuideLLM JSON report (benchmarks.json)")
    items = found.get("benchmarks") if isinstance(found, dict) else None
    if not isinstance(items, list) or not items or not all(isinstance(b, dict) for b in items):
        raise BenchledgerError(
            Problem(file=name, field="$.benchmarks", message="expected the list of benchmarks GuideLLM writes")
        )
    if name.lower().endswith((".yaml", ".yml")):
        refuse_credentials(name, found)  # load_json checked the JSON ones
    return dict(found)


def _load(name: str, path: str, bench: dict[str, Any]) -> tuple[str, float | None]:
    """The strategy and its size: streams (concurrent), requests per second (constant, poisson)."""
    config, args = bench.get("config"), bench.get("args")
    holder = config if isinstance(config, dict) and "strategy" in config else args  # 0.4+ / 0.3
    strategy = holder.get("strategy") if isinstance(holder, dict) else None
    kind = strategy.get("type_") if isinstance(strategy, dict) else None
    if not isinstance(strategy, dict) or not isinstance(kind, str) or not kind:
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.config.strategy.type_", message="expected the load strategy")
        )
    key = {"concurrent": ("streams", "max_concurrency"), "constant": ("rate",), "poisson": ("rate",)}
    for field in key.get(kind, ()):
        size = strategy.get(field)
        if finite(size) and size > 0:
            return kind[:40], float(size)
    if kind in key:
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.config.strategy", message=f"a {kind} strategy without its {key[kind][0]}")
        )
    return kind[:40], None


def _conditions(loads: list[tuple[str, float | None]]) -> list[str]:
    kinds = {kind for kind, _ in loads}
    if kinds == {"concurrent"}:
        return ["concurrency"]
    if len(kinds) == 1 and kinds <= {"constant", "poisson"}:
        return ["rate"]
    return ["strategy", "load"]


def _at(load: tuple[str, float | None], conditions: list[str]) -> dict[str, str]:
    kind, size = load
    if conditions != ["strategy", "load"]:
        return {conditions[0]: f"{size:g}"}
    if size is None:
        return {"strategy": kind, "load": "1 stream" if kind == "synchronous" else "max"}
    return {"strategy": kind, "load": f"{size:g} streams" if kind == "concurrent" else f"{size:g} req/s"}


def _metrics(benches: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    out = {}
    for metric, (unit, better, stats) in SUMMARIES.items():
        for stat in stats:
            if any(_statistic(b, metric, stat) is not None for b in benches):
                out[f"{metric}_{stat}"] = {"unit": unit, "better": better}
    if not out:
        raise BenchledgerError(
            Problem(file="guidellm", field="$.benchmarks[0].metrics", message="no summary GuideLLM writes")
        )
    return out


def _statistic(bench: dict[str, Any], metric: str, stat: str) -> Any:
    """metrics.<metric>.successful.<stat>; percentiles as a mapping (or a list of pairs)."""
    metrics = bench.get("metrics")
    found = metrics.get(metric) if isinstance(metrics, dict) else None
    summary = found.get("successful") if isinstance(found, dict) else None
    if not isinstance(summary, dict):
        return None
    if stat in summary:
        return summary[stat]
    percentiles = summary.get("percentiles")
    if isinstance(percentiles, dict):
        return percentiles.get(stat)
    if isinstance(percentiles, list):
        return next((p.get("value") for p in percentiles if isinstance(p, dict) and p.get("percentile") == stat), None)
    return None


def _summary(name: str, path: str, bench: dict[str, Any], column: str) -> float | None:
    metric, stat = column.rsplit("_", 1)
    value = _statistic(bench, metric, stat)
    if value is None:
        return None
    if not finite(value) or value < 0:
        where = f"{path}.metrics.{metric}.successful.{stat}"
        raise BenchledgerError(Problem(file=name, field=where, message=f"{str(value)[:40]!r} is not a number >= 0"))
    return float(value)


def _requests(name: str, path: str, bench: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests GuideLLM kept, in the order they started."""
    kept = bench.get("requests")
    if not isinstance(kept, dict):
        return []
    found = []
    for status in ("successful", "errored", "incomplete"):
        items = kept.get(status) or []
        if not isinstance(items, list):
            raise BenchledgerError(
                Problem(file=name, field=f"{path}.requests.{status}", message="expected a list of requests")
            )
        found += [_request(name, f"{path}.requests.{status}[{i}]", r, status) for i, r in enumerate(items)]
    origin = min((r["start"] for r in found if r["start"] is not None), default=0.0)
    found.sort(key=lambda r: (r["start"] is None, r["start"] or 0.0))
    return [
        {
            "request": i,
            "start_s": None if r["start"] is None else round(r["start"] - origin, 6),
            "ttft_s": r["ttft_s"],
            "latency_s": r["latency_s"],
            "output_tokens": r["output_tokens"],
            "error": r["error"],
        }
        for i, r in enumerate(found, start=1)
    ]


def _request(name: str, path: str, item: Any, status: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise BenchledgerError(Problem(file=name, field=path, message="expected a request's statistics"))

    def number(*keys: str) -> float | None:
        for key in keys:
            value = item.get(key)
            if value is not None:
                if not finite(value) or value < 0:
                    raise BenchledgerError(Problem(file=name, field=f"{path}.{key}", message="expected a number >= 0"))
                return float(value)
        return None

    info = item.get("info")
    error = info.get("error") if isinstance(info, dict) else None
    error = " ".join(str(error or item.get("error") or "errored").split())[:MAX_ERROR] if status == "errored" else ""
    if status == "incomplete":
        error = "incomplete: still running when the benchmark ended"
    ttft = number("time_to_first_token_ms")
    latency = number("request_latency")
    return {
        "start": number("request_start_time", "start_time"),
        "ttft_s": None if error or ttft is None else ttft / 1000,
        "latency_s": None if error else latency,
        "output_tokens": number("output_tokens"),
        "error": error,
    }


def _failed(bench: dict[str, Any]) -> str:
    """'2 of 40 requests errored, 1 incomplete' from metrics.request_totals, or ''."""
    metrics = bench.get("metrics")
    totals = metrics.get("request_totals") if isinstance(metrics, dict) else None
    if not isinstance(totals, dict):
        return ""
    counts = {k: totals.get(k) for k in ("errored", "incomplete", "total")}
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
        return ""
    parts = [f"{counts[k]} {k}" for k in ("errored", "incomplete") if counts[k]]
    return f"of {counts['total']} requests, {' and '.join(parts)}" if parts else ""


def _notes(conditions: list[str], requests: list[dict[str, Any]]) -> list[str]:
    notes = []
    if conditions == ["strategy", "load"]:
        notes.append(
            "The load is counted per strategy: streams for concurrent and synchronous runs, requests per "
            "second for constant and poisson runs, and `max` for the throughput step."
        )
    if requests:
        notes.append("requests.csv holds the requests GuideLLM kept in its report (a sample; see --sample-requests).")
    return notes


def _day(bench: dict[str, Any]) -> dt.date | None:
    metrics = bench.get("scheduler_metrics")
    start = bench.get("start_time", metrics.get("start_time") if isinstance(metrics, dict) else None)
    if not finite(start) or not 0 < start < 4_000_000_000:
        return None
    return dt.datetime.fromtimestamp(start, tz=dt.UTC).date()


def _manifest(report: dict[str, Any]) -> dict[str, Any]:
    """GuideLLM's version and platform, and the model the first benchmark's backend names."""
    meta = _mapping(report, "metadata")
    software = {"client": "guidellm"} | {
        key: meta[field][:100]
        for key, field in (("guidellm", "guidellm_version"), ("python", "python_version"), ("platform", "platform"))
        if isinstance(meta.get(field), str)
    }
    out: dict[str, Any] = {"software": software}
    config = _mapping(report["benchmarks"][0], "config")
    backend, args = _mapping(config, "backend"), _mapping(report, "args")
    model = backend.get("model") or args.get("model")
    if isinstance(model, str):
        out["model"] = {"name": model[:200]}
    target = backend.get("target") or args.get("target")
    if isinstance(target, str):
        out["load"] = {"target": target[:200]}
    return out


def _mapping(holder: dict[str, Any], key: str) -> dict[str, Any]:
    found = holder.get(key)
    return found if isinstance(found, dict) else {}
