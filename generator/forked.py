"""Work spread over the machine's cores: `forked_map(fn, items)` is `[fn(x) for x in items]`,
computed by forked worker processes when there is enough of it.

A build renders a thousand run pages, converts them and puts each in the theme's template: the
same function on independent items, which a 2-core laptop does in half the wall time on two
processes. The workers are forked (Linux), so they start with everything the build has read
and computed, and only the results travel back, pickled, in the items' order: the output is
byte for byte what one process makes.

What a worker logs is not printed there: each record comes back with the results and is handled
by the build's own loggers, in order, so a warning is printed once and counts for `--strict`.
Only handlers that are `InWorker` (a count the function itself reads) run in the worker too.
When anything goes wrong in a worker (an error, a result that cannot be pickled, a worker
killed), the results of every worker are dropped and the whole map runs again in this
process, where the error is raised as it would have been without workers.

One process does the work when there is little of it (fewer than `least` items), on one core,
off Linux, when other threads are running (`serve`'s file watcher and server: a fork copies
locks other threads hold), or with BENCHLEDGER_JOBS=1. BENCHLEDGER_JOBS=N sets the number of
workers (default: the cores this process may use, at most 8).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from multiprocessing.reduction import ForkingPickler
from types import MappingProxyType
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")
JOBS = "BENCHLEDGER_JOBS"
MOST = 8
log = logging.getLogger("mkdocs.plugins.benchledger")  # shown by `build --verbose`
_job: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # set before the fork, read by the workers


def reduce_read_only(mapping: MappingProxyType[Any, Any]) -> tuple[Callable[..., Any], tuple[dict[Any, Any]]]:
    """How a read-only mapping is pickled (from a worker, into the build cache): as the mapping it
    shows, read-only again when loaded."""
    return read_only, (dict(mapping),)


def read_only(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


ForkingPickler.register(MappingProxyType, reduce_read_only)  # a report's lines, inside claim evaluations


def interned(value: T) -> T:
    """`value` with each string in it (through lists, tuples, sets and dicts) the one interned
    copy: a worker's results are unpickled one by one, so strings equal across results (every
    page's nav links, toc keys) are separate objects, 480,000 links of 39,000 distinct ones in
    the crawl of 11,000 pages. Only those exact types: a subclass (Markup, a namedtuple, an
    OrderedDict) is left as it is."""
    kind = type(value)
    if kind is str:
        return cast(T, sys.intern(cast(str, value)))
    if kind is list or kind is tuple or kind is set or kind is frozenset:
        collection = cast(Callable[[Iterable[Any]], T], kind)
        return collection(interned(v) for v in cast(Iterable[Any], value))
    if kind is dict:
        return cast(T, {interned(k): interned(v) for k, v in cast(dict[Any, Any], value).items()})
    return value


class InWorker(logging.Handler):
    """A handler that a worker runs too (one that counts what is logged, and prints nothing);
    in a worker every other handler is left to the build's process."""


def workers() -> int:
    """How many processes a map may use: BENCHLEDGER_JOBS when it is a whole number of at least 1
    (anything else is ignored), else the cores this process may run on, at most 8."""
    given = os.environ.get(JOBS, "").strip()
    if given.isdigit() and int(given) >= 1:
        return int(given)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MOST))


def forked_map(fn: Callable[[T], R], items: Sequence[T], *, least: int = 64, what: str = "items") -> list[R]:
    """`[fn(x) for x in items]`, by forked workers when there are at least `least` items and
    more than one worker may run (see the module's docstring); `what` names the items in the
    debug log (`build --verbose`)."""
    done = forked(fn, items, least=least, what=what)
    return done if done is not None else [fn(x) for x in items]


def forked(fn: Callable[[T], R], items: Sequence[T], *, least: int = 64, what: str = "items") -> list[R] | None:
    """`[fn(x) for x in items]` by forked workers, or None when it was not done so (too few
    items, one worker, a worker failed): for a function whose side effects in this process
    would differ from its effects in a worker, so that the caller does the work another way."""
    jobs = min(workers(), len(items) // max(1, least // 2) or 1)
    if jobs < 2 or len(items) < least or sys.platform != "linux" or threading.active_count() > 1:
        return None
    global _job
    _job = (fn, items)
    try:
        results = _spread(len(items), jobs)
    finally:
        _job = None
    if results is None:
        log.debug("benchledger: a worker failed; %d %s again in one process", len(items), what)
        return None
    log.debug("benchledger: %d %s by %d forked workers", len(items), what, jobs)
    out: list[R] = []
    for records, values in results:
        for record in records:
            logging.getLogger(record.name).handle(record)
        out += values
    return out


def _spread(n: int, jobs: int) -> list[tuple[list[logging.LogRecord], list[Any]]] | None:
    """The items cut into 4 slices per worker (a slow slice does not hold up the rest), each
    slice's log records and results, in order; None when a worker failed."""
    parts = min(n, 4 * jobs)
    bounds = [(k * n // parts, (k + 1) * n // parts) for k in range(parts)]
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork")) as pool:
            return list(pool.map(_slice, bounds))
    except Exception:  # a worker's error, a killed worker (BrokenProcessPool), a result that does not pickle
        return None


def _slice(bounds: tuple[int, int]) -> tuple[list[logging.LogRecord], list[Any]]:
    """In a worker: fn over items[start:stop], with what it logs kept, not printed."""
    assert _job is not None
    fn, items = _job
    kept: list[logging.LogRecord] = []

    def keep(logger: logging.Logger, record: logging.LogRecord) -> None:
        current: logging.Logger | None = logger
        while current is not None:  # as Logger.callHandlers walks them, for the handlers that count
            for handler in current.handlers:
                if isinstance(handler, InWorker) and record.levelno >= handler.level:
                    handler.handle(record)
            current = current.parent if current.propagate else None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args, record.exc_info = record.getMessage(), None, None  # plain, picklable
        kept.append(record)

    logging.Logger.handle = keep  # type: ignore[method-assign,assignment]  # this process only: a fork of the build
    start, stop = bounds
    return kept, [fn(items[k]) for k in range(start, stop)]
