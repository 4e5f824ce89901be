"""One trial: its requests offered closed-loop or open-loop by one or several event loops,
and the trial's figures (results.csv's row) from the merged per-request records.

A closed loop keeps `concurrency` streams busy, each sending its next request when its last one
ended; an open loop sends each request at its arrival (load.arrivals), capped or not. Either
way every time is measured from a request's scheduled send, so time the client spends before
the bytes leave counts. Connections are opened and requests built before the start.
"""

from __future__ import annotations

import asyncio
import collections
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .load import arrivals
from .request import RequestResult, Target, one_request, prepared_requests
from .selfcheck import ClientFigures, LoopMonitor, quantile
from .wire import Origin, Pool


@dataclass
class TrialResult:
    wall_s: float
    requests: list[RequestResult]
    vllm_draft: tuple[float, float] | None = None  # (drafted, accepted) deltas from /metrics
    client: ClientFigures | None = None
    slo: dict[str, float] = field(default_factory=dict)
    counter_reset: bool = False  # vLLM's draft counters went down between the scrapes around it

    @property
    def ok(self) -> list[RequestResult]:
        return [r for r in self.requests if not r.error]

    def row(self) -> dict[str, float]:
        """The results.csv values of this trial."""
        ok = self.ok
        tokens = sum(r.output_tokens or 0 for r in ok)
        wall = self.wall_s
        row = {
            "tokens_per_second": tokens / wall if wall > 0 else 0.0,
            "requests_per_second": len(ok) / wall if wall > 0 else 0.0,
        }
        tpots = [t for t in (r.tpot_s for r in ok) if t is not None]
        series = {
            "ttft": [r.ttft_s for r in ok if r.ttft_s is not None],
            "itl": [g for r in ok for g in r.gaps],
            "tpot": tpots,
            "latency": [r.latency_s for r in ok if r.latency_s is not None],
        }
        for name, values in series.items():
            ordered = sorted(values)
            for q in (50, 90, 99):
                row[f"{name}_p{q}_s"] = quantile(ordered, q / 100)
        row["tpot_mean_s"] = statistics.fmean(tpots) if tpots else 0.0
        row["errors"] = float(len(self.requests) - len(ok))
        if self.slo:
            good = sum(1 for r in ok if r.meets(self.slo))
            row["goodput_requests_per_second"] = good / wall if wall > 0 else 0.0
            row["slo_attainment"] = good / len(self.requests) if self.requests else 0.0
        if self.vllm_draft is not None:
            row["draft_tokens"], row["draft_accepted"] = self.vllm_draft
        else:
            row["draft_tokens"] = float(sum(r.draft_tokens for r in ok))
            row["draft_accepted"] = float(sum(r.draft_accepted for r in ok))
        if self.client is not None:
            row |= self.client.row()
        return row

    @property
    def drafted(self) -> bool:
        return self.vllm_draft is not None or any(r.drafted for r in self.requests)


@dataclass(frozen=True)
class Load:
    """How a trial offers its requests: closed loop (`rate` None: `concurrency` streams, each
    sending its next request when its last one ends) or open loop (arrivals at `rate` per
    second, gamma inter-arrivals of shape `burstiness`, at most `concurrency` in flight when
    given), from `workers` processes, or Ray actors when `ray` names a cluster."""

    concurrency: int | None = 1
    rate: float | None = None
    burstiness: float = 1.0
    seed: int | str = 0
    workers: int = 1
    ray: str | None = None  # a Ray cluster's address, or "local": the workers are Ray actors


@dataclass(frozen=True)
class Part:
    """What one event loop sends in a trial: request indices (0-based), their arrival offsets
    (open loop; None: closed loop) and its streams (closed loop) or cap (open loop; None: none)."""

    indices: tuple[int, ...]
    offsets: tuple[float, ...] | None
    concurrency: int | None


