"""One streaming request to an OpenAI-compatible server: what is sent, and what is read back.

The request's bytes are built before its send time (`prepared_requests`); `one_request` sends
them on a pooled connection and measures from the request's scheduled send: TTFT (the first
read carrying content), the gaps between reads carrying content, latency (the read that ended
the stream), output tokens (usage, else llama.cpp's timings.predicted_n, else chunks) and
llama.cpp's draft counts. Fields of the wrong type, negative or impossible are refused, never
stored; failures are recorded, never raised.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BenchledgerError, Problem
from .sse import StreamParser, stream_cap
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
DRAIN_S = 0.1  # how long the end of a finished stream's response is awaited to keep its connection


def read_input(path: Path, *, option: str, limit: int, kind: str) -> str:
    """The text of a file the person named with `option`: refused, naming the file and the
    option, when it is missing, larger than `limit` bytes or not UTF-8."""
    shown = str(path)
    if not path.is_file():
        raise BenchledgerError(Problem(file=shown, field=option, message=f"no such file; give {kind}"))
    if path.stat().st_size > limit:
        raise BenchledgerError(Problem(file=shown, field=option, message=f"is larger than {limit:,} bytes"))
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        message = f"is not UTF-8 (byte {err.start}); save it as UTF-8"
        raise BenchledgerError(Problem(file=shown, field=option, message=message)) from None


def load_prompts(path: str | None) -> tuple[Any, ...]:
    """JSONL prompts: each line a string, a list of messages, or {"prompt"|"messages": ...}."""
    if path is None:
        return BUILTIN_PROMPTS
    text = read_input(Path(path), option="--prompts", limit=MAX_PROMPTS_BYTES, kind="a JSONL file of prompts")
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError) as err:
            reason = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deep"
            raise BenchledgerError(
                Problem(
                    file=path,
                    line=number,
                    message=f"not JSON ({reason}); write one JSON string or message list per line",
                )
            ) from None
        if isinstance(item, dict):
            item = item.get("messages", item.get("prompt"))
        if not isinstance(item, str | list) or not item:
            raise BenchledgerError(
                Problem(file=path, line=number, message="expected a prompt string or a list of chat messages")
            )
        out.append(item)
    if not out:
        raise BenchledgerError(Problem(file=path, message="holds no prompts"))
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


def prepared_requests(target: Target, origin: Origin) -> list[bytes]:
    """Every distinct request's bytes, built before the trial (one per prompt)."""
    out = []
    for prompt in target.prompts:
        path, body = request_body(target, prompt)
        out.append(origin.post(path, json.dumps(body).encode()))
    return out


async def one_request(
    pool: Pool, target: Target, index: int, data: bytes, scheduled: float, trial_start: float
) -> RequestResult:
    """Send one prepared streaming request due at `scheduled` and measure it from then, within
    `target.timeout` seconds for the whole request (an endless or slow-drip stream is cut
    there) and `sse.stream_cap` bytes (a huge one is cut there); failures are recorded, never
    raised. Runs in the caller's task: nothing is scheduled between the call and the request's
    bytes leaving."""
    result = RequestResult(index, scheduled - trial_start)
    cap = stream_cap(target.max_tokens)
    parser = StreamParser(scheduled, lambda chunk: _absorb(result, chunk), _content, cap)
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
                sent, done, ended = await conn.request(data, parser)
                result.send_delay_s = sent - scheduled
                status, text, failure = await done
            finally:
                timer.cancel()
            if failure is None:
                await conn.drain(ended, DRAIN_S)
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
