"""A lean HTTP/1.1 client for streaming POSTs, on asyncio's protocol layer.

Chosen by measurement against a server with a known schedule (bench/runner_overhead.py):
httpx and aiohttp add 15-25 ms to a 50 ms time to first token at one stream and cost
several times more CPU per token than the protocol below, which is what sets the numbers
from about a hundred streams. What it does, and nothing more:

- the request's bytes (head and body) are built before its send time and written with one
  `transport.write`, which on an idle socket hands them to the kernel at once (TCP_NODELAY);
  the send is timestamped when that write returns with nothing left buffered;
- every read is timestamped in `data_received`, before any parsing, and the decoded body is
  handed to a sink at once (no task switch per read);
- responses are framed by Content-Length, chunked transfer encoding or the connection's
  close; a keep-alive connection is put back in its pool once its response is complete;
- every size is bounded (head, chunk-size line, error body, bytes after the stream's end),
  so a hostile server can end a request with an error, never crash or flood the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from ..errors import BenchledgerError, Problem

MAX_HEAD = 64 * 1024
MAX_CHUNK_LINE = 1024
MAX_ERROR_BODY = 4096
MAX_AFTER_END = 64 * 1024
PATH_SAFE = "/%:@!$&'()*+,;=-._~"  # RFC 3986 path characters, and escapes already written

Sink = Callable[[bytes, float], bool]  # (decoded body bytes, arrival time) -> True once the stream is over


Response = asyncio.Future[tuple[int, str, str | None]]  # HTTP status, start of an error body, failure or None
Ended = asyncio.Future[None]


class WireError(Exception):
    """A request that failed at the HTTP level; the message is recorded as the request's error."""


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int
    prefix: str  # the base URL's path, e.g. /v1

    @classmethod
    def parse(cls, base_url: str) -> Origin:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BenchledgerError(
                Problem(file="--base-url", message=f"{base_url!r}: give an http:// or https:// URL ending in /v1")
            )
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise BenchledgerError(
                Problem(file="--base-url", message=f"{base_url!r}: the port is not a number")
            ) from None
        try:  # a request line and Host header are ASCII: a name as IDNA, a path percent-encoded
            host = parts.hostname.encode("idna").decode("ascii")
        except UnicodeError:
            raise BenchledgerError(
                Problem(file="--base-url", message=f"{base_url!r}: the host name {parts.hostname!r} is not valid")
            ) from None
        return cls(parts.scheme, host, port, quote(parts.path.rstrip("/"), safe=PATH_SAFE))

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    def post(self, path: str, body: bytes) -> bytes:
        """The whole request, head and body, ready to be written."""
        head = (
            f"POST {self.prefix}{path} HTTP/1.1\r\nHost: {self.authority}\r\nUser-Agent: benchledger\r\n"
            f"Accept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("ascii") + body


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one response at a time."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.used = False  # has carried a request (a reused connection may have been closed by the server)
        self._reset(None)

    def _reset(self, sink: Sink | None) -> None:
        self.sink = sink
        self.done: Response | None = None
        self.ended: Ended | None = None
        self.buffer = bytearray()
        self.state = "head"  # head | body | chunk-size | chunk-data | chunk-crlf | trailer | done
        self.framing = ""  # length | chunked | close
        self.remaining = 0
        self.status = 0
        self.keep_alive = True
        self.error_body = bytearray()
        self.stream_over = False  # the sink said the stream ended
        self.after_end = 0
        self.received = 0

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self.received += len(data)
        if self.done is None or self.state == "done":  # bytes nobody asked for: not reusable
            self._close()
            return
        try:
            self._parse(data, now)
        except WireError as err:
            self._fail(str(err))

    def eof_received(self) -> bool | None:
        self._lost("the server closed the connection")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._lost(f"connection lost ({exc})" if exc else "the server closed the connection")

    # requests
    async def request(self, data: bytes, sink: Sink) -> tuple[float, Response, Ended]:
        """Write the prepared request: the time its bytes left; the future of its response (HTTP
        status, the start of an error body, a failure message or None), set when `sink` says the
        stream is over or the response ends; and the future set when the response is complete or
        the connection closed (see `drain`). Once the response is complete the connection may
        carry another request: read nothing from it afterwards."""
        if self.transport is None or self.closed or self.transport.is_closing():
            raise WireError("connection closed before the request was sent")
        self._reset(sink)
        loop = asyncio.get_running_loop()
        done = self.done = loop.create_future()
        ended = self.ended = loop.create_future()
        self.used = True
        self.transport.write(data)
        sent = time.perf_counter()
        if self.transport.get_write_buffer_size():  # a large prompt: wait until the kernel has it all
            while self.transport.get_write_buffer_size() and not self.transport.is_closing():
                await asyncio.sleep(0)
            sent = time.perf_counter()
        return sent, done, ended

    def abort(self) -> None:
        self._close()

    def expire(self, message: str) -> None:
        """The request's deadline passed: close the connection, fail the request with `message`."""
        if self.done is not None and not self.done.done():
            self._fail(message)

    # parsing
    def _parse(self, data: bytes, now: float) -> None:
        if self.state == "head":
            self.buffer += data
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    raise WireError(f"the response head is longer than {MAX_HEAD:,} bytes")
                return
            self._head(bytes(self.buffer[:end]))
            rest = bytes(self.buffer[end + 4 :])
            self.buffer = bytearray()
            self.state = "chunk-size" if self.framing == "chunked" else "body"
            if self.framing == "length" and self.remaining == 0:
                self._complete()
                return
            data = rest
            if not data:
                return
        if self.framing == "chunked":
            self._chunked(data, now)
        elif self.framing == "length":
            take = data[: self.remaining]
            self.remaining -= len(take)
            self._body(take, now)
            if self.remaining == 0:
                self._complete()
        else:
            self._body(data, now)

    def _head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise WireError(f"not an HTTP/1.1 response: {lines[0][:80]!r}")
        self.status = int(parts[1])
        self.keep_alive = parts[0] != "HTTP/1.0"
        self.framing = "close"
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "transfer-encoding" and "chunked" in value:
                self.framing = "chunked"
            elif name == "content-length" and self.framing != "chunked":
                if not value.isdigit():
                    raise WireError(f"Content-Length {value[:40]!r} is not a number")
                self.framing, self.remaining = "length", int(value)
            elif name == "connection":
                self.keep_alive = "close" not in value and (self.keep_alive or "keep-alive" in value)
        if self.framing == "close":
            self.keep_alive = False

    def _chunked(self, data: bytes, now: float) -> None:
        self.buffer += data
        while self.buffer and self.state != "done":
            if self.state == "chunk-data":
                take = bytes(self.buffer[: self.remaining])
                del self.buffer[: len(take)]
                self.remaining -= len(take)
                if self.remaining == 0:
                    self.state = "chunk-crlf"
                self._body(take, now)
                continue
            end = self.buffer.find(b"\r\n")
            if end < 0:
                if len(self.buffer) > MAX_CHUNK_LINE:
                    raise WireError("a chunk-size line is too long; the response is not valid chunked encoding")
                return
            line = bytes(self.buffer[:end]).split(b";")[0].strip()
            del self.buffer[: end + 2]
            if self.state == "chunk-crlf":
                if line:
                    raise WireError("chunk data longer than its size; the response is not valid chunked encoding")
                self.state = "chunk-size"
            elif self.state == "trailer":
                if not line:
                    self._complete()
                    return
            else:
                try:
                    size = int(line, 16)
                except ValueError:
                    raise WireError(
                        f"bad chunk size {line[:20]!r}; the response is not valid chunked encoding"
                    ) from None
                self.state, self.remaining = ("trailer", 0) if size == 0 else ("chunk-data", size)

    def _body(self, data: bytes, now: float) -> None:
        if not data:
            return
        if self.status != 200:
            if len(self.error_body) < MAX_ERROR_BODY:
                self.error_body += data[: MAX_ERROR_BODY - len(self.error_body)]
            return
        if self.stream_over:
            self.after_end += len(data)
            if self.after_end > MAX_AFTER_END:
                self._close()
            return
        assert self.sink is not None
        if self.sink(data, now):
            self.stream_over = True
            self._resolve()

    def _complete(self) -> None:
        self.state = "done"
        if self.keep_alive and not self.closed:
            self.pool.release(self)
        else:
            self._close()
        self._resolve()
        self._end()

    def _end(self) -> None:
        if self.ended is not None and not self.ended.done():
            self.ended.set_result(None)

    async def drain(self, ended: Ended, timeout: float) -> None:
        """After the stream is over, wait up to `timeout` for the rest of the response (a chunked
        terminator comes just after `data: [DONE]`) so that the connection can carry the stream's
        next request; else close it. A connection per request instead would leave servers with
        a thread per connection (llama.cpp's) holding idle ones until their keep-alive ends."""
        if ended.done():
            return
        timer = asyncio.get_running_loop().call_later(timeout, lambda: None if ended.done() else self._close())
        try:
            await ended
        finally:
            timer.cancel()

    def _resolve(self, error: str | None = None) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_result((self.status, bytes(self.error_body).decode(errors="replace"), error))

    def _fail(self, message: str) -> None:
        self._close()
        self._resolve(message)

    def _lost(self, message: str) -> None:
        if self.state in ("done",) or self.done is None:
            self._close()
            return
        if self.state != "head" and self.framing == "close":
            self._complete()  # a body framed by the connection's close ends here
            return
        if self.stream_over:
            self._close()
            return
        self._fail(message if self.state == "head" else message + " mid-response")

    def _close(self) -> None:
        self._end()
        self.closed = True
        self.pool.forget(self)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class Pool:
    """Connections to one origin: opened ahead of a trial, reused while the server keeps them."""

    def __init__(self, origin: Origin, *, connect_timeout: float) -> None:
        self.origin = origin
        self.connect_timeout = connect_timeout
        self.idle: list[Connection] = []
        self.all: set[Connection] = set()
        self._ssl = ssl.create_default_context() if origin.scheme == "https" else None

    async def open(self) -> Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(self),
                    self.origin.host,
                    self.origin.port,
                    ssl=self._ssl,
                    server_hostname=self.origin.host if self._ssl else None,
                ),
                self.connect_timeout,
            )
        except TimeoutError:
            raise WireError(f"ConnectTimeout: no connection within {self.connect_timeout:g} s") from None
        except OSError as err:
            raise WireError(f"ConnectError: {err.strerror or err}") from None
        self.all.add(conn)
        return conn

    async def warm(self, count: int) -> None:
        """Open `count` connections before the trial starts (those that fail are opened later)."""
        opened = await asyncio.gather(*(self.open() for _ in range(count)), return_exceptions=True)
        self.idle.extend(c for c in opened if isinstance(c, Connection))

    def take(self) -> Connection | None:
        """An idle open connection, or None (then `open` one)."""
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
        return None

    def release(self, conn: Connection) -> None:
        if not conn.closed:
            self.idle.append(conn)

    def forget(self, conn: Connection) -> None:
        self.all.discard(conn)
        if conn in self.idle:
            self.idle.remove(conn)

    def close(self) -> None:
        for conn in list(self.all):
            conn.abort()
        self.idle.clear()