def split(load: Load, requests: int, parts: int) -> list[Part]:
    """A trial's requests over `parts` event loops: streams dealt round-robin (closed loop, each
    stream keeping its requests), or arrivals dealt round-robin with the cap shared (open loop)."""
    out = []
    if load.rate is None:
        streams = min(load.concurrency or 1, requests)
        for k in range(min(parts, streams)):
            mine = len(range(k, streams, parts))
            indices = tuple(i for i in range(requests) if (i % streams) % parts == k)
            out.append(Part(indices, None, mine))
        return out
    offsets = arrivals(requests, load.rate, load.burstiness, load.seed)
    cap = load.concurrency
    for k in range(min(parts, requests)):
        indices = tuple(range(k, requests, parts))
        share = None if cap is None else max(1, cap // parts + (k < cap % parts))
        out.append(Part(indices, tuple(offsets[i] for i in indices), share))
    return out


@dataclass
class PartResult:
    """What one event loop measured: its requests, its own lag samples and CPU share, and its
    start and end (time.perf_counter, one clock for every process of the machine)."""

    results: list[RequestResult]
    lags: list[float]
    cpu: float
    start: float
    end: float


async def measure_part(
    target: Target,
    part: Part,
    first_prompt: int,
    on_request: Callable[[RequestResult], None] | None = None,
    start_at: Callable[[], float] | None = None,
) -> PartResult:
    """Run one part of a trial on this event loop. `start_at`, when given, is the start barrier:
    called once the connections are open, it returns the common start time to wait for."""
    origin = Origin.parse(target.base_url)
    prepared = prepared_requests(target, origin)
    pool = Pool(origin, connect_timeout=min(target.timeout, 30.0))
    results: list[RequestResult] = []

    def done(result: RequestResult) -> None:
        results.append(result)
        if on_request is not None:
            on_request(result)

    def data(index: int) -> bytes:
        return prepared[(first_prompt + index) % len(prepared)]

    try:
        await pool.warm(min(len(part.indices), part.concurrency or 64))
        if start_at is not None:
            start = start_at()
            await asyncio.sleep(max(0.0, start - time.perf_counter()))
        monitor = LoopMonitor()
        monitor.start()
        start = start if start_at is not None else time.perf_counter()
        if part.offsets is None:
            await _closed_loop(pool, target, part.concurrency or 1, part.indices, data=data, done=done, start=start)
        else:
            schedule = tuple(zip(part.indices, part.offsets, strict=True))
            await _open_loop(pool, target, part.concurrency, schedule, data=data, done=done, start=start)
        end = time.perf_counter()
        monitor.stop()
    finally:
        pool.close()
    return PartResult(results, monitor.lags, monitor.cpu, start, end)


async def _closed_loop(
    pool: Pool,
    target: Target,
    concurrency: int,
    indices: tuple[int, ...],
    *,
    data: Callable[[int], bytes],
    done: Callable[[RequestResult], None],
    start: float,
) -> None:
    """`concurrency` streams; each next request is due when the stream's last one ended."""
    queue = collections.deque(indices)

    async def stream() -> None:
        due = start
        while queue:
            index = queue.popleft()
            result = await one_request(pool, target, index + 1, data(index), due, start)
            due = time.perf_counter() if result.latency_s is None else start + result.start_s + result.latency_s
            done(result)

    await asyncio.gather(*(stream() for _ in range(min(concurrency, len(indices)))))


async def _open_loop(
    pool: Pool,
    target: Target,
    cap: int | None,
    schedule: tuple[tuple[int, float], ...],
    *,
    data: Callable[[int], bytes],
    done: Callable[[RequestResult], None],
    start: float,
) -> None:
    """A request at each arrival of the schedule (index, offset from `start`); with a cap, an arrival
    waits for a free slot, and the wait counts in its latency (measured from the arrival)."""
    slots = asyncio.Semaphore(cap) if cap else None

    async def send(index: int, due: float) -> None:
        if slots is None:
            done(await one_request(pool, target, index + 1, data(index), due, start))
            return
        async with slots:
            done(await one_request(pool, target, index + 1, data(index), due, start))

    tasks = []
    for index, offset in schedule:
        due = start + offset
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(send(index, due)))
    await asyncio.gather(*tasks)
