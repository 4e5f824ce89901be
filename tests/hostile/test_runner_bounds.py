"""Every request the runner makes is bounded: a deadline on the whole answer and a size cap
(`/v1/models`, `/props`, `/metrics`: --timeout, at most 30 s, and 4 MiB; a streamed answer:
--timeout and 1 MiB + 4 KiB per --max-tokens token). Counters that restart, a non-ASCII
--base-url path and a --setup number too long to write are recorded, never a traceback.

A drip lasts up to hostile_server.LIMIT_S (20 s); the bounds below are several times what a
bounded request takes and below what an unbounded one does, so a busy machine passes them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import yaml
from hostile_server import HUGE, HostileServer
from test_runner_hostile import check, run
from typer.testing import CliRunner

from generator.cli import app
from generator.importers.credentials import credential_paths, secret_in_text
from generator.runner.fetch import NoAnswer, get_async

CAP = 4 * 1024 * 1024


class Endless(httpx.AsyncByteStream):
    """A body that never ends: `block` after `block`, `pause` seconds apart; counts what it gave."""

    def __init__(self, block: bytes, pause: float) -> None:
        self.block, self.pause, self.given = block, pause, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            self.given += 1
            yield self.block
            await asyncio.sleep(self.pause)


def fetched(body: Endless, deadline_s: float) -> tuple[int, bytes]:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, stream=body))

    async def once() -> tuple[int, bytes]:
        async with httpx.AsyncClient(transport=transport) as client:
            return await get_async(client, "http://server/v1/models", deadline_s)

    return asyncio.run(once())


def test_the_deadline_is_on_the_whole_answer_not_each_read() -> None:
    drip = Endless(b"x", 3600.0)  # a byte an hour: each read is slow, none would time out
    with pytest.raises(NoAnswer, match=r"^gave no complete answer within 0.2 s \(the whole answer; --timeout"):
        fetched(drip, 0.2)
    assert drip.given == 1


def test_a_dripping_metrics_scrape_records_no_counters_at_its_deadline() -> None:
    from generator.runner.openai import scrape_draft_counters

    drip = Endless(b"vllm:spec_decode_num_draft_tokens_total 1", 3600.0)
    transport = httpx.MockTransport(lambda request: httpx.Response(200, stream=drip))

    async def once() -> tuple[float, float] | None:
        async with httpx.AsyncClient(transport=transport) as client:
            return await scrape_draft_counters(client, "http://server", 0.2)

    assert asyncio.run(once()) is None and drip.given == 1


def test_a_flood_is_cut_at_the_size_cap_without_reading_on() -> None:
    flood = Endless(b" " * 2**20, 0.0)
    with pytest.raises(NoAnswer, match=r"^answered more than 4,194,304 bytes; stopped reading$"):
        fetched(flood, 3600.0)
    assert flood.given == 5  # the fifth MiB passed the cap; nothing after it was asked for


def test_a_dripping_models_answer_ends_at_the_timeout(tmp_path: Path) -> None:
    with HostileServer("drip-models") as server:
        start = time.monotonic()
        code, out, folder = run(tmp_path, server.base_url, "--timeout", "2")
        elapsed = time.monotonic() - start
    assert code == 1 and not folder.exists()
    message = " ".join(out.split())
    assert (
        f"Error: {server.base_url}/models: gave no complete answer within 2 s (the whole answer; --timeout, at most 30 s)"
        in message
    )
    assert elapsed < 15  # a whole-answer deadline; the unbounded probe ran past the 20 s drip


def test_a_huge_models_answer_is_not_read_whole(tmp_path: Path) -> None:
    with HostileServer("huge-models") as server:
        code, out, folder = run(tmp_path, server.base_url, "--timeout", "30")
    assert code == 1 and not folder.exists()
    message = " ".join(out.split())
    assert f"Error: {server.base_url}/models: answered more than {CAP:,} bytes; stopped reading" in message
    assert server.sent < HUGE // 4  # the client hung up after about 4 MiB, not the 256 MiB announced


def test_a_dripping_metrics_answer_ends_at_the_timeout(tmp_path: Path) -> None:
    with HostileServer("drip-metrics") as server:
        start = time.monotonic()
        code, out, folder = run(tmp_path, server.base_url, "--timeout", "1")
        elapsed = time.monotonic() - start
    assert code == 0, out
    assert server.paths.count("/metrics") == 1  # no counters before the trial: none scraped after it
    meta = yaml.safe_load((folder / "run.yaml").read_text())
    assert "draft_tokens" not in meta["metrics"]
    assert elapsed < 8  # one /metrics answer cut at 1 s; it was cut at 10 s whatever --timeout said


def test_a_huge_stream_is_cut_at_its_size_cap(tmp_path: Path) -> None:
    with HostileServer("huge-stream") as server:
        code, out, folder = run(tmp_path, server.base_url, "--timeout", "10", "--max-tokens", "1")
    assert code == 1 and not folder.exists()
    message = " ".join(out.split())
    assert "the server's answer passed 1,052,672 bytes (1 MiB + 4 KiB per --max-tokens token); stopped reading" in (
        message
    )
    assert server.sent < HUGE // 4


def test_counters_that_restart_between_scrapes_never_give_a_negative_count(tmp_path: Path) -> None:
    with HostileServer("metrics-reset") as server:
        code, out, folder = run(tmp_path, server.base_url)
    assert code == 0, out
    rows = (folder / "results.csv").read_text().splitlines()
    header = rows[0].split(",")
    row = dict(zip(header, rows[1].split(","), strict=True))
    assert (row["draft_tokens"], row["draft_accepted"]) == ("30", "20")  # counted from the restart
    notes = yaml.safe_load((folder / "run.yaml").read_text())["notes"]
    assert (
        "In 1 trial vLLM's draft counters went down between the scrapes before and after it (the server "
        "restarted or reset them); as Prometheus counts a reset, those trials count drafts from the reset "
        "only, so their draft figures may be low."
    ) in " ".join(notes.split())
    check(folder)


def test_a_non_ascii_base_url_path_is_percent_encoded(tmp_path: Path) -> None:
    with HostileServer("unicode-path") as server:
        code, out, folder = run(tmp_path, server.base_url)
    assert code == 0, out
    assert "/caf%C3%A9/v1/chat/completions" in server.paths
    assert "/caf%C3%A9/v1/models" in server.paths
    check(folder)


def test_a_setup_number_too_long_to_write_is_kept_as_text(tmp_path: Path) -> None:
    digits = "0x" + "1" * 5000  # a YAML integer of 6,000 decimal digits, past Python's 4,300
    args = ["run", "command", "--out", str(tmp_path / "runs"), "--trials", "1", "--warmup", "0"]
    result = CliRunner().invoke(app, [*args, "--id", "2026-11-30-digits", "--setup", f"a={digits}", "--", "true"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "runs" / "2026-11-30-digits"
    assert yaml.safe_load((folder / "run.yaml").read_text())["setup"] == {"a": digits}
    check(folder)


def test_the_credential_scan_is_linear_in_the_value() -> None:
    letters = "a" * 100_000
    mixed = "a1." * 40_000
    start = time.monotonic()
    assert not secret_in_text(letters) and not secret_in_text(mixed)
    assert not secret_in_text("x://" + letters) and not secret_in_text("a://" * 30_000)
    assert secret_in_text(letters + " https://user:hunter2@example.com/")
    assert secret_in_text(mixed + "1ab+c://ghp_0123456789abcdefghij@github.com")
    assert credential_paths({"log": [letters, "see https://user:pw@host/x"]}) == ["$.log[1]"]
    assert time.monotonic() - start < 2.5  # linear: milliseconds; quadratic: about 10 s per value


def test_help_states_the_bounds_the_runner_applies() -> None:
    from generator.runner import fetch, sse

    result = CliRunner().invoke(app, ["run", "openai", "--help"], terminal_width=400)
    text = " ".join(result.output.replace("│", " ").split())
    assert (sse.STREAM_BYTES, sse.STREAM_BYTES_PER_TOKEN, sse.stream_cap(1)) == (2**20, 4 * 2**10, 1_052_672)
    assert (fetch.PROBE_DEADLINE_S, fetch.MAX_BYTES) == (30.0, 4 * 2**20)
    assert "a streamed answer is also cut past 1 MiB + 4 KiB per --max-tokens token" in text
    assert "/metrics answers each get --timeout (at most 30 s) and 4 MiB" in text
    assert "a whole number of more than 4,300 digits is kept as text" in text
