"""GuideLLM's benchmark report (`benchmarks.json`, or the same as YAML) as a run.

A report holds one benchmark per load level of its profile (a concurrency, a request rate, or
a sweep's synchronous, throughput and rate steps). Each benchmark is one pass at that load: a
trial (`trial_unit: session`). The load is the condition: `concurrency` when every benchmark
ran a fixed number of streams, `rate` when every one ran a fixed request rate, else
`strategy` and `load` ("4 streams", "2.5 req/s", "max"). Several reports of the same loads
are trials 1, 2, 3 in the order given; a sweep's rates are computed from its own throughput
step, so two sweeps rarely share them. Each pass's metrics are GuideLLM's summaries over its
successful requests (mean, median, p99), and the requests they cover by status
(`request_totals`: requests_successful, requests_errored, requests_incomplete). The requests
GuideLLM kept (a sample, see its `--sample-requests`) go to requests.csv, errored and incomplete
ones with their error, each marked warmup, measured or cooldown by GuideLLM's measurement window
(0.4 and later keep all three; only measured ones enter the page's request statistics).
GuideLLM's version, Python and platform, and the model and target go to the manifest; reports of
two models get the condition `model`, and reports against two servers are two machines (`machine`). A report that
holds a credential (under any key, header, flag or URL that names one: common.credential_paths)
is refused: the original is published under raw/. Shapes follow GuideLLM's report schema
(src/guidellm/benchmark/schemas/generative/, tests/fixtures/guidellm/).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ..errors import BenchledgerError, Problem
from ..ledger.yamlio import parse_yaml
from .common import Imported, finite, load_json, located
from .credentials import refuse_credentials
from .machines import Machine

SUMMARIES: dict[str, tuple[str, str, tuple[str, ...]]] = {  # guidellm metric -> unit, better, statistics
    "requests_per_second": ("req/s", "higher", ("mean",)),
    "output_tokens_per_second": ("tok/s", "higher", ("mean",)),
    "tokens_per_second": ("tok/s", "higher", ("mean",)),
    "time_to_first_token_ms": ("ms", "lower", ("mean", "median", "p99")),
    "inter_token_latency_ms": ("ms", "lower", ("mean", "median", "p99")),
    "time_per_output_token_ms": ("ms", "lower", ("mean", "median", "p99")),
    "request_latency": ("s", "lower", ("mean", "median", "p99")),
}
COUNTS: dict[str, dict[str, str]] = {  # request_totals: the requests its statistics cover, by status
    "successful": {},
    "errored": {"better": "lower"},
    "incomplete": {"better": "lower"},
}
MAX_ERROR = 500
LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]")


def parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    """Read one or more GuideLLM reports into one run."""
    return located(files, _parse)


def _parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    passes: list[tuple[str, str, dict[str, Any]]] = []
    reports, models = [], []
    for name, data in files:
        report = _report(name, data)
        reports.append(report)
        model = _identity(report).get("model", "")
        passes += [(name, f"$.benchmarks[{i}]", b) for i, b in enumerate(report["benchmarks"])]
        models += [model] * len(report["benchmarks"])
    loads = [_load(name, path, b) for name, path, b in passes]
    by_model = len(set(models)) > 1  # reports of two models: the model is a condition, never pooled trials
    conditions = (["model"] if by_model else []) + _conditions(loads)
    metrics = _metrics(passes)
    rows, requests, notes = [], [], []
    counts: dict[tuple[str, ...], int] = {}
    for (name, path, bench), load, model in zip(passes, loads, models, strict=True):
        at = ({"model": model or "(not recorded)"} if by_model else {}) | _at(load, conditions[by_model:])
        trial = counts[tuple(at.values())] = counts.get(tuple(at.values()), 0) + 1
        rows.append({"trial": trial, **at, **{m: _summary(name, path, bench, m) for m in metrics}})
        requests += [{"trial": trial, **at} | r for r in _requests(name, path, bench)]
        failed = _failed(bench)
        if failed:
            shown = ", ".join(f"{k}={v}" for k, v in at.items())
            notes.append(f"Trial {trial} at {shown}: {failed} ({name} {path}).")
    notes += _notes(conditions, requests)
    day = min((d for _, _, b in passes if (d := _day(b)) is not None), default=None)
    manifest = _manifest(reports[0])
    if by_model:
        manifest.pop("model", None)
    imported = Imported(
        tool="guidellm",
        format="report",
        conditions=conditions,
        metrics=metrics,
        rows=rows,
        manifest=manifest,
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
    where = "args" if isinstance(args, dict) and "strategy" in args and not isinstance(config, dict) else "config"
    holder = bench.get(where)  # 0.4 and later: config; 0.2, 0.3: args
    strategy = holder.get("strategy") if isinstance(holder, dict) else None
    kind = strategy.get("type_") if isinstance(strategy, dict) else None
    if not isinstance(strategy, dict) or not isinstance(kind, str) or not kind:
        message = "expected the load strategy GuideLLM records (synchronous, concurrent, throughput, constant, poisson)"
        raise BenchledgerError(Problem(file=name, field=f"{path}.{where}.strategy.type_", message=message))
    key = {"concurrent": ("streams", "max_concurrency"), "constant": ("rate",), "poisson": ("rate",)}
    for field in key.get(kind, ()):
        size = strategy.get(field)
        if finite(size) and size > 0:
            return kind[:40], float(size)
    if kind in key:
        message = f"a {kind} strategy without its {key[kind][0]}"
        raise BenchledgerError(Problem(file=name, field=f"{path}.{where}.strategy", message=message))
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


def _metrics(passes: list[tuple[str, str, dict[str, Any]]]) -> dict[str, dict[str, str]]:
    benches = [b for _, _, b in passes]
    out = {}
    for metric, (unit, better, stats) in SUMMARIES.items():
        for stat in stats:
            if any(_statistic(b, metric, stat) is not None for b in benches):
                out[f"{metric}_{stat}"] = {"unit": unit, "better": better}
    if not out:
        name, path, _ = passes[0]
        message = (
            "holds no summary GuideLLM writes (metrics.request_latency.successful.mean and the like); "
            "give the benchmarks.json or .yaml report GuideLLM saved"
        )
        raise BenchledgerError(Problem(file=name, field=f"{path}.metrics", message=message))
    if all(_totals(b) for b in benches):  # the requests its statistics cover, by status: counted work, metrics
        out |= {f"requests_{status}": {"unit": "requests", **better} for status, better in COUNTS.items()}
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
    if column.startswith("requests_") and column.removeprefix("requests_") in COUNTS:
        return float(_totals(bench)[column.removeprefix("requests_")])
    metric, stat = column.rsplit("_", 1)
    value = _statistic(bench, metric, stat)
    if value is None:
        return None
    if not finite(value) or value < 0:
        where = f"{path}.metrics.{metric}.successful.{stat}"
        raise BenchledgerError(Problem(file=name, field=where, message=f"{str(value)[:40]!r} is not a number >= 0"))
    return float(value)


def _requests(name: str, path: str, bench: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests GuideLLM kept, in the order they started, each with its phase when the report
    records its measurement window (0.4 and later keep warm-up and cool-down requests beside the
    measured ones; 0.2 and 0.3 kept only measured requests)."""
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
    window = _window(bench)
    return [
        {
            "request": i,
            "start_s": None if r["start"] is None else round(r["start"] - origin, 6),
            "ttft_s": r["ttft_s"],
            "latency_s": r["latency_s"],
            "output_tokens": r["output_tokens"],
            "error": r["error"],
            **({"phase": _phase(r["start"], r["end"], window)} if window else {}),
        }
        for i, r in enumerate(found, start=1)
    ]


