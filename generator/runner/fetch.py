"""Bounded GETs of a server's self-description (/models, /props, /slots, /version, /metrics):
a whole-request deadline, a size cap, and JSON that cannot crash the runner.

httpx's timeout bounds each network read, not the whole request: a server that drips one
byte a second would hold a plain `httpx.get` forever. These helpers read the body in
chunks and give up at the deadline or the size cap.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

DEADLINE_S = 10.0
MAX_BYTES = 4 * 1024 * 1024


def fetch(url: str, deadline_s: float = DEADLINE_S, max_bytes: int = MAX_BYTES) -> tuple[int, bytes] | None:
    """(status, body) of a GET finished within `deadline_s` and `max_bytes`; None otherwise."""
    end = time.monotonic() + deadline_s
    try:
        with httpx.stream("GET", url, timeout=httpx.Timeout(min(deadline_s, 10.0))) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes or time.monotonic() > end:
                    return None
            return response.status_code, bytes(body)
    except (httpx.HTTPError, OSError, ValueError):
        return None


async def fetch_async(client: httpx.AsyncClient, url: str, deadline_s: float = DEADLINE_S) -> tuple[int, bytes] | None:
    """The same, on the trial's client."""
    end = time.monotonic() + deadline_s
    try:
        async with client.stream("GET", url, timeout=min(deadline_s, 10.0)) as response:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BYTES or time.monotonic() > end:
                    return None
            return response.status_code, bytes(body)
    except (httpx.HTTPError, OSError, ValueError):
        return None


def parse_json(body: bytes) -> Any:
    """JSON, or None for anything that is not (including nesting too deep to parse)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def get_json(url: str, deadline_s: float = DEADLINE_S) -> Any:
    """The JSON body of a 200 answer, or None."""
    found = fetch(url, deadline_s)
    return parse_json(found[1]) if found is not None and found[0] == 200 else None


def plain(value: Any, depth: int = 3, text: int = 500) -> Any:
    """A server value safe to record: scalars (long text cut), lists and mappings to `depth`
    levels; anything deeper or stranger becomes a short description."""
    if value is None or isinstance(value, bool | int | float):
        return value if not isinstance(value, float) or (value == value and abs(value) != float("inf")) else str(value)
    if isinstance(value, str):
        return value if len(value) <= text else value[:text] + "…"
    if depth <= 0:
        return f"({type(value).__name__} nested too deep, not recorded)"
    if isinstance(value, list):
        return [plain(v, depth - 1, text) for v in value[:64]]
    if isinstance(value, dict):
        return {str(k)[:100]: plain(v, depth - 1, text) for k, v in list(value.items())[:64]}
    return str(value)[:text]
