"""Measure an OpenAI-compatible server (llama.cpp, vLLM, SGLang, Ollama) with streaming.

One trial sends `requests` requests, closed loop (a fixed concurrency: each worker sends
its next request when its last one finishes) or open loop (arrivals at a request rate). Per request we record the start
offset, TTFT (first read carrying content), latency, output tokens (usage,
else llama.cpp's timings.predicted_n), the gaps between reads that carry content, and llama.cpp's
draft counts. Per trial we derive the rows of results.csv from token counts,
never from chunk counts (one chunk can carry several tokens when drafting).
"""

from __future__ import annotations

import asyncio
import collections
import json
import math
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..errors import BenchledgerError, Problem
from .fetch import fetch, fetch_async, parse_json
from .load import arrivals
from .selfcheck import ClientFigures, LoopMonitor, quantile
from .sse import StreamParser
from .wire import Connection, Origin, Pool, WireError

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
    start_s: float  # scheduled send, from the trial's start
    ttft_s: float | None = None  # from the scheduled send, so client-side queueing counts
    latency_s: float | None = None  # from the scheduled send to the read that ended the stream
    output_tokens: int | None = None
    token_source: str | None = None  # usage | timings.predicted_n | chunks
    draft_tokens: int = 0
    draft_accepted: int = 0
    drafted: bool = False  # the server reported draft fields
    server_decode_rate: float | None = None  # llama.cpp timings.predicted_per_second
    gaps: list[float] = field(default_factory=list)
    send_delay_s: float | None = None  # from the scheduled send to the moment the bytes left
    error: str = ""
    malformed: int = 0  # SSE data lines that were not JSON
    refused: list[str] = field(default_factory=list)  # fields of the wrong type, negative or impossible

    @property
    def tpot_s(self) -> float | None:
        """(latency - TTFT) / (output tokens - 1): from token counts, not chunks."""
        if self.latency_s is None or self.ttft_s is None or self.output_tokens is None or self.output_tokens < 2:
            return None
        return (self.latency_s - self.ttft_s) / (self.output_tokens - 1)

    def meets(self, slo: dict[str, float]) -> bool:
        """Whether a successful request meets every SLO (load.SLO_KEYS)."""
        if self.error or self.ttft_s is None or self.latency_s is None:
            return False
        tpot = self.tpot_s
        checks = {
            "ttft": self.ttft_s,
            "itl": max(self.gaps, default=0.0),
            "tpot": tpot if tpot is not None else 0.0,
            "e2el": self.latency_s,
        }
        return all(checks[name] <= limit for name, limit in slo.items())


@dataclass
class TrialResult:
    wall_s: float
    requests: list[RequestResult]
    vllm_draft: tuple[float, float] | None = None  # (drafted, accepted) deltas from /metrics
    client: ClientFigures | None = None
    slo: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> list[RequestResult]:
        return [r for r in self.requests if not r.error]

    def row(self) -> dict[str, float]:
        """The results.csv values of this trial."""
        ok = self.ok
        tokens = sum(r.output_tokens or 0 for r in ok)
        wall = self.wall_s
        row = {
            "tokens_per_second": tokens / wall if wall > 0 else 0.0,
            "requests_per_second": len(ok) / wall if wall > 0 else 0.0,
        }
        tpots = [t for t in (r.tpot_s for r in ok) if t is not None]
        series = {
            "ttft": [r.ttft_s for r in ok if r.ttft_s is not None],
            "itl": [g for r in ok for g in r.gaps],
            "tpot": tpots,
            "latency": [r.latency_s for r in ok if r.latency_s is not None],
        }
        for name, values in series.items():
            ordered = sorted(values)
            for q in (50, 90, 99):
                row[f"{name}_p{q}_s"] = quantile(ordered, q / 100)
        row["tpot_mean_s"] = statistics.fmean(tpots) if tpots else 0.0
        row["errors"] = float(len(self.requests) - len(ok))
        if self.slo:
            good = sum(1 for r in ok if r.meets(self.slo))
            row["goodput_requests_per_second"] = good / wall if wall > 0 else 0.0
            row["slo_attainment"] = good / len(self.requests) if self.requests else 0.0
        if self.vllm_draft is not None:
            row["draft_tokens"], row["draft_accepted"] = self.vllm_draft
        else:
            row["draft_tokens"] = float(sum(r.draft_tokens for r in ok))
            row["draft_accepted"] = float(sum(r.draft_accepted for r in ok))
        if self.client is not None:
            row |= self.client.row()
        return row

    @property
    def drafted(self) -> bool:
        return self.vllm_draft is not None or any(r.drafted for r in self.requests)


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
    pool: Pool, target: Target, index: int, data: bytes, scheduled: float, trial_start: float
) -> RequestResult:
    """Send one prepared streaming request due at `scheduled` and measure it from then, within
    `target.timeout` seconds for the whole request (an endless or slow-drip stream is cut
    there); failures are recorded, never raised. Runs in the caller's task: nothing is
    scheduled between the call and the request's bytes leaving."""
    result = RequestResult(index, scheduled - trial_start)
    parser = StreamParser(scheduled, lambda chunk: _absorb(result, chunk), _content)
    expired = f"no complete answer within {target.timeout:g} s (the whole request; --timeout)"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + target.timeout
    done: asyncio.Future[tuple[int, str, str | None]] | None = None
    conn: Connection | None = None
    try:
        for attempt in (1, 2):
            conn = (pool.take() if attempt == 1 else None) or await pool.open()
            reused = conn.used
            timer = loop.call_at(deadline, conn.expire, expired)
            try:
                sent, done = await conn.request(data, parser)
                result.send_delay_s = sent - scheduled
                status, text, failure = await done
            finally:
                timer.cancel()
            if failure is None:
                break
            if attempt == 1 and reused and conn.received == 0 and failure != expired:
                continue  # the server had closed an idle keep-alive connection: once more, fresh
            result.error = failure
            return result
    except WireError as err:
        result.error = str(err)
        return result
    finally:
        if conn is not None and done is not None and not done.done():
            conn.abort()  # cut short (cancelled): the connection cannot be reused
    if status != 200:
        result.error = f"HTTP {status}: {' '.join(text[:200].split())}"
        return result
    result.ttft_s, result.gaps, result.malformed = parser.ttft_s, parser.gaps, parser.malformed
    if parser.error:
        result.error = parser.error
        return result
    if not parser.finished or parser.end is None:
        result.error = "stream ended before data: [DONE] (connection dropped?)"
        return result
    result.latency_s = parser.end - scheduled
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