def _window(bench: dict[str, Any]) -> tuple[float, float] | None:
    """GuideLLM's measurement window (scheduler_metrics.measure_start_time, measure_end_time)."""
    metrics = _mapping(bench, "scheduler_metrics")
    start, end = metrics.get("measure_start_time"), metrics.get("measure_end_time")
    return (float(start), float(end)) if finite(start) and finite(end) and 0 < start <= end else None


def _phase(start: float | None, end: float | None, window: tuple[float, float]) -> str:
    """GuideLLM's own rule (GenerativeRequestsAccumulator.get_within_range): a request is measured
    when it ended at or after the window opened and started (or, never started, ended) by its close."""
    if end is None:
        return "measured"
    if end < window[0]:
        return "warmup"
    return "measured" if (start if start is not None else end) <= window[1] else "cooldown"


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
    said = info.get("error") if isinstance(info, dict) else None
    said = " ".join(str(said or item.get("error") or "").split())
    error = (said or "errored")[:MAX_ERROR] if status == "errored" else ""
    if status == "incomplete":  # the error GuideLLM recorded (TimeoutError, cancelled), else what incomplete means
        error = f"incomplete: {said or 'still running when the benchmark ended'}"[:MAX_ERROR]
    ttft = number("time_to_first_token_ms")
    latency = number("request_latency")
    return {
        "start": number("request_start_time", "start_time"),
        "end": number("request_end_time", "end_time"),
        "ttft_s": None if error or ttft is None else ttft / 1000,
        "latency_s": None if error else latency,
        "output_tokens": number("output_tokens"),
        "error": error,
    }


