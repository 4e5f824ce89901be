"""Incremental parsing of an OpenAI-style server-sent event stream, one network read at a time.

A read whose complete lines are all plain content chunks (the bulk of a stream) is
counted with a few scans of its bytes and no JSON parsing; any other read (the first
chunk, usage, llama.cpp timings, errors, [DONE], malformed lines) is parsed line by
line. Time is taken once per read: chunks that arrive in one read arrive together,
so TTFT is the arrival of the first read carrying content, and the recorded gaps are
between reads that carry content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

# Bytes that make a line more than a plain content chunk (found with bytes.find, which is
# much faster than a regular expression over a large read).
SPECIAL = (
    b'"usage"',
    b'"timings"',
    b'"error"',
    b"reasoning_content",
    b"[DONE]",
    b'"content":""',
    b'"content": ""',
    b'"content":null',
    b'"content": null',
)


MAX_LINE = 16 * 1024 * 1024
STREAM_BYTES = 1024 * 1024  # every streamed answer may carry this much...
STREAM_BYTES_PER_TOKEN = 4 * 1024  # ...and this much per token asked for (--max-tokens): ten real chunks' worth


def stream_cap(max_tokens: int) -> int:
    """The most bytes a streamed answer to a request for `max_tokens` tokens may carry."""
    return STREAM_BYTES + STREAM_BYTES_PER_TOKEN * max_tokens


SPECIAL_RE = re.compile(b"|".join(re.escape(marker) for marker in SPECIAL))


def _first_special(region: bytes) -> int:
    """Offset of the first special marker in the region, or -1: one regular-expression scan
    for a small read, a fast substring search per marker for a large one."""
    if len(region) < 8192:
        match = SPECIAL_RE.search(region)
        return match.start() if match else -1
    found = [i for i in (region.find(marker) for marker in SPECIAL) if i >= 0]
    return min(found) if found else -1


class StreamParser:
    def __init__(
        self,
        start: float,
        absorb: Callable[[dict[str, Any]], None],
        content: Callable[[dict[str, Any]], str],
        cap: int | None = None,
    ) -> None:
        self.start = start
        self.cap = cap  # the most bytes the stream may carry (stream_cap); None: no cap
        self.received = 0
        self.last = start
        self.absorb = absorb
        self.has_content = content
        self.buffer = b""
        self.chunks = 0  # chunks that carried content
        self.ttft_s: float | None = None
        self.gaps: list[float] = []
        self.malformed = 0
        self.finished = False  # data: [DONE] was seen
        self.error = ""
        self.end: float | None = None  # arrival of the read that ended the stream

    def __call__(self, data: bytes, now: float) -> bool:
        """`feed`, stamping the arrival of the read that ends the stream."""
        if self.feed(data, now):
            self.end = now
            return True
        return False

    def feed(self, data: bytes, now: float) -> bool:
        """Take one network read; True once the stream is over ([DONE], a server error, or a
        line longer than MAX_LINE bytes, which no real chunk is, or more than `cap` bytes in all)."""
        self.received += len(data)
        if self.cap is not None and self.received > self.cap:
            self.error = (
                f"the server's answer passed {self.cap:,} bytes (1 MiB + 4 KiB per --max-tokens token); stopped reading"
            )
            return True
        self.buffer += data
        cut = self.buffer.rfind(b"\n")
        if cut < 0:
            if len(self.buffer) > MAX_LINE:
                self.error = f"the server sent a line longer than {MAX_LINE:,} bytes; stopped reading"
                return True
            return False
        region, self.buffer = self.buffer[: cut + 1], self.buffer[cut + 1 :]
        while region:
            special = _first_special(region)
            if special < 0:
                return self._block(region, now)
            begin = region.rfind(b"\n", 0, special) + 1
            end = region.find(b"\n", special) + 1 or len(region)
            if self._block(region[:begin], now) or self._lines(region[begin:end], now):
                return True
            region = region[end:]
        return False

    def _block(self, block: bytes, now: float) -> bool:
        """Lines without special markers: counted in bulk when every one carries content."""
        plain = block.count(b"data: {")
        if plain and plain == block.count(b"data:") and plain == block.count(b'"content"'):
            self._content(plain, now)
            return False
        return self._lines(block, now) if block.strip() else False

    def _lines(self, region: bytes, now: float) -> bool:
        for raw in region.split(b"\n"):
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                self.finished = True
                return True
            try:
                chunk = json.loads(payload)
            except ValueError:
                self.malformed += 1
                continue
            if not isinstance(chunk, dict):
                self.malformed += 1
                continue
            if "error" in chunk:
                self.error = f"server error: {json.dumps(chunk['error'])[:200]}"
                return True
            self.absorb(chunk)
            if self.has_content(chunk):
                self._content(1, now)
        return False

    def _content(self, count: int, now: float) -> None:
        if self.ttft_s is None:
            self.ttft_s = now - self.start
        else:
            self.gaps.append(now - self.last)
        self.chunks += count
        self.last = now
