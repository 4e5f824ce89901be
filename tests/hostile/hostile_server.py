"""A hostile OpenAI-compatible server on 127.0.0.1: endless or dripping streams, slow probes,
fields of the wrong type, impossible counts, huge and deeply nested bodies, and error bodies
written to break terminals and pages. Standard library only; every loop is bounded."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKUP = "[/bold red] <img src=https://evil.example/t.png> [phish](https://evil.example/login) ``` \x1b[31m"
CHUNK = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "tok "}}]}
LIMIT_S = 20  # no hostile answer lasts longer than this
PREFIX = "/caf%C3%A9"  # the path before /v1 in "unicode-path" mode (/café, percent-encoded)
HUGE = 256 * 1024 * 1024  # the Content-Length of a "huge-models" answer


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up on an endless stream is expected, not an error to print."""


class HostileServer:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.posts = 0
        self.paths: list[str] = []  # the path of every request, as received
        self.sent = 0  # body bytes written in "huge-*" modes
        self.scrapes = 0  # /metrics answers
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _drip(self, head: bytes, unit: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(head)
                end = time.monotonic() + LIMIT_S
                while not server.stop.is_set() and time.monotonic() < end:
                    try:
                        self.wfile.write(unit)
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(0.2)

            def _huge(self, unit: bytes) -> None:
                """HUGE bytes announced, written as fast as the client takes them."""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(HUGE))
                self.end_headers()
                block = unit * (1024 * 1024 // len(unit))
                while server.sent < HUGE and not server.stop.is_set():
                    try:
                        self.wfile.write(block)
                    except OSError:
                        return
                    server.sent += len(block)

            def _metrics(self) -> None:
                """Draft counters that restart between scrapes in "metrics-reset" mode (high, then low)."""
                server.scrapes += 1
                drafted, accepted = (1000, 800) if server.scrapes % 2 else (30, 20)
                body = f"vllm:spec_decode_num_draft_tokens_total {drafted}\n"
                body += f"vllm:spec_decode_num_accepted_tokens_total {accepted}\n"
                self._send(200, body.encode(), "text/plain")

            def do_GET(self) -> None:
                mode = server.mode
                server.paths.append(self.path)
                path = self.path.removeprefix(PREFIX) if mode == "unicode-path" else self.path
                if path == "/v1/models" and mode == "drip-models":
                    self._drip(b'{"data": [{"id": "hostile"}], "pad": "', b"x")
                elif path == "/v1/models" and mode == "huge-models":
                    self._huge(b" ")
                elif path == "/metrics" and mode == "drip-metrics":
                    self._drip(b"vllm:spec_decode_num_draft_tokens_total 1", b"0")
                elif path == "/metrics" and mode == "metrics-reset":
                    self._metrics()
                elif path == "/v1/models":
                    data: Any = [{"id": "hostile"}]
                    if mode == "bad-fields":
                        data = [{"id": {"nested": [1, 2]}}, "x", {"id": "hostile", "owned_by": ["a"] * 1000}]
                    self._send(200, json.dumps({"data": data}).encode())
                elif self.path == "/props":
                    if mode == "slow-props":
                        self._drip(b'{"build_info": "', b"x")
                    elif mode == "huge-props":
                        self._send(200, b'{"build_info": "' + b"x" * (8 * 1024 * 1024) + b'"}')
                    elif mode == "deep-props":
                        self._send(200, b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
                    elif mode == "bad-fields":
                        body = {
                            "build_info": {"a": {"b": {"c": {"d": {"e": 1}}}}},
                            "total_slots": "many",
                            "model_path": 12,
                            "default_generation_settings": ["not", "a", "mapping"],
                        }
                        self._send(200, json.dumps(body).encode())
                    else:
                        self._send(404, b"{}")
                elif self.path == "/slots" and server.mode == "bad-fields":
                    self._send(200, json.dumps({"not": "a list"}).encode())
                elif self.path == "/metrics" and server.mode == "bad-fields":
                    body = "vllm:spec_decode_num_draft_tokens_total -5\nvllm:spec_decode_num_accepted_tokens_total 9\n"
                    self._send(200, body.encode(), "text/plain")
                else:
                    self._send(404, b"{}")

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                mode = server.mode
                server.posts += 1
                server.paths.append(self.path)
                if mode == "markup-error" or (mode == "markup-after-two" and server.posts > 2):
                    self._send(500, MARKUP.encode())
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()

                def send(payload: str) -> None:
                    self.wfile.write(f"data: {payload}\n\n".encode())
                    self.wfile.flush()

                try:
                    if mode in ("endless", "drip"):
                        end = time.monotonic() + LIMIT_S
                        while not server.stop.is_set() and time.monotonic() < end:
                            send(json.dumps(CHUNK))
                            time.sleep(0.01 if mode == "endless" else 0.5)
                        return
                    if mode == "huge-stream":  # 64 KiB content chunks as fast as they are taken
                        line = f"data: {json.dumps(CHUNK).replace('tok ', 'x' * 65536)}\n\n".encode()
                        while not server.stop.is_set() and server.sent < HUGE:
                            self.wfile.write(line)
                            server.sent += len(line)
                        return
                    for _ in range(4):
                        send(json.dumps(CHUNK))
                    if mode == "bad-fields":
                        send(json.dumps({"choices": "nope", "usage": {"completion_tokens": -5}}))
                        send(json.dumps({"choices": [], "usage": {"completion_tokens": "lots"}}))
                        send(
                            json.dumps({"choices": [{"delta": None}], "timings": {"draft_n": 3, "draft_n_accepted": 9}})
                        )
                        send(json.dumps({"timings": {"predicted_n": 1e30, "predicted_per_second": "fast"}}))
                        send("[1, 2, 3]")
                    send("[DONE]")
                except OSError:
                    return

        self.httpd = _Quiet(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        prefix = "/café" if self.mode == "unicode-path" else ""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{prefix}/v1"

    def __enter__(self) -> HostileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