@dataclass(frozen=True)
class Load:
    """How a trial offers its requests: closed loop (`rate` None: `concurrency` workers, each
    sending its next request when its last one ends) or open loop (arrivals at `rate` per
    second, gamma inter-arrivals of shape `burstiness`, at most `concurrency` in flight when
    given)."""

    concurrency: int | None = 1
    rate: float | None = None
    burstiness: float = 1.0
    seed: int | str = 0


def prepared_requests(target: Target, origin: Origin) -> list[bytes]:
    """Every distinct request's bytes, built before the trial (one per prompt)."""
    out = []
    for prompt in target.prompts:
        path, body = request_body(target, prompt)
        out.append(origin.post(path, json.dumps(body).encode()))
    return out


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
    client measures its own lag, CPU and send delays meanwhile."""
    load = load or Load(concurrency)
    origin = Origin.parse(target.base_url)
    prepared = prepared_requests(target, origin)
    root = server_root(target.base_url)
    # a side client for vLLM's /metrics, outside the timed window (no TLS context for plain http)
    async with httpx.AsyncClient(timeout=target.timeout, verify=origin.scheme == "https") as side:
        before = await scrape_draft_counters(side, root)
        pool = Pool(origin, connect_timeout=min(target.timeout, 30.0))
        results: list[RequestResult] = []

        def done(result: RequestResult) -> None:
            results.append(result)
            if on_request is not None:
                on_request(result)

        def data(index: int) -> bytes:
            return prepared[(first_prompt + index) % len(prepared)]

        try:
            cap = load.concurrency
            await pool.warm(min(requests, cap if cap else 64))
            monitor = LoopMonitor()
            monitor.start()
            start = time.perf_counter()
            if load.rate is None:
                await _closed_loop(pool, target, cap or 1, requests, data, done, start)
            else:
                offsets = arrivals(requests, load.rate, load.burstiness, load.seed)
                await _open_loop(pool, target, cap, offsets, data, done, start)
            wall = time.perf_counter() - start
            monitor.stop()
        finally:
            pool.close()
        after = await scrape_draft_counters(side, root) if before is not None else None
    delta = (after[0] - before[0], after[1] - before[1]) if before is not None and after is not None else None
    delays = [r.send_delay_s for r in results if r.send_delay_s is not None]
    client = ClientFigures.of(monitor.lags, monitor.cpu, delays)
    return TrialResult(wall, sorted(results, key=lambda r: r.request), delta, client, slo or {})


async def _closed_loop(
    pool: Pool,
    target: Target,
    concurrency: int,
    requests: int,
    data: Callable[[int], bytes],
    done: Callable[[RequestResult], None],
    start: float,
) -> None:
    """`concurrency` workers; each next request is due when the worker's last one ended."""
    queue = collections.deque(range(requests))

    async def worker() -> None:
        due = start
        while queue:
            index = queue.popleft()
            result = await one_request(pool, target, index + 1, data(index), due, start)
            due = time.perf_counter() if result.latency_s is None else start + result.start_s + result.latency_s
            done(result)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, requests))))


async def _open_loop(
    pool: Pool,
    target: Target,
    cap: int | None,
    offsets: list[float],
    data: Callable[[int], bytes],
    done: Callable[[RequestResult], None],
    start: float,
) -> None:
    """A request at each arrival; with a cap, an arrival waits for a free slot, and the wait
    counts in its latency (measured from the arrival)."""
    slots = asyncio.Semaphore(cap) if cap else None

    async def send(index: int, due: float) -> None:
        if slots is None:
            done(await one_request(pool, target, index + 1, data(index), due, start))
            return
        async with slots:
            done(await one_request(pool, target, index + 1, data(index), due, start))

    tasks = []
    for index, offset in enumerate(offsets):
        due = start + offset
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(send(index, due)))
    await asyncio.gather(*tasks)


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
