"""How `run openai` offers its load, as the command line gave it: closed loop at each
--concurrency or open loop at each --request-rate, the SLOs, and the worker processes (or
Ray actors) that share a trial's streams; every option checked before the first request."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import BenchledgerError, Problem
from .load import parse_slo
from .trial import Load

RAY_ADDRESS = re.compile(r"^(ray://)?[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$")
MAX_CONCURRENCY = 4096
MAX_WORKERS = 256
# One event loop of this client keeps the known schedule within 1% up to 64 streams on a 2-core
# machine (bench/runner_overhead.py); past that a trial risks being client-bound.
STREAMS_PER_WORKER = 64


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def auto_workers(streams: int) -> int:
    """The default --workers: a process per 64 streams, within the cores this process may use."""
    return max(1, min(cores(), math.ceil(streams / STREAMS_PER_WORKER)))


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """How `run openai` offers its requests: closed loop at each --concurrency, or open loop at
    each --request-rate (with --burstiness, --seed and an optional --max-concurrency cap)."""

    request_rate: list[float] = field(default_factory=list)
    burstiness: float = 1.0
    seed: int = 0
    max_concurrency: int | None = None
    slo: str | None = None
    concurrency_given: bool = False  # --concurrency was on the command line
    workers: int | None = None  # None: auto_workers, per condition
    ray: str | None = None  # --ray: a Ray cluster's address, or local

    def check(self) -> dict[str, float]:
        """Every load option checked before the first request; the parsed SLOs."""
        rates_ok = all(math.isfinite(r) and 0 < r <= 1e6 for r in self.request_rate)
        checks = [
            ("--request-rate", rates_ok, "give requests per second above 0, e.g. 2,4,8"),
            ("--burstiness", math.isfinite(self.burstiness) and 0 < self.burstiness <= 1000, "give a shape above 0"),
            (
                "--max-concurrency",
                self.max_concurrency is None or 1 <= self.max_concurrency <= MAX_CONCURRENCY,
                f"give 1 to {MAX_CONCURRENCY} streams",
            ),
            (
                "--max-concurrency",
                self.max_concurrency is None or bool(self.request_rate),
                "caps an open-loop run; give --request-rate, or use --concurrency for a closed loop",
            ),
            (
                "--workers",
                self.workers is None or 1 <= self.workers <= MAX_WORKERS,
                f"give 1 to {MAX_WORKERS} processes",
            ),
            (
                "--ray",
                self.ray is None or self.ray == "local" or bool(RAY_ADDRESS.match(self.ray)),
                "give local, or a cluster's address such as ray://head:10001 or 10.0.0.5:6379",
            ),
            (
                "--concurrency",
                not (self.concurrency_given and self.request_rate),
                "sets a closed loop; with --request-rate cap the streams with --max-concurrency instead",
            ),
        ]
        problems = [Problem(file=flag, message=fix) for flag, ok, fix in checks if not ok]
        if problems:
            raise BenchledgerError(problems)
        return parse_slo(self.slo)

    def conditions(self, concurrency: list[int]) -> list[dict[str, Any]]:
        if self.request_rate:
            return [{"request_rate": r} for r in self.request_rate]
        return [{"concurrency": c} for c in concurrency]

    def requests(self, requests: int | None, cond: dict[str, Any]) -> int:
        """Requests per trial: --requests, else 4 per stream (closed) or 10 s of arrivals, at least 16 (open)."""
        if requests:
            return requests
        if "request_rate" in cond:
            return max(16, math.ceil(10 * float(cond["request_rate"])))
        return 4 * int(cond["concurrency"])

    def load(self, cond: dict[str, Any], seed: str) -> Load:
        if "request_rate" in cond:
            rate = float(cond["request_rate"])
            workers = self.workers or auto_workers(self.max_concurrency or 1)
            return Load(
                concurrency=self.max_concurrency,
                rate=rate,
                burstiness=self.burstiness,
                seed=seed,
                workers=workers,
                ray=self.ray,
            )
        streams = int(cond["concurrency"])
        return Load(streams, workers=self.workers or auto_workers(streams), ray=self.ray)
