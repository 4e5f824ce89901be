"""Measure an OpenAI-compatible server (llama.cpp, vLLM, SGLang, Ollama) with streaming.

One trial sends `requests` requests with a fixed concurrency: each worker sends
its next request when its last one finishes. Per request we record the start
offset, TTFT (first read carrying content), latency, output tokens (usage,
else llama.cpp's timings.predicted_n), the gaps between reads that carry content, and llama.cpp's
draft counts. Per trial we derive the rows of results.csv from token counts,
never from chunk counts (one chunk can carry several tokens when drafting).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..errors import BenchledgerError, Problem
from .fetch import fetch, fetch_async, parse_json
from .sse import StreamParser

BUILTIN_PROMPTS = (
    "Explain in a few paragraphs how speculative decoding speeds up text generation.",
    "Write a short story about a lighthouse keeper who measures everything twice.",
    "List ten practical tips for benchmarking software performance, with one sentence each.",
    "Describe the water cycle to a curious ten-year-old.",
    "Summarize the trade-offs between throughput and latency in a web server.",
    "Write a Python function that computes a running median, and explain it.",
    "What questions should you ask before trusting a benchmark result?",
    "Compose a polite email declining a meeting and proposing two other times.",
)
DRAFT_METRIC = "vllm:spec_decode_num_draft_tokens_total"
ACCEPT_METRIC = "vllm:spec_decode_num_accepted_tokens_total"


@dataclass
class RequestResult:
    request: int
    start_s: float
    ttft_s: float | None = None
    latency_s: float | None = None
    output_tokens: int | None = None
    token_source: str | None = None  # usage | timings.predicted_n | chunks
    draft_tokens: int = 0
    draft_accepted: int = 0
    drafted: bool = False  # the server reported draft fields
    server_decode_rate: float | None = None  # llama.cpp timings.predicted_per_second
    gaps: list[float] = field(default_factory=list)
    error: str = ""
    malformed: int = 0  # SSE data lines that were not JSON
    refused: list[str] = field(default_factory=list)  # fields of the wrong type, negative or impossible


@dataclass
class TrialResult:
    wall_s: float
    requests: list[RequestResult]
    vllm_draft: tuple[float, float] | None = None  # (drafted, accepted) deltas from /metrics

    @property
    def ok(self) -> list[RequestResult]:
        return [r for r in self.requests if not r.error]

    def row(self) -> dict[str, float]:
        """The results.csv values of this trial."""
        ok = self.ok
        tokens = sum(r.output_tokens or 0 for r in ok)
        ttfts = sorted(r.ttft_s for r in ok if r.ttft_s is not None)
        tpots = [
            (r.latency_s - r.ttft_s) / (r.output_tokens - 1)
            for r in ok
            if r.latency_s is not None and r.ttft_s is not None and r.output_tokens is not None and r.output_tokens > 1
        ]
        row = {
            "tokens_per_second": tokens / self.wall_s if self.wall_s > 0 else 0.0,
            "requests_per_second": len(ok) / self.wall_s if self.wall_s > 0 else 0.0,
            "ttft_p50_s": _quantile(ttfts, 0.50),
            "ttft_p99_s": _quantile(ttfts, 0.99),
            "tpot_mean_s": statistics.fmean(tpots) if tpots else 0.0,
            "errors": float(len(self.requests) - len(ok)),
        }
        if self.vllm_draft is not None:
            row["draft_tokens"], row["draft_accepted"] = self.vllm_draft
        else:
            row["draft_tokens"] = float(sum(r.draft_tokens for r in ok))
            row["draft_accepted"] = float(sum(r.draft_accepted for r in ok))
        return row

    @property
    def drafted(self) -> bool:
        return self.vllm_draft is not None or any(r.drafted for r in self.requests)


def _quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (numpy's default); 0 for no values."""
    if not values:
        return 0.0
    pos = (len(values) - 1) * q
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (pos - low)


@dataclass(frozen=True)
class Target:
    base_url: str  # ends in /v1
    model: str
    endpoint: str  # chat | completions
    max_tokens: int
    temperature: float
    timeout: float
    prompts: tuple[Any, ...]  # str, or a list of chat messages


