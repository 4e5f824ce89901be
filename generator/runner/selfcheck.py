"""The client's own error, measured during every trial.

- **Event-loop lag**: a task asks to wake every `LAG_INTERVAL_S` and records how late it
  woke. Every timestamp the runner takes (a send, a token's arrival) is late by about as much
  as the loop is, so the lag bounds the timing error of the trial's figures.
- **CPU**: the CPU time of the thread running the event loop over the trial's wall time, as a
  fraction of one core. A loop near a full core cannot keep time; a server running in the same
  process (as in tests) does not count.
- **Send delay**: per request, from its scheduled send (its arrival in an open-loop run, the
  end of the worker's previous request in a closed-loop one) to the moment its bytes left.

A trial is **client-bound** when loop lag p99, send delay p99 or CPU pass the limits below:
its figures then describe the client as much as the server. More worker processes, fewer
streams per process or a less loaded machine avoid it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

LAG_INTERVAL_S = 0.005
LAG_P99_LIMIT_S = 0.010  # loop lag p99 above this: timestamps are off by more than this
SEND_DELAY_P99_LIMIT_S = 0.010  # sends later than this at p99: the client did not keep the schedule
CPU_LIMIT = 0.80  # fraction of one core used by the event loop's thread


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values (numpy's default); 0 for no values."""
    if not values:
        return 0.0
    pos = (len(values) - 1) * q
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (pos - low)


class LoopMonitor:
    """Samples the running loop's lag until stopped; `cpu` is the loop thread's CPU share."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None
        self._cpu0 = self._wall0 = 0.0
        self.cpu = 0.0

    def start(self) -> None:
        self._cpu0, self._wall0 = time.thread_time(), time.perf_counter()
        self._task = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        perf_counter = time.perf_counter
        while True:
            due = perf_counter() + LAG_INTERVAL_S
            await asyncio.sleep(LAG_INTERVAL_S)
            self.lags.append(max(0.0, perf_counter() - due))

    def stop(self) -> None:
        wall = time.perf_counter() - self._wall0
        self.cpu = (time.thread_time() - self._cpu0) / wall if wall > 0 else 0.0
        if self._task is not None:
            self._task.cancel()


@dataclass(frozen=True)
class ClientFigures:
    """What the client measured of itself during one trial."""

    lag_p50_s: float
    lag_p99_s: float
    lag_max_s: float
    cpu: float  # fraction of one core
    send_delay_p50_s: float
    send_delay_p99_s: float

    @classmethod
    def of(cls, lags: Sequence[float], cpu: float, send_delays: Sequence[float]) -> ClientFigures:
        lag, delay = sorted(lags), sorted(send_delays)
        return cls(
            lag_p50_s=quantile(lag, 0.5),
            lag_p99_s=quantile(lag, 0.99),
            lag_max_s=lag[-1] if lag else 0.0,
            cpu=cpu,
            send_delay_p50_s=quantile(delay, 0.5),
            send_delay_p99_s=quantile(delay, 0.99),
        )

    @classmethod
    def from_row(cls, row: dict[str, float]) -> ClientFigures:
        """Back from a results.csv row (`row()`)."""
        return cls(
            lag_p50_s=row["client_lag_p50_s"],
            lag_p99_s=row["client_lag_p99_s"],
            lag_max_s=row["client_lag_max_s"],
            cpu=row["client_cpu"],
            send_delay_p50_s=row["send_delay_p50_s"],
            send_delay_p99_s=row["send_delay_p99_s"],
        )

    def reasons(self) -> list[str]:
        """Why the trial is client-bound; empty when it is not."""
        out = []
        if self.lag_p99_s > LAG_P99_LIMIT_S:
            out.append(f"event-loop lag p99 {self.lag_p99_s * 1000:.1f} ms > {LAG_P99_LIMIT_S * 1000:g} ms")
        if self.send_delay_p99_s > SEND_DELAY_P99_LIMIT_S:
            out.append(f"send delay p99 {self.send_delay_p99_s * 1000:.1f} ms > {SEND_DELAY_P99_LIMIT_S * 1000:g} ms")
        if self.cpu > CPU_LIMIT:
            out.append(f"client CPU {self.cpu:.0%} of a core > {CPU_LIMIT:.0%}")
        return out

    def row(self) -> dict[str, float]:
        return {
            "client_lag_p50_s": self.lag_p50_s,
            "client_lag_p99_s": self.lag_p99_s,
            "client_lag_max_s": self.lag_max_s,
            "client_cpu": self.cpu,
            "send_delay_p50_s": self.send_delay_p50_s,
            "send_delay_p99_s": self.send_delay_p99_s,
            "client_bound": 1.0 if self.reasons() else 0.0,
        }
