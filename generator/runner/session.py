"""Run warmup and measured trials over a list of conditions, writing as trials finish.

Shared by `run openai` and `run command`. A trial in progress when the run is
interrupted (Ctrl-C, SIGTERM), fails (a failed trial, a worker process killed) or
breaks (an exception inside the runner) is dropped, never half-written; the
completed trials become a run marked `incomplete:` whose notes say what is missing.
"""

from __future__ import annotations

import contextlib
import functools
import re
import signal
import statistics
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import BenchledgerError
from ..format.conditions import condition_label
from .writer import RunWriter


@dataclass
class Measured:
    """One trial (or warmup trial) as measured."""

    row: dict[str, float] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    failed: str | None = None  # why the trial is an error, not a result
    quoted: str | None = None  # text the server sent about it: quoted verbatim, never rendered


Measure = Callable[[dict[str, Any], Callable[[int], None]], Measured]


class Terminated(BaseException):
    """SIGTERM (`docker stop`, systemd, a cancelled CI job), raised like a Ctrl-C so that the
    completed trials are written before the runner ends."""


@dataclass
class Outcome:
    completed: list[tuple[dict[str, Any], int, Measured]]
    stopped: str | None  # why the run ended early
    quoted: str | None = None  # what the server said then, verbatim
    planned: int = 0  # measured trials asked for: trials x conditions
    error: Exception | None = None  # the runner's own failure, raised again once the run is written

    def incomplete(self) -> dict[str, Any] | None:
        """run.yaml's `incomplete:` of a run that stopped before every planned trial."""
        if not self.stopped:
            return None
        return {"reason": self.stopped, "completed_trials": len(self.completed), "planned_trials": self.planned}

    def missing(self, conditions: list[dict[str, Any]], trials: int) -> list[str]:
        done: dict[str, set[int]] = {}
        for cond, trial, _ in self.completed:
            done.setdefault(label(cond), set()).add(trial)
        out = []
        for cond in conditions:
            lacking = [t for t in range(1, trials + 1) if t not in done.get(label(cond), set())]
            if lacking:
                out.append(f"{label(cond)}: trials {_ranges(lacking)}" if cond else f"trials {_ranges(lacking)}")
        return out


def label(cond: dict[str, Any]) -> str:
    return condition_label(cond.items())


def _ranges(values: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    parts = []
    start = prev = values[0]
    for value in [*values[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    return ", ".join(parts)


def run_plan(
    conditions: list[dict[str, Any]],
    measure: Measure,
    writer: RunWriter,
    console: Console,
    *,
    trials: int,
    warmup: int,
    units: Callable[[dict[str, Any]], int],
    unit_name: str,
) -> Outcome:
    """Warmup then measured trials per condition; each finished trial is written at once. The
    progress bar of a trial counts `units(condition)` of `unit_name` (requests, executions)."""
    completed: list[tuple[dict[str, Any], int, Measured]] = []
    planned = len(conditions) * trials
    step = "before the first trial"
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit_name),
        TimeElapsedColumn(),
    )
    dropped = "the trial in progress was dropped"
    try:
        with _sigterm_raises(), Progress(*columns, console=console, transient=False) as progress:
            for cond in conditions:
                steps: list[tuple[str, int | None]] = [(f"warmup {w} of {warmup}", None) for w in range(1, warmup + 1)]
                steps += [(f"trial {t} of {trials}", t) for t in range(1, trials + 1)]
                for name, trial in steps:
                    step = f"{name} at {label(cond)}" if cond else name  # a run of no conditions: no 'at all'
                    task = progress.add_task(f"{label(cond)} {name.replace(' of ', '/')}", total=units(cond))
                    result = measure(cond, functools.partial(progress.advance, task))
                    if result.failed:
                        return Outcome(completed, f"{step} failed: {result.failed}", result.quoted, planned)
                    if trial is None:
                        continue
                    writer.add_trial(
                        {"trial": trial, **cond, **result.row}, [{"trial": trial, **cond, **r} for r in result.requests]
                    )
                    completed.append((cond, trial, result))
    except KeyboardInterrupt:
        return Outcome(completed, f"interrupted (Ctrl-C); {dropped}", planned=planned)
    except Terminated:
        return Outcome(completed, f"stopped by SIGTERM; {dropped}", planned=planned)
    except BenchledgerError as err:  # a located failure of the trial: a worker process died, ...
        return Outcome(completed, f"{step} failed: {err}", planned=planned)
    except Exception as err:  # a bug: the trials are written, then it is raised again
        why = f"the runner failed ({type(err).__name__}: {str(err)[:300]}); {dropped}"
        return Outcome(completed, why, planned=planned, error=err)
    return Outcome(completed, None, planned=planned)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While trials are measured, SIGTERM raises `Terminated` in the main thread (as Ctrl-C
    raises KeyboardInterrupt), so the completed trials are written before the runner ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return

    def terminated(_signum: int, _frame: FrameType | None) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def kept_on_crash(writer: RunWriter, console: Console) -> Iterator[None]:
    """If the runner itself crashes outside the trials, say where the completed trials are (the
    scratch folder)."""
    try:
        yield
    except BenchledgerError:
        raise  # a located problem: the writer already cleaned up or kept what it says
    except Exception:
        if writer.tmp.exists():
            console.print(
                f"The runner crashed; the completed trials are kept in {writer.tmp}", markup=False, soft_wrap=True
            )
        raise


def notes(outcome: Outcome, conditions: list[dict[str, Any]], trials: int, extra: list[str]) -> str | None:
    """run.yaml's notes: why the run stopped, what is missing, and what the server said,
    quoted in a code block so that it reaches the page as text, never as Markdown."""
    lines = list(extra)
    if outcome.stopped:
        lines.insert(0, f"This run was interrupted: {outcome.stopped}. Only completed trials are recorded.")
        missing = outcome.missing(conditions, trials)
        if missing:
            lines.insert(1, "Missing trials: " + "; ".join(missing) + ".")
        if outcome.quoted:
            lines.insert(2 if missing else 1, "The server's answer, verbatim:\n\n" + code_block(outcome.quoted))
    return "\n\n".join(lines) + "\n" if lines else None


def code_block(text: str) -> str:
    """A fenced code block that no backtick run inside `text` can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def summary_table(outcome: Outcome, metric: str, unit: str, rate: tuple[str, str] | None) -> Table:
    """Per condition: trials, median and CV of the main metric, pooled acceptance."""
    table = Table(title="Summary (per-trial values)")
    for column in ("condition", "trials", f"median {metric}", "CV", *(["acceptance"] if rate else [])):
        table.add_column(column, justify="right" if column != "condition" else "left")
    by: dict[str, list[Measured]] = {}
    for cond, _, result in outcome.completed:
        by.setdefault(label(cond), []).append(result)
    for name, results in by.items():
        values = [r.row[metric] for r in results if metric in r.row]
        median = statistics.median(values) if values else 0.0
        cv = (
            (statistics.stdev(values) / statistics.fmean(values))
            if len(values) > 1 and statistics.fmean(values)
            else None
        )
        cells = [name, str(len(results)), f"{median:.4g} {unit}", f"{cv:.1%}" if cv is not None else "–"]
        if rate:
            num = sum(r.row.get(rate[0], 0.0) for r in results)
            den = sum(r.row.get(rate[1], 0.0) for r in results)
            cells.append(f"{num / den:.1%}" if den else "nothing drafted")
        table.add_row(*cells)
    return table
