"""The requests of one vLLM benchmark pass, as `--save-detailed` keeps them (`ttfts`, `itls`,
`latencies`, `output_lens`, `errors`, `start_times`): the rows of requests.csv, and what the
pass did not complete (failed requests, unfinished prompts, requests that returned no token).
A request vLLM kept with TTFT 0 or no output is an error, never a measured zero."""

from __future__ import annotations

import math
from typing import Any

from ..errors import BenchledgerError, Problem
from .common import finite

PER_REQUEST = ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "errors")
MAX_ERROR = 500
NO_TOKEN = "no token returned"  # a request vLLM kept with TTFT 0 or no output: an error, never a measured zero


def request_rows(name: str, path: str, record: dict[str, Any], trial: int, at: dict[str, str]) -> list[dict[str, Any]]:
    """requests.csv rows from the per-request lists `--save-detailed` keeps."""
    lists = {k: record[k] for k in PER_REQUEST if k in record}
    if "ttfts" not in lists:
        return []
    count = len(lists["ttfts"]) if isinstance(lists["ttfts"], list) else -1
    for key, values in lists.items():
        if not isinstance(values, list) or len(values) != count:
            raise BenchledgerError(
                Problem(file=name, field=f"{path}.{key}", message=f"expected a list of {count} per-request values")
            )
    starts = [s for s in lists.get("start_times", []) if finite(s)]
    origin = min(starts, default=0.0)
    return [{"trial": trial, **at} | _request(name, path, lists, i, origin) for i in range(count)]


def _request(name: str, path: str, lists: dict[str, list[Any]], i: int, origin: float) -> dict[str, Any]:
    def number(key: str) -> float | None:
        if key not in lists or lists[key][i] is None:
            return None
        value = lists[key][i]
        if not finite(value) or value < 0:
            raise BenchledgerError(Problem(file=name, field=f"{path}.{key}[{i}]", message="expected a number >= 0"))
        return float(value)

    error = lists.get("errors", [""] * (i + 1))[i]
    error = " ".join(str(error).split())[:MAX_ERROR] if error else ""
    itls = lists.get("itls", [None] * (i + 1))[i]
    if itls is not None and (not isinstance(itls, list) or not all(finite(t) and t >= 0 for t in itls)):
        raise BenchledgerError(Problem(file=name, field=f"{path}.itls[{i}]", message="expected a list of seconds >= 0"))
    ttft, latency, start = number("ttfts"), number("latencies"), number("start_times")
    tokens = number("output_lens")
    if not error and (ttft == 0 or tokens == 0):
        error = f"{NO_TOKEN} (vLLM wrote {'TTFT 0 s' if ttft == 0 else 'output length 0'})"
    if latency is None and ttft is not None and itls is not None and not error:
        latency = ttft + math.fsum(itls)  # what vLLM's own timeline plot uses when latencies are absent
    return {
        "request": i + 1,
        "start_s": None if start is None else round(start - origin, 6),
        "ttft_s": None if error else ttft,
        "latency_s": None if error else latency,
        "output_tokens": tokens,
        "error": error,
    }


def failure_notes(
    trial: str, where: str, record: dict[str, Any], requests: list[dict[str, Any]], unfinished: int
) -> list[str]:
    """What the pass did not complete: failed requests, unfinished prompts, requests with no token."""
    out = []
    failed, completed = record.get("failed"), record.get("completed")
    if unfinished and finite(completed):
        done = int(completed)
        out.append(
            f"{trial}: {unfinished:,} of {unfinished + done:,} prompts not completed ({where}); the file records "
            f"no failures, so they are counted as failed, and its figures describe the {done:,} that completed."
        )
    elif finite(failed) and failed > 0:
        of = f" of {failed + completed:g}" if finite(completed) else ""
        out.append(f"{trial}: {failed:g}{of} requests failed ({where}).")
    empty = sum(1 for r in requests if str(r["error"]).startswith(NO_TOKEN))
    if empty:
        out.append(
            f"{trial}: {empty} request{'s' if empty > 1 else ''} returned no token ({where}); vLLM writes TTFT 0 "
            "for such a request, so requests.csv keeps it as an error, out of the latency statistics."
        )
    return out
