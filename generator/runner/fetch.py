"""Bounded GETs of a server's self-description (/models, /props, /slots, /version, /metrics):
a deadline on the whole answer, a size cap, and JSON that cannot crash the runner.

httpx's timeout bounds each network read, not the whole request: a server that drips one
byte a second would hold a plain `httpx.get` forever, and `httpx.get` reads an answer whole,
however large. These helpers read the raw body in chunks under `asyncio.timeout` (which
cancels a read that is waiting) and stop at the size cap. The caller gives the deadline
(`run openai`: --timeout, at most PROBE_DEADLINE_S); nothing is decompressed
(`Accept-Encoding: identity`), so a small compressed answer cannot grow past the cap.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

PROBE_DEADLINE_S = 30.0  # the longest any probe waits, whatever --timeout says
MAX_BYTES = 4 * 1024 * 1024


class NoAnswer(Exception):
    """A GET that gave no complete answer within its deadline and size cap; the message says why."""


def unreachable(err: httpx.HTTPError) -> str:
    """Why the server could not be reached, and the fix: an untrusted certificate is not a
    server that is down."""
    if "CERTIFICATE_VERIFY_FAILED" in str(err):
        return (
            f"the server's TLS certificate is not trusted ({err}); if it is yours, point SSL_CERT_FILE "
            "at the certificate of the authority that signed it (or the server's own, if self-signed)"
        )
    return f"server not reachable ({type(err).__name__}: {err}); start it or fix --base-url"


async def get_async(
    client: httpx.AsyncClient, url: str, deadline_s: float, max_bytes: int = MAX_BYTES
) -> tuple[int, bytes]:
    """(status, body) of a GET whose whole answer came within `deadline_s` seconds and
    `max_bytes` bytes; raise NoAnswer, saying which bound it passed, otherwise."""
    try:
        async with asyncio.timeout(deadline_s):
            headers = {"Accept-Encoding": "identity"}
            # httpx's own timeout only after the deadline, so that the deadline is what a person reads
            async with client.stream("GET", url, headers=headers, timeout=deadline_s + 5) as response:
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) > max_bytes:
                        raise NoAnswer(f"answered more than {max_bytes:,} bytes; stopped reading")
                return response.status_code, bytes(body)
    except TimeoutError:
        cap = f"--timeout, at most {PROBE_DEADLINE_S:g} s"
        raise NoAnswer(f"gave no complete answer within {deadline_s:g} s (the whole answer; {cap})") from None
    except httpx.HTTPError as err:
        raise NoAnswer(unreachable(err)) from None
    except (OSError, ValueError) as err:
        raise NoAnswer(f"server not reachable ({type(err).__name__}: {err}); start it or fix --base-url") from None


async def fetch_async(client: httpx.AsyncClient, url: str, deadline_s: float) -> tuple[int, bytes] | None:
    """`get_async`, or None when it gave no complete answer."""
    try:
        return await get_async(client, url, deadline_s)
    except NoAnswer:
        return None


def get(url: str, deadline_s: float, max_bytes: int = MAX_BYTES) -> tuple[int, bytes]:
    """`get_async` on a client of its own, for callers outside an event loop."""

    async def once() -> tuple[int, bytes]:
        async with httpx.AsyncClient(verify=url.startswith("https:")) as client:
            return await get_async(client, url, deadline_s, max_bytes)

    return asyncio.run(once())


def parse_json(body: bytes) -> Any:
    """JSON, or None for anything that is not (including nesting too deep to parse)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def get_json(url: str, deadline_s: float) -> Any:
    """The JSON body of a 200 answer, or None (no complete answer counts as none)."""
    try:
        status, body = get(url, deadline_s)
    except NoAnswer:
        return None
    return parse_json(body) if status == 200 else None


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
