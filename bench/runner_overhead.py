"""How much does benchledger's client bookkeeping cost against a raw SSE reader?

Starts a local server (asyncio, 127.0.0.1, in its own process) that answers every request with a
pre-built stream of N content chunks as fast as the socket takes them, then
measures in one run, at concurrency 1, 16 and 64, the tokens per second seen
by benchledger's runner (`run_trial`) and by a minimal httpx reader that only
counts `data:` lines. Prints both and their ratio (target >= 0.9).

With the llama.cpp test bed built (python bench/engines/llama_cpp.py build), it
also compares, for the same requests at concurrency 1 against a real
llama-server, the runner's per-request decode rate, (output tokens - 1) /
(latency - TTFT), with the server's own timings.predicted_per_second, and
prints the median ratio.

    python bench/runner_overhead.py [--chunks 512] [--requests-per-worker 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from generator.runner import openai as oa

sys.path.insert(0, str(Path(__file__).parent / "engines"))
import llama_cpp as engine


def sse_body(chunks: int) -> bytes:
    piece = json.dumps({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "tok"}}]})
    last = json.dumps(
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
            "timings": {"predicted_n": chunks},
        }
    )
    return ("".join(f"data: {piece}\n\n" for _ in range(chunks)) + f"data: {last}\n\ndata: [DONE]\n\n").encode()


def serve(body: bytes, ready: Any, holder: Any) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (int(line.split(b":")[1]) for line in data.split(b"\r\n") if line.lower().startswith(b"content-length")), 0
        )
        if length:
            await reader.readexactly(length)
        writer.write(head + body)
        await writer.drain()
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
        holder.value = server.sockets[0].getsockname()[1]
        ready.set()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


async def raw_reader(url: str, concurrency: int, requests: int) -> float:
    """Tokens/s counted by a bare httpx stream reader (one token per content chunk)."""
    queue = list(range(requests))
    tokens = 0
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        start = time.perf_counter()

        async def worker() -> None:
            nonlocal tokens
            while queue:
                queue.pop()
                async with client.stream("POST", url, json={"stream": True}) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: {") and '"content"' in line:
                            tokens += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--requests-per-worker", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    # the server runs in its own process, so it does not share the client's interpreter lock
    ready, port = multiprocessing.Event(), multiprocessing.Value("i", 0)
    server = multiprocessing.Process(target=serve, args=(sse_body(args.chunks), ready, port), daemon=True)
    server.start()
    ready.wait()
    base = f"http://127.0.0.1:{port.value}/v1"
    target = oa.Target(base, "bench", "chat", args.chunks, 0.0, 60.0, ("hello",))
    print(f"{'concurrency':>11} {'benchledger tok/s':>18} {'raw reader tok/s':>17} {'ratio':>6}")
    for concurrency in (1, 16, 64):
        requests = concurrency * args.requests_per_worker
        ours, raw = [], []
        for _ in range(args.repeats):  # interleaved, best of repeats for each
            trial = asyncio.run(oa.run_trial(target, concurrency, requests))
            assert not any(r.error for r in trial.requests), trial.requests[0].error
            ours.append(trial.row()["tokens_per_second"])
            raw.append(asyncio.run(raw_reader(base + "/chat/completions", concurrency, requests)))
        print(f"{concurrency:>11} {max(ours):>18,.0f} {max(raw):>17,.0f} {max(ours) / max(raw):>6.2f}", flush=True)
    server.terminate()
    real_engine()


def real_engine(requests: int = 16, max_tokens: int = 128) -> None:
    """Runner-measured decode rate against llama-server's own, same requests, concurrency 1."""
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


if __name__ == "__main__":
    main()
