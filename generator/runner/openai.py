"""Measure an OpenAI-compatible server (llama.cpp, vLLM, SGLang, Ollama) with streaming.

`run_trial` runs one trial (trial.py: closed or open loop, one or several worker processes)
and adds vLLM's draft counters scraped from /metrics around it; `probe` checks the server
before the first trial. Per request see request.py; per trial, trial.py: the rows of
results.csv come from token counts, never from chunk counts (one chunk can carry several
tokens when drafting).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable

import httpx

from ..errors import BenchledgerError, Problem
from .fetch import PROBE_DEADLINE_S, NoAnswer, fetch_async, get, parse_json
from .load import arrivals, parse_slo
from .request import (
    BUILTIN_PROMPTS,
    MAX_PROMPTS_BYTES,
    RequestResult,
    Target,
    _absorb,
    _content,
    load_prompts,
    one_request,
    prepared_requests,
    request_body,
)
from .selfcheck import ClientFigures
from .trial import Load, Part, PartResult, TrialResult, measure_part, split
from .wire import Origin

__all__ = [
    "BUILTIN_PROMPTS",
    "MAX_PROMPTS_BYTES",
    "PROBE_DEADLINE_S",
    "Load",
    "Part",
    "PartResult",
    "RequestResult",
    "Target",
    "TrialResult",
    "_absorb",
    "_content",
    "arrivals",
    "load_prompts",
    "measure_part",
    "one_request",
    "parse_slo",
    "prepared_requests",
    "probe",
    "request_body",
    "run_trial",
    "server_root",
    "split",
]

DRAFT_METRIC = "vllm:spec_decode_num_draft_tokens_total"
ACCEPT_METRIC = "vllm:spec_decode_num_accepted_tokens_total"


async def scrape_draft_counters(client: httpx.AsyncClient, root: str, deadline_s: float) -> tuple[float, float] | None:
    """vLLM's cumulative draft and accepted token counters from /metrics, if it serves them
    (within `deadline_s` for the whole answer and fetch.MAX_BYTES)."""
    found = await fetch_async(client, root + "/metrics", deadline_s)
    if found is None or found[0] != 200:
        return None
    values: dict[str, float] = {}
    for line in found[1].decode(errors="replace").splitlines():
        match = re.match(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+([0-9.eE+-]+)", line)
        if match and match.group(1) in (DRAFT_METRIC, ACCEPT_METRIC):
            values[match.group(1)] = values.get(match.group(1), 0.0) + float(match.group(3))
    if DRAFT_METRIC not in values or not all(math.isfinite(v) and v >= 0 for v in values.values()):
        return None
    return values[DRAFT_METRIC], values.get(ACCEPT_METRIC, 0.0)


def counted(before: tuple[float, float], after: tuple[float, float]) -> tuple[tuple[float, float] | None, bool]:
    """The drafted and accepted tokens between two scrapes, and whether the counters went down
    between them (the server restarted or reset them). As Prometheus's `increase` counts a
    reset, a counter that went down counts from zero: its value after the reset. Never a
    negative count; None when the two counts cannot both be true (more accepted than drafted)."""
    reset = after[0] < before[0] or after[1] < before[1]
    drafted, accepted = after if reset else (after[0] - before[0], after[1] - before[1])
    return ((drafted, accepted) if accepted <= drafted else None), reset


async def run_trial(
    target: Target,
    concurrency: int | None,
    requests: int,
    on_request: Callable[[RequestResult], None] | None = None,
    first_prompt: int = 0,
    *,
    load: Load | None = None,
    slo: dict[str, float] | None = None,
) -> TrialResult:
    """One trial of `requests` requests, offered as `load` says (default: closed loop at
    `concurrency`). Connections are opened and requests built before the trial starts; the
    client measures its own lag, CPU and send delays meanwhile. With several workers, each
    process runs its part from a common start and the records are merged."""
    load = load or Load(concurrency)
    origin = Origin.parse(target.base_url)
    root = server_root(target.base_url)
    parts = split(load, requests, load.workers)
    # a side client for vLLM's /metrics, outside the timed window (no TLS context for plain http)
    deadline = min(target.timeout, PROBE_DEADLINE_S)
    async with httpx.AsyncClient(verify=origin.scheme == "https") as side:
        before = await scrape_draft_counters(side, root, deadline)
        if load.ray is not None:
            from .ray_workers import run_parts_ray

            measured = await asyncio.to_thread(run_parts_ray, load.ray, target, parts, first_prompt)
            for part in measured:
                for result in part.results:
                    if on_request is not None:
                        on_request(result)
        elif len(parts) > 1:
            from .workers import run_parts

            measured = await asyncio.to_thread(run_parts, target, parts, first_prompt)
            for part in measured:
                for result in part.results:
                    if on_request is not None:
                        on_request(result)
        else:
            measured = [await measure_part(target, parts[0], first_prompt, on_request)]
        after = await scrape_draft_counters(side, root, deadline) if before is not None else None
    delta, reset = counted(before, after) if before is not None and after is not None else (None, False)
    results = sorted((r for part in measured for r in part.results), key=lambda r: r.request)
    wall = max(part.end for part in measured) - min(part.start for part in measured)
    delays = [r.send_delay_s for r in results if r.send_delay_s is not None]
    lags = [lag for part in measured for lag in part.lags]
    client = ClientFigures.of(lags, max(part.cpu for part in measured), delays)
    return TrialResult(wall, results, delta, client, slo or {}, counter_reset=reset)


def server_root(base_url: str) -> str:
    """http://host:port/v1 -> http://host:port (where /props, /metrics and /version live)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def probe(base_url: str, deadline_s: float) -> list[str]:
    """The server's model ids; raise naming the URL when it gives no complete answer within
    `deadline_s` and fetch.MAX_BYTES (or cannot be reached)."""
    url = base_url.rstrip("/") + "/models"
    try:
        found = get(url, deadline_s)
    except NoAnswer as err:
        raise BenchledgerError(Problem(file=url, message=str(err))) from None
    if found[0] != 200:
        raise BenchledgerError(
            Problem(
                file=url,
                message=f"answered HTTP {found[0]}; is --base-url the server's OpenAI-compatible root (ending in /v1)?",
            )
        )
    listed = parse_json(found[1])
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"])[:200] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str | int)]
