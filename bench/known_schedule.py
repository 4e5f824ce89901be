"""A fake OpenAI-compatible streaming server whose schedule is known exactly.

Every POST to /v1/chat/completions or /v1/completions is answered, once its body has been
read, with the first content token `ttft_ms` later and then one token every `itl_ms`, `tokens`
tokens in all (fewer when the request's max_tokens asks for fewer), then a usage chunk and
`data: [DONE]`. HTTP/1.1 keep-alive with chunked transfer encoding, like uvicorn behind vLLM.
The server measures its own lateness (when each token was written against when it was due)
and serves it at GET /stats (GET /stats?reset=1 also clears it): a client is judged against
the schedule only while the server keeps it.

`stall_after` / `stall_s` freeze the whole server (a blocked event loop, as in a long GC
pause) for `stall_s` seconds once it has read its `stall_after`-th request.

    python bench/known_schedule.py --port 8090 --ttft-ms 50 --itl-ms 20 --tokens 64

In tests and benchmarks, `KnownScheduleServer` starts it in its own process (so it never
shares the client's interpreter lock) on a free port of 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

CHUNK = json.dumps(
    {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "tok "}}]},
    separators=(",", ":"),
).encode()


@dataclass(frozen=True)
class Schedule:
    ttft_ms: float = 50.0  # first token this long after the request was read
    itl_ms: float = 20.0  # then one token every itl_ms
    tokens: int = 64  # tokens per response (at most; a smaller max_tokens wins)
    stall_after: int = 0  # freeze the server after reading this many requests (0: never)
    stall_s: float = 0.0

    def args(self) -> list[str]:
        return [
            f"--ttft-ms={self.ttft_ms}",
            f"--itl-ms={self.itl_ms}",
            f"--tokens={self.tokens}",
            f"--stall-after={self.stall_after}",
            f"--stall-s={self.stall_s}",
        ]


def _chunk(payload: bytes) -> bytes:
    data = b"data: " + payload + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.lateness: list[float] = []
        self.requests = 0
        self.open = 0
        self.open_max = 0
        self.posting: set[int] = set()  # connections that carried a POST

    def report(self) -> dict[str, Any]:
        ms = [1000 * x for x in self.lateness]
        return {
            "requests": self.requests,
            "tokens": len(ms),
            "lateness_p50_ms": _quantile(ms, 0.5),
            "lateness_p99_ms": _quantile(ms, 0.99),
            "lateness_max_ms": max(ms, default=0.0),
            "streams_open_max": self.open_max,
            "connections": len(self.posting),
        }


class Server:
    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.stats = Stats()
        self.read = 0  # requests read since start (for the stall)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path = lines[0].split(" ")[:2]
        fields = dict((k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in lines[1:] if line))
        body = await reader.readexactly(int(fields.get("content-length", "0")))
        if method == "GET":
            return await self._get(path, writer)
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.read += 1
        if self.schedule.stall_after and self.read == self.schedule.stall_after:
            time.sleep(self.schedule.stall_s)  # the whole server freezes, as a paused process would
        try:
            asked = json.loads(body).get("max_tokens")
        except (ValueError, AttributeError):
            asked = None
        tokens = min(self.schedule.tokens, asked) if isinstance(asked, int) and asked > 0 else self.schedule.tokens
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            b"Cache-Control: no-cache\r\n\r\n"
        )
        self.stats.requests += 1
        self.stats.posting.add(id(writer))
        self.stats.open += 1
        self.stats.open_max = max(self.stats.open_max, self.stats.open)
        try:
            for k in range(tokens):
                due = start + (self.schedule.ttft_ms + k * self.schedule.itl_ms) / 1000
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                self.stats.lateness.append(max(0.0, loop.time() - due))
                writer.write(_chunk(CHUNK))
            usage = {"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": tokens}}
            writer.write(_chunk(json.dumps(usage).encode()) + _chunk(b"[DONE]") + b"0\r\n\r\n")
            await writer.drain()
        finally:
            self.stats.open -= 1
        return True

    async def _get(self, path: str, writer: asyncio.StreamWriter) -> bool:
        if path == "/v1/models":
            status, body = "200 OK", {"object": "list", "data": [{"id": "known-schedule"}]}
        elif path.startswith("/stats"):
            status, body = "200 OK", self.stats.report()
            if "reset=1" in path:
                self.stats.reset()
        else:
            status, body = "404 Not Found", {"error": "not found"}
        data = json.dumps(body).encode()
        head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        writer.write(head.encode() + data)
        await writer.drain()
        return True


async def serve(schedule: Schedule, port: int) -> None:
    server = Server(schedule)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", port, backlog=4096)
    print(listener.sockets[0].getsockname()[1], flush=True)
    async with listener:
        await listener.serve_forever()


class KnownScheduleServer:
    """The server in its own process on a free port: `with KnownScheduleServer(Schedule()) as s:`."""

    def __init__(self, schedule: Schedule | None = None) -> None:
        self.schedule = schedule or Schedule()
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> KnownScheduleServer:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--port=0", *self.schedule.args()], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            if self.process.stdout is not None:
                self.process.stdout.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self, reset: bool = False) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}/stats" + ("?reset=1" if reset else "")
        with urllib.request.urlopen(url, timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read())
            return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--ttft-ms", type=float, default=50.0)
    parser.add_argument("--itl-ms", type=float, default=20.0)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--stall-after", type=int, default=0)
    parser.add_argument("--stall-s", type=float, default=0.0)
    args = parser.parse_args()
    schedule = Schedule(args.ttft_ms, args.itl_ms, args.tokens, args.stall_after, args.stall_s)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(schedule, args.port))


if __name__ == "__main__":
    main()