MAX_PROMPTS_BYTES = 64 * 1024 * 1024


def load_prompts(path: str | None) -> tuple[Any, ...]:
    """JSONL prompts: each line a string, a list of messages, or {"prompt"|"messages": ...}."""
    if path is None:
        return BUILTIN_PROMPTS
    from pathlib import Path

    file = Path(path)
    if not file.is_file():
        raise BenchledgerError(Problem(path, None, "--prompts", "no such file; give a JSONL file of prompts"))
    if file.stat().st_size > MAX_PROMPTS_BYTES:
        raise BenchledgerError(Problem(path, None, "--prompts", f"is larger than {MAX_PROMPTS_BYTES:,} bytes"))
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise BenchledgerError(
            Problem(path, None, "--prompts", f"is not UTF-8 (byte {err.start}); save it as UTF-8")
        ) from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError) as err:
            reason = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deep"
            raise BenchledgerError(
                Problem(path, number, None, f"not JSON ({reason}); write one JSON string or message list per line")
            ) from None
        if isinstance(item, dict):
            item = item.get("messages", item.get("prompt"))
        if not isinstance(item, str | list) or not item:
            raise BenchledgerError(Problem(path, number, None, "expected a prompt string or a list of chat messages"))
        out.append(item)
    if not out:
        raise BenchledgerError(Problem(path, None, None, "holds no prompts"))
    return tuple(out)


