"""How close does each client come to a server whose schedule is known exactly?

Starts bench/known_schedule.py in its own process (first token 50 ms after the request is
read, then one token every 20 ms, 64 tokens, its own lateness measured), then, A/B-alternated
in one run so every client sees the same machine load, measures at each stream count:

- truth: the schedule (TTFT 50 ms; tokens/s = streams x tokens / (ttft + (tokens - 1) x itl));
- raw: a bare asyncio socket reader (prepared request bytes, one write, a count of `data:`
  lines), the floor a Python client can reach;
- aiohttp: what `vllm bench serve` uses (one ClientSession, a connector of `streams` slots);
- httpx: an AsyncClient whose pool scales with the streams (max_connections = keep-alive = streams);
- benchledger: the runner's trial function (`generator.runner.openai.run_trial`), with
  `--workers N` worker processes (CPU counted with theirs).

It prints TTFT p50 / p99, tokens/s and its error against the truth, client CPU per token, and
the server's lateness p99 beside every row (a row is only as good as the server kept time).
aiohttp is skipped when it is not installed. With `--real-engine` and the llama.cpp test bed
built (python bench/engines/llama_cpp.py build), it also compares, at concurrency 1 against a
real llama-server, the runner's per-request decode rate with the server's own
timings.predicted_per_second.

    python bench/runner_overhead.py                      # 1, 16, 64 streams, 3 repeats
    python bench/runner_overhead.py --streams 1,16,64,128,256 --repeats 1 --workers 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parents[1]))
from bench.known_schedule import KnownScheduleServer, Schedule
from generator.runner import openai as oa
from generator.runner.selfcheck import quantile

BODY = {"model": "m", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "hello"}]}


@dataclass
class Measured:
    ttfts: list[float]
    tokens: int
    wall: float
    cpu: float
    lag_p99: float | None = None


Client = Callable[[str, int, int], Coroutine[None, None, Measured]]


async def _streams(concurrency: int, per_stream: int, one: Callable[[], Awaitable[tuple[float, int]]]) -> Measured:
    ttfts: list[float] = []
    tokens = 0
    cpu = time.process_time()
    start = time.perf_counter()

    async def stream() -> None:
        nonlocal tokens
        for _ in range(per_stream):
            ttft, count = await one()
            ttfts.append(ttft)
            tokens += count

    await asyncio.gather(*(stream() for _ in range(concurrency)))
    return Measured(ttfts, tokens, time.perf_counter() - start, time.process_time() - cpu)


async def raw_client(base_url: str, concurrency: int, per_stream: int) -> Measured:
    """A bare asyncio reader: connections opened ahead, the request written in one piece."""
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    body = json.dumps(BODY).encode()
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    idle = [await asyncio.open_connection(host, int(port)) for _ in range(concurrency)]

    async def one() -> tuple[float, int]:
        reader, writer = idle.pop()
        sent = time.perf_counter()
        writer.write(request)
        first, count, tail = 0.0, 0, b""
        while True:
            data = await reader.read(65536)
            if not data:
                raise ConnectionError("closed")
            found = data.count(b'"content"')
            if found and not first:
                first = time.perf_counter() - sent
            count += found
            tail = (tail + data)[-16:]
            if tail.endswith(b"0\r\n\r\n") and b"[DONE]" in tail + data[-64:]:
                break
        idle.append((reader, writer))
        return first, count

    try:
        return await _streams(concurrency, per_stream, one)
    finally:
        for _, writer in idle:
            writer.close()


async def _first_and_count(chunks: AsyncIterator[bytes], start: float) -> tuple[float, int]:
    """Seconds from `start` to the first chunk carrying content, and how many contents came:
    what the library clients read (they parse nothing, as the raw reader does not)."""
    first, count = 0.0, 0
    async for data in chunks:
        found = data.count(b'"content"')
        if found and not first:
            first = time.perf_counter() - start
        count += found
    return first, count


async def aiohttp_client(base_url: str, concurrency: int, per_stream: int) -> Measured:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> tuple[float, int]:
            start = time.perf_counter()
            async with session.post(base_url + "/chat/completions", json=BODY) as response:
                return await _first_and_count(response.content.iter_any(), start)

        return await _streams(concurrency, per_stream, one)


async def httpx_client(base_url: str, concurrency: int, per_stream: int) -> Measured:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def one() -> tuple[float, int]:
            start = time.perf_counter()
            async with client.stream("POST", base_url + "/chat/completions", json=BODY) as response:
                return await _first_and_count(response.aiter_bytes(), start)

        return await _streams(concurrency, per_stream, one)


WORKERS = 1


def _cpu() -> float:
    """This process's CPU time and that of its finished children (worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


async def benchledger_client(base_url: str, concurrency: int, per_stream: int) -> Measured:
    target = oa.Target(base_url, "m", "chat", BODY["max_tokens"], 0.0, 60.0, ("hello",))  # type: ignore[arg-type]
    cpu = _cpu()
    load = oa.Load(concurrency, workers=min(WORKERS, concurrency))
    trial = await oa.run_trial(target, concurrency, concurrency * per_stream, load=load)
    cpu = _cpu() - cpu
    errors = [r.error for r in trial.requests if r.error]
    assert not errors, errors[0]
    ttfts = [r.ttft_s for r in trial.requests if r.ttft_s is not None]
    tokens = sum(r.output_tokens or 0 for r in trial.requests)
    return Measured(ttfts, tokens, trial.wall_s, cpu, trial.client.lag_p99_s if trial.client else None)


