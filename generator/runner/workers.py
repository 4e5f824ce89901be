"""`--workers N`: one trial's streams split over N processes, each its own event loop.

Each worker process builds its requests and opens its connections, then says it is ready;
once every worker is ready the parent sends one start time (time.perf_counter, a clock every
process of the machine shares) a little ahead, every worker waits for it and runs its part
(openai.measure_part), and the per-request records come back to be merged on one timeline.
Workers are started with "spawn": nothing of the parent's threads or event loop is copied.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from multiprocessing.connection import Connection
from typing import Any

from ..errors import BenchledgerError, Problem
from .request import Target
from .trial import Part, PartResult, measure_part

READY_TIMEOUT_S = 120.0  # starting Python and opening the connections
START_AHEAD_S = 0.05  # the common start, this long after the last worker is ready


def run_parts(target: Target, parts: list[Part], first_prompt: int) -> list[PartResult]:
    """Run each part in its own process from a common start; their records, in part order."""
    context = multiprocessing.get_context("spawn")
    pipes: list[Connection] = []
    processes = []
    try:
        for part in parts:
            parent, child = context.Pipe()
            process = context.Process(target=_worker, args=(child, target, part, first_prompt), daemon=True)
            process.start()
            child.close()
            pipes.append(parent)
            processes.append(process)
        for pipe in pipes:
            _expect(pipe, "ready", READY_TIMEOUT_S)
        start = time.perf_counter() + START_AHEAD_S
        for pipe in pipes:
            pipe.send(start)
        # every request is bounded by --timeout, so a worker's part is too
        return [
            _expect(pipe, "done", target.timeout * len(part.indices) + 60)
            for pipe, part in zip(pipes, parts, strict=True)
        ]
    finally:
        for process in processes:
            process.join(5)
            if process.is_alive():
                process.terminate()
                process.join(5)
        for pipe in pipes:
            pipe.close()


def _expect(pipe: Connection, kind: str, timeout: float) -> Any:
    """The worker's next message of `kind`; a failed, silent or vanished worker is an error."""
    try:
        if not pipe.poll(timeout):
            raise _failed(f"said nothing for {timeout:g} s")
        message = pipe.recv()
    except (EOFError, OSError):
        raise _failed("exited before it finished") from None
    if isinstance(message, tuple) and message[0] == "error":
        raise _failed(str(message[1]))
    if kind == "ready":
        return None
    return message[1]


def _failed(why: str) -> BenchledgerError:
    return BenchledgerError(
        Problem(file="--workers", message=f"a worker process failed ({why}); run with --workers 1 to see the error")
    )


def _worker(pipe: Connection, target: Target, part: Part, first_prompt: int) -> None:
    def barrier() -> float:
        pipe.send("ready")
        start: float = pipe.recv()
        return start

    try:
        result = asyncio.run(measure_part(target, part, first_prompt, start_at=barrier))
        pipe.send(("done", result))
    except BaseException as err:  # reported to the parent, which names --workers
        pipe.send(("error", f"{type(err).__name__}: {err}"[:500]))
    finally:
        pipe.close()
