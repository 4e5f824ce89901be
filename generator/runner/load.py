"""How load is offered: open-loop arrival times, and the SLOs that define goodput.

Open-loop arrivals follow vLLM's `bench serve`: inter-arrival times are gamma-distributed with
shape `burstiness` and mean 1 / rate (burstiness 1 is a Poisson process; below 1 burstier,
above 1 more regular). The first request arrives at the trial's start.
"""

from __future__ import annotations

import math
import random
import re

from ..errors import BenchledgerError, Problem

SLO_KEYS = {
    "ttft": "time to first token",
    "itl": "every gap between reads carrying content",
    "tpot": "time per output token after the first",
    "e2el": "end-to-end latency",
}


def arrivals(count: int, rate: float, burstiness: float, seed: int | str) -> list[float]:
    """Offsets in seconds from the trial's start of `count` requests arriving at `rate` per
    second (gamma inter-arrivals of shape `burstiness`, seeded)."""
    if not (rate > 0 and math.isfinite(rate)) or not (burstiness > 0 and math.isfinite(burstiness)):
        raise ValueError("rate and burstiness must be finite and above 0")
    rng = random.Random(str(seed))
    scale = 1.0 / (rate * burstiness)
    out, at = [], 0.0
    for _ in range(count):
        out.append(at)
        at += rng.gammavariate(burstiness, scale)
    return out


def parse_slo(text: str | None) -> dict[str, float]:
    """'ttft=200ms,itl=50ms' -> {'ttft': 0.2, 'itl': 0.05} (seconds); units ms or s."""
    if not text:
        return {}
    out: dict[str, float] = {}
    for item in text.split(","):
        match = re.fullmatch(r"\s*([a-z0-9]+)\s*=\s*([0-9]*\.?[0-9]+)\s*(ms|s)\s*", item)
        if not match:
            raise BenchledgerError(
                Problem(
                    file="--slo", message=f"{item.strip()!r}: write NAME=VALUE with a unit, e.g. ttft=200ms,itl=50ms"
                )
            )
        name, value, unit = match.groups()
        if name not in SLO_KEYS:
            raise BenchledgerError(
                Problem(file="--slo", message=f"{name!r} is not an SLO; use {', '.join(SLO_KEYS)}, e.g. ttft=200ms")
            )
        out[name] = float(value) / (1000 if unit == "ms" else 1)
    return out