def request_body(target: Target, prompt: Any) -> tuple[str, dict[str, Any]]:
    body: dict[str, Any] = {
        "model": target.model,
        "max_tokens": target.max_tokens,
        "temperature": target.temperature,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if target.endpoint == "chat":
        messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
        return "/chat/completions", body | {"messages": messages}
    if isinstance(prompt, str):
        text = prompt
    else:
        text = "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in prompt)
    return "/completions", body | {"prompt": text}


MAX_COUNT = 10**12  # a token count beyond this is not a count


def _content(chunk: dict[str, Any]) -> str:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    choice = choices[0]
    delta = choice.get("delta")
    delta = delta if isinstance(delta, dict) else {}
    for value in (delta.get("content"), delta.get("reasoning_content"), choice.get("text")):
        if isinstance(value, str) and value:
            return value
    return ""


def _count(value: object) -> int | None:
    """A token count as servers send it: a non-negative whole number, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not (0 <= value < MAX_COUNT) or value != int(value):
        return None
    return int(value)


def _output_tokens(result: RequestResult, value: object, source: str) -> None:
    tokens = _count(value)
    if tokens is None:
        result.refused.append(f"{source} {str(value)[:40]!r}")
    else:
        result.output_tokens, result.token_source = tokens, source


def _absorb(result: RequestResult, chunk: dict[str, Any]) -> None:
    """Take usage, llama.cpp timings and draft counts from one chunk; a field of the wrong type,
    negative or impossible is recorded in `result.refused`, never stored."""
    usage = chunk.get("usage")
    if isinstance(usage, dict) and usage.get("completion_tokens") is not None:
        _output_tokens(result, usage["completion_tokens"], "usage")
    timings = chunk.get("timings")
    if not isinstance(timings, dict):
        return
    if result.token_source != "usage" and timings.get("predicted_n") is not None:
        _output_tokens(result, timings["predicted_n"], "timings.predicted_n")
    rate = timings.get("predicted_per_second")
    if isinstance(rate, int | float) and not isinstance(rate, bool) and math.isfinite(rate) and rate >= 0:
        result.server_decode_rate = float(rate)
    if "draft_n" in timings:
        drafted, accepted = _count(timings.get("draft_n") or 0), _count(timings.get("draft_n_accepted") or 0)
        if drafted is None or accepted is None or accepted > drafted:
            shown = f"{str(timings.get('draft_n_accepted'))[:20]} of {str(timings.get('draft_n'))[:20]}"
            result.refused.append(f"draft counts (accepted {shown} drafted)")
            return
        result.drafted = True
        result.draft_tokens, result.draft_accepted = drafted, accepted


async def one_request(
    client: httpx.AsyncClient, target: Target, index: int, prompt: Any, trial_start: float
) -> RequestResult:
    """Send one streaming request and measure it, within `target.timeout` seconds for the whole
    request (an endless or slow-drip stream is cut there); failures are recorded, never raised."""
    result = RequestResult(index, time.perf_counter() - trial_start)
    try:
        return await asyncio.wait_for(_stream(client, target, prompt, result), target.timeout)
    except TimeoutError:
        result.ttft_s = result.latency_s = None
        result.error = f"no complete answer within {target.timeout:g} s (the whole request; --timeout)"
        return result


async def _stream(client: httpx.AsyncClient, target: Target, prompt: Any, result: RequestResult) -> RequestResult:
    path, body = request_body(target, prompt)
    start = time.perf_counter()
    parser = StreamParser(start, lambda chunk: _absorb(result, chunk), _content)
    perf_counter = time.perf_counter
    try:
        content = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        async with client.stream("POST", target.base_url + path, content=content, headers=headers) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode(errors="replace")[:200]
                result.error = f"HTTP {response.status_code}: {' '.join(text.split())}"
                return result
            async for data in response.aiter_bytes():
                if parser.feed(data, perf_counter()):
                    break
    except httpx.HTTPError as err:
        result.error = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        return result
    result.ttft_s, result.gaps, result.malformed = parser.ttft_s, parser.gaps, parser.malformed
    if parser.error:
        result.error = parser.error
        return result
    result.latency_s = time.perf_counter() - start
    if not parser.finished:
        result.error = "stream ended before data: [DONE] (connection dropped?)"
        result.latency_s = None
        return result
    if result.output_tokens is None:
        result.output_tokens, result.token_source = parser.chunks, "chunks"
    if result.ttft_s is None:
        result.error = "no content received"
    return result


async def scrape_draft_counters(client: httpx.AsyncClient, root: str) -> tuple[float, float] | None:
    """vLLM's cumulative draft and accepted token counters from /metrics, if it serves them
    (within a deadline and a size cap)."""
    found = await fetch_async(client, root + "/metrics")
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


async def run_trial(
    target: Target,
    concurrency: int,
    requests: int,
    on_request: Callable[[RequestResult], None] | None = None,
    first_prompt: int = 0,
) -> TrialResult:
    """One trial: `requests` requests, `concurrency` at a time, each worker sending its next
    request when its last one finished."""
    root = server_root(target.base_url)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=target.timeout) as client:
        before = await scrape_draft_counters(client, root)
        queue = list(range(requests))
        results: list[RequestResult] = []
        start = time.perf_counter()

        async def worker() -> None:
            while queue:
                index = queue.pop(0)
                prompt = target.prompts[(first_prompt + index) % len(target.prompts)]
                result = await one_request(client, target, index + 1, prompt, start)
                results.append(result)
                if on_request is not None:
                    on_request(result)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, requests))))
        wall = time.perf_counter() - start
        after = await scrape_draft_counters(client, root) if before is not None else None
    delta = (after[0] - before[0], after[1] - before[1]) if before is not None and after is not None else None
    return TrialResult(wall, sorted(results, key=lambda r: r.request), delta)


def server_root(base_url: str) -> str:
    """http://host:port/v1 -> http://host:port (where /props, /metrics and /version live)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def probe(base_url: str, timeout: float) -> list[str]:
    """The server's model ids; raise naming the URL when it cannot be reached in time."""
    url = base_url.rstrip("/") + "/models"
    try:
        httpx.get(url, timeout=min(timeout, 5.0)).close()
    except httpx.HTTPError as err:
        raise BenchledgerError(
            Problem(url, None, None, f"server not reachable ({type(err).__name__}: {err}); start it or fix --base-url")
        ) from None
    found = fetch(url, min(timeout, 30.0))
    if found is None:
        raise BenchledgerError(
            Problem(url, None, None, "gave no complete answer in time (or a huge one); is --base-url the server?")
        )
    if found[0] != 200:
        raise BenchledgerError(
            Problem(
                url,
                None,
                None,
                f"answered HTTP {found[0]}; is --base-url the server's OpenAI-compatible root (ending in /v1)?",
            )
        )
    listed = parse_json(found[1])
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"])[:200] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str | int)]
