"""The runner's HTTP client against answers no real server sends: each request ends with an
error naming what was wrong (or succeeds, where the stream itself was whole), within its
deadline, and nothing floods memory or raises out of the trial."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from generator.runner import openai as oa

CHUNK = b'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n'
DONE = b"data: [DONE]\n\n"


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)


ANSWERS = {
    "not-http": (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP/1.1 response"),
    "bad-chunk-size": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
    "bad-length": (b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n", "Content-Length 'lots' is not a number"),
    "endless-head": (b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 70_000, "the response head is longer"),
    "chunk-overrun": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcdef\r\n",
        "chunk data longer than its size",
    ),
    "error-status": (b"HTTP/1.1 503 Busy\r\nContent-Length: 10\r\n\r\n\x1b[31mfull!", "HTTP 503: \x1b[31mfull!"),
    "cut-mid-stream": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(CHUNK),
        "closed the connection mid-response",
    ),
}


class RawServer:
    """Answers every request on 127.0.0.1 with fixed bytes, then (optionally) junk, then closes."""

    def __init__(self, answer: bytes, junk: int = 0, hold: float = 0.3) -> None:
        self.answer, self.junk, self.hold = answer, junk, hold
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(5)
                conn.recv(65536)
                conn.sendall(self.answer)
                end = time.monotonic() + 3
                while self.junk and time.monotonic() < end and not self.stop.is_set():
                    conn.sendall(b"x" * 16384)
                self.stop.wait(self.hold)
            except OSError:
                return

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(2)
        self.sock.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"


def trial(server: RawServer, timeout: float = 3.0) -> oa.TrialResult:
    target = oa.Target(server.base_url, "m", "chat", 8, 0.0, timeout, ("hi",))
    return asyncio.run(oa.run_trial(target, 2, 2))


@pytest.fixture(params=sorted(ANSWERS))
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def test_a_broken_answer_is_a_request_error_naming_it(mode: str) -> None:
    answer, expected = ANSWERS[mode]
    with RawServer(answer) as server:
        start = time.monotonic()
        result = trial(server)
    assert time.monotonic() - start < 10
    assert [r.request for r in result.requests] == [1, 2]
    for r in result.requests:
        assert expected in r.error, r.error
        assert r.ttft_s is None or mode == "cut-mid-stream"
    assert result.row()["errors"] == 2.0


def test_bytes_after_the_end_of_the_stream_are_bounded_and_ignored() -> None:
    whole = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + CHUNK * 3 + DONE
    with RawServer(whole, junk=1) as server:
        result = trial(server)
    assert [r.error for r in result.requests] == ["", ""]
    assert [r.output_tokens for r in result.requests] == [3, 3]


def test_bytes_after_a_complete_response_close_the_connection() -> None:
    whole = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(CHUNK, DONE) + b"0\r\n\r\n"
    with RawServer(whole, junk=1) as server:
        result = trial(server)
    assert [r.error for r in result.requests] == ["", ""] and [r.output_tokens for r in result.requests] == [1, 1]


def test_a_silent_server_is_cut_at_the_deadline() -> None:
    with RawServer(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", hold=4) as server:
        start = time.monotonic()
        result = trial(server, timeout=1.0)
        elapsed = time.monotonic() - start
    assert elapsed < 8  # the /metrics probe and the requests, each cut at its deadline
    assert all("no complete answer within 1 s" in r.error for r in result.requests)
