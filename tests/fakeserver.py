"""An in-process OpenAI-compatible server that streams like llama.cpp or vLLM,
with injectable faults. Standard library only; binds 127.0.0.1 on a free port."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    flavour: str = "llama"  # llama: timings on the last chunk; vllm: usage chunk and /metrics counters
    chunks: int = 8  # content chunks per response
    tokens_per_chunk: int = 1  # >1 imitates speculative decoding
    draft_n: int | None = None  # llama.cpp: draft fields only when drafting
    draft_accepted: int = 0
    delay_s: float = 0.0  # between chunks
    first_delay_s: float = 0.0  # slow first token
    fail_requests: set[int] = field(default_factory=set)  # 1-based request numbers answered with HTTP 500
    drop_requests: set[int] = field(default_factory=set)  # connection closed mid-stream
    malformed_every: int = 0  # insert a malformed data line every n-th request
    include_usage: bool = False  # llama flavour: also send usage


class FakeServer:
    def __init__(self, behaviour: Behaviour | None = None) -> None:
        self.behaviour = behaviour or Behaviour()
        self.count = 0
        self.drafted_total = 0
        self.accepted_total = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                b = server.behaviour
                if self.path == "/v1/models":
                    self._json(200, {"object": "list", "data": [{"id": "fake-model", "owned_by": "test"}]})
                elif self.path == "/props" and b.flavour == "llama":
                    self._json(
                        200,
                        {
                            "build_info": "b9999-fake",
                            "model_path": "/models/fake.gguf",
                            "total_slots": 4,
                            "default_generation_settings": {"n_ctx": 1024, "params": {"speculative.n_max": 4}},
                        },
                    )
                elif self.path == "/slots" and b.flavour == "llama":
                    self._json(200, [{"id": i, "n_ctx": 1024, "speculative": b.draft_n is not None} for i in range(4)])
                elif self.path == "/version" and b.flavour == "vllm":
                    self._json(200, {"version": "0.0.0-fake"})
                elif self.path == "/metrics" and b.flavour == "vllm":
                    text = (
                        f"# TYPE vllm:spec_decode_num_draft_tokens_total counter\n"
                        f'vllm:spec_decode_num_draft_tokens_total{{model_name="fake-model"}} {server.drafted_total}.0\n'
                        f'vllm:spec_decode_num_accepted_tokens_total{{model_name="fake-model"}} '
                        f"{server.accepted_total}.0\n"
                    ).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(text)))
                    self.end_headers()
                    self.wfile.write(text)
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                b = server.behaviour
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with server.lock:
                    server.count += 1
                    number = server.count
                if number in b.fail_requests:
                    self._json(500, {"error": {"message": "injected failure"}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()

                def send(payload: str) -> None:
                    self.wfile.write(f"data: {payload}\n\n".encode())
                    self.wfile.flush()

                time.sleep(b.first_delay_s)
                for i in range(b.chunks):
                    if i and b.delay_s:
                        time.sleep(b.delay_s)
                    if number in b.drop_requests and i == b.chunks // 2:
                        self.close_connection = True
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    if b.malformed_every and number % b.malformed_every == 0 and i == 1:
                        send("{not json")
                    send(
                        json.dumps(
                            {
                                "object": "chat.completion.chunk",
                                "choices": [{"index": 0, "delta": {"content": "tok " * b.tokens_per_chunk}}],
                            }
                        )
                    )
                tokens = b.chunks * b.tokens_per_chunk
                last: dict[str, Any] = {
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
                }
                if b.flavour == "llama":
                    timings: dict[str, Any] = {"predicted_n": tokens, "predicted_per_second": 100.0}
                    if b.draft_n is not None:
                        timings |= {"draft_n": b.draft_n, "draft_n_accepted": b.draft_accepted}
                    last["timings"] = timings
                    if b.include_usage:
                        last["usage"] = {"completion_tokens": tokens, "prompt_tokens": 5}
                    send(json.dumps(last))
                else:
                    send(json.dumps(last))
                    send(
                        json.dumps(
                            {
                                "object": "chat.completion.chunk",
                                "choices": [],
                                "usage": {"completion_tokens": tokens, "prompt_tokens": 5},
                            }
                        )
                    )
                    with server.lock:
                        server.drafted_total += b.draft_n or 0
                        server.accepted_total += b.draft_accepted
                send("[DONE]")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