def clients() -> dict[str, Client]:
    found: dict[str, Client] = {"raw": raw_client}
    try:
        import aiohttp  # noqa: F401

        found["aiohttp"] = aiohttp_client
    except ImportError:
        print("aiohttp is not installed: its column is skipped (pip install aiohttp)", file=sys.stderr)
    return found | {"httpx": httpx_client, "benchledger": benchledger_client}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1,16,64", help="stream counts, e.g. 1,16,64,128,256,512,1024")
    parser.add_argument("--requests-per-stream", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ttft-ms", type=float, default=50.0)
    parser.add_argument("--itl-ms", type=float, default=20.0)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1, help="benchledger's worker processes")
    parser.add_argument(
        "--real-engine", action="store_true", help="also compare decode rates with a real llama-server (test bed)"
    )
    args = parser.parse_args()
    global WORKERS
    WORKERS = args.workers
    BODY["max_tokens"] = args.tokens
    schedule = Schedule(args.ttft_ms, args.itl_ms, args.tokens)
    per_request = (args.ttft_ms + (args.tokens - 1) * args.itl_ms) / 1000
    runners = clients()
    names = list(runners)
    print(
        f"schedule: TTFT {args.ttft_ms:g} ms, one token every {args.itl_ms:g} ms, {args.tokens} tokens; "
        f"{args.requests_per_stream} requests per stream per trial; medians of {args.repeats} A/B-alternated repeats"
    )
    header = [
        "streams",
        "truth TTFT / tok/s",
        *(f"{n}: TTFT p50 / p99 / tok/s (err) / us CPU per token" for n in names),
    ]
    print("| " + " | ".join(header) + " | server lateness p99 |")
    print("|" + " --- |" * (len(header) + 1))
    with KnownScheduleServer(schedule) as server:
        for streams in [int(s) for s in args.streams.split(",")]:
            truth = streams * args.tokens / per_request
            got: dict[str, list[Measured]] = {n: [] for n in names}
            lateness = []
            for _ in range(args.repeats):
                for name, client in runners.items():
                    server.stats(reset=True)
                    got[name].append(asyncio.run(client(server.base_url, streams, args.requests_per_stream)))
                    lateness.append(server.stats()["lateness_p99_ms"])
            cells = [str(streams), f"{args.ttft_ms:g} ms / {truth:,.0f}"]
            for name in names:
                cells.append(_cell(got[name], truth))
            print("| " + " | ".join(cells) + f" | {max(lateness):.1f} ms |", flush=True)
    if args.real_engine:
        real_engine()


def real_engine(requests: int = 16, max_tokens: int = 128) -> None:
    """Runner-measured decode rate against llama-server's own, same requests, concurrency 1."""
    sys.path.insert(0, str(Path(__file__).parent / "engines"))
    import llama_cpp as engine

    bin_dir = engine.cache_root() / "build" / "bin"
    if not (bin_dir / "llama-server").is_file():
        print("\nreal engine: skipped (python bench/engines/llama_cpp.py build)")
        return
    target, _ = engine.models(engine.cache_root() / "models", None)
    with engine.LlamaServer(bin_dir, target) as server:
        t = oa.Target(server.base_url, "target", "chat", max_tokens, 0.0, 120.0, oa.BUILTIN_PROMPTS)
        trial = asyncio.run(oa.run_trial(t, 1, requests))
    ratios, ours, theirs = [], [], []
    for r in trial.requests:
        if r.error or not r.server_decode_rate or not r.output_tokens or r.output_tokens < 2:
            continue
        assert r.latency_s is not None and r.ttft_s is not None
        rate = (r.output_tokens - 1) / (r.latency_s - r.ttft_s)
        ours.append(rate)
        theirs.append(r.server_decode_rate)
        ratios.append(rate / r.server_decode_rate)
    print(f"\nreal engine (llama-server, concurrency 1, {len(ratios)} requests of {max_tokens} tokens):")
    print(
        f"  runner decode rate median {statistics.median(ours):,.0f} tok/s, server timings median "
        f"{statistics.median(theirs):,.0f} tok/s, median ratio {statistics.median(ratios):.3f}"
    )


def _cell(runs: list[Measured], truth: float) -> str:
    p50 = statistics.median(quantile(sorted(m.ttfts), 0.5) for m in runs) * 1000
    p99 = statistics.median(quantile(sorted(m.ttfts), 0.99) for m in runs) * 1000
    rate = statistics.median(m.tokens / m.wall for m in runs)
    cpu = statistics.median(m.cpu / m.tokens for m in runs) * 1e6
    return f"{p50:.1f} / {p99:.1f} ms / {rate:,.0f} ({rate / truth - 1:+.1%}) / {cpu:.0f}"


if __name__ == "__main__":
    main()
