"""`--ray ADDRESS`: the parts of a trial as Ray actors, so that load can come from several
machines (`--ray local` starts a Ray cluster on this machine).

One actor per worker, not one per request: each actor runs its part on its own asyncio event
loop in a thread of its own (trial.measure_part, the same code `--workers` runs in a process),
opens its connections, reports ready, and starts when the driver says go. Clocks of different
machines are never compared: each actor returns its requests' offsets from its own start and
its own duration, and the parts are merged on one timeline that starts at every part's start.
The skew of that common start is the time the driver's "go" takes to reach each actor (a
round trip of Ray's RPC, milliseconds on one network); it is not measured.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any

from ..errors import BenchledgerError, Problem
from .request import Target
from .trial import Part, PartResult, measure_part

READY_TIMEOUT_S = 120.0  # starting a worker and opening its connections


class PartActor:
    """One worker: its part of the trial, on its own event loop in its own thread."""

    def __init__(self, target: Target, part: Part, first_prompt: int) -> None:
        self.opened, self.started = threading.Event(), threading.Event()
        self.result: PartResult | None = None
        self.error: str | None = None

        def barrier() -> float:
            self.opened.set()
            if not self.started.wait(READY_TIMEOUT_S):
                raise TimeoutError("the driver never said go")
            return time.perf_counter()

        def work() -> None:
            try:
                self.result = asyncio.run(measure_part(target, part, first_prompt, start_at=barrier))
            except BaseException as err:  # reported to the driver, which names --ray
                self.error = f"{type(err).__name__}: {err}"[:500]
                self.opened.set()

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def ready(self) -> str | None:
        """None once the connections are open; the error when the worker failed first."""
        if not self.opened.wait(READY_TIMEOUT_S):
            return f"opened no connection in {READY_TIMEOUT_S:g} s"
        return self.error

    def go(self) -> None:
        self.started.set()

    def finish(self) -> tuple[PartResult | None, str | None]:
        """The part's records with times from its own start (its clock stays on its machine)."""
        self.thread.join()
        if self.result is None:
            return None, self.error or "measured nothing"
        own = self.result
        return dataclasses.replace(own, start=0.0, end=own.end - own.start), None


def run_parts_ray(address: str, target: Target, parts: list[Part], first_prompt: int) -> list[PartResult]:
    """Run each part on a Ray actor (`address`: a cluster's address, or `local`) from a common
    start; their records, in part order."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            ray.init(
                address=None if address == "local" else address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise _failed(f"no Ray cluster at {address!r} ({err})") from None
    remote: Any = ray.remote(max_concurrency=4)(PartActor)  # ready/go/finish may overlap
    actors = [remote.remote(target, part, first_prompt) for part in parts]
    try:
        for problem in ray.get([a.ready.remote() for a in actors], timeout=READY_TIMEOUT_S + 30):
            if problem is not None:
                raise _failed(problem)
        ray.get([a.go.remote() for a in actors])
        bound = target.timeout * max(len(p.indices) for p in parts) + 60
        out = []
        for result, problem in ray.get([a.finish.remote() for a in actors], timeout=bound):
            if result is None:
                raise _failed(problem or "measured nothing")
            out.append(result)
        return out
    except ray.exceptions.RayError as err:
        raise _failed(f"{type(err).__name__}: {str(err)[:300]}") from None
    finally:
        for actor in actors:
            ray.kill(actor)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BenchledgerError(
            Problem(file="--ray", message="Ray is not installed; pip install 'benchledger[ray]', or use --workers")
        ) from None
    return ray


def _failed(why: str) -> BenchledgerError:
    return BenchledgerError(Problem(file="--ray", message=f"a Ray worker failed ({why}); run with --workers to see it"))