def _totals(bench: dict[str, Any]) -> dict[str, int]:
    """The requests GuideLLM's statistics cover, by status: metrics.request_totals (0.4 and later),
    or the benchmark's own request_totals (0.2, 0.3); {} when absent or malformed."""
    return _breakdown(_mapping(bench, "metrics").get("request_totals") or bench.get("request_totals"))


def and_(items: list[str]) -> str:
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]


def _breakdown(found: Any) -> dict[str, int]:
    if not isinstance(found, dict):
        return {}
    counts = {k: found.get(k) for k in ("successful", "errored", "incomplete", "total")}
    ok = all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10**15 for v in counts.values())  # float()s
    return {k: int(v) for k, v in counts.items() if isinstance(v, int)} if ok else {}


def _failed(bench: dict[str, Any]) -> str:
    """'of 40 requests, 2 errored and 1 incomplete' from the totals GuideLLM's statistics cover, then
    what the whole pass made (warm-up and cool-down included) and what its scheduler cancelled; or ''."""
    totals, parts = _totals(bench), []
    failed = [f"{totals[k]} {k}" for k in ("errored", "incomplete") if totals.get(k)]
    if failed:
        parts.append(f"of {totals['total']} requests, {and_(failed)}")
    run_stats = _mapping(bench, "scheduler_metrics") or _mapping(bench, "run_stats")
    made = _breakdown(run_stats.get("requests_made"))
    if made and totals and made["total"] > totals["total"]:
        also = [f"{made[k]} {k}" for k in ("errored", "incomplete") if made.get(k)]
        parts.append(
            f"of {made['total']} requests made in the whole pass{f' ({and_(also)})' if also else ''}, GuideLLM's "
            f"statistics cover {totals['total']}: the others ran in its warm-up or cool-down"
        )
    cancelled = _mapping(bench, "scheduler_state").get("cancelled_requests")
    if isinstance(cancelled, int) and not isinstance(cancelled, bool) and cancelled > 0:
        parts.append(f"{cancelled} cancelled by GuideLLM's scheduler when the pass ended")
    return "; ".join(parts)


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
    """GuideLLM's version and platform, and the model and target the report names."""
    meta = _mapping(report, "metadata")
    software = {"client": "guidellm"} | {
        key: meta[field][:100]
        for key, field in (("guidellm", "guidellm_version"), ("python", "python_version"), ("platform", "platform"))
        if isinstance(meta.get(field), str)
    }
    out: dict[str, Any] = {"software": software}
    identity = _identity(report)
    if "model" in identity:
        out["model"] = {"name": identity["model"]}
    if "target" in identity:
        out["load"] = {"target": identity["target"]}
    return out


def _identity(report: dict[str, Any]) -> dict[str, str]:
    """The model and target of the first benchmark: its config.backend (0.4 and later), the
    report's args, or its worker's backend_model and backend_target (0.2, 0.3)."""
    bench = report["benchmarks"][0]
    backend, args = _mapping(_mapping(bench, "config"), "backend"), _mapping(report, "args")
    worker = _mapping(bench, "worker")
    out = {}
    for key, old in (("model", "backend_model"), ("target", "backend_target")):
        found = backend.get(key) or args.get(key) or worker.get(old)
        if isinstance(found, str) and found.strip():
            out[key] = found.strip()[:200]
    return out


def machine(imported: Imported) -> Machine:
    """The machine a report measured: the server its target names, with the platform GuideLLM
    recorded when that server is the machine GuideLLM ran on (a local target)."""
    load = imported.manifest.get("load")
    target = load.get("target") if isinstance(load, dict) else None
    if not isinstance(target, str):
        return Machine()
    host = urlsplit(target if "//" in target else f"//{target}").hostname or target
    software = imported.manifest.get("software")
    platform = software.get("platform") if isinstance(software, dict) else None
    if host in LOCAL_HOSTS:
        return Machine(name="localhost", os=platform if isinstance(platform, str) else None)
    return Machine(name=host)


def _mapping(holder: dict[str, Any], key: str) -> dict[str, Any]:
    found = holder.get(key)
    return found if isinstance(found, dict) else {}
