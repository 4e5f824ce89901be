"""Reading history/*.yaml (FORMAT.md, "History files") and checking what it names.

Each file is read like every other committed file: a problem names the file, the line, the
field and the fix, and a file with a problem is left out (its notes do not apply) while the
others still load. `history_problems` is the semantic check `audit()` composes: every run an
entry names exists, and its benchmark, metric and condition are the run's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import BenchledgerError, Problem
from ..format.history import HISTORY_SCHEMA, HistoryFile
from .records import HISTORY_DIR, HistoryNotes, Ledger, Run
from .references import condition_problem, run_reference_problem
from .runs import decode
from .yamlio import line_for, load_model

MAX_BYTES = 1024**2  # a history file is words about runs, never data


def load_history(root: Path, problems: list[Problem]) -> list[HistoryNotes]:
    """Every history/*.yaml under `root`, in name order; problems are appended, never raised."""
    folder = root / HISTORY_DIR
    if folder.is_symlink():
        problems.append(Problem(file=HISTORY_DIR, message="is a symlink; make history/ a real folder"))
        return []
    if not folder.is_dir():
        return []
    out = []
    for entry in sorted(folder.iterdir()):
        rel = f"{HISTORY_DIR}/{entry.name}"
        if entry.name.startswith("."):
            continue
        if entry.is_symlink() or not entry.is_file() or entry.suffix != ".yaml":
            problems.append(
                Problem(
                    file=rel,
                    message="is not a history file; history/ holds <name>.yaml files (real files, not links): "
                    "rename it or move it out",
                    severity="warning",
                )
            )
            continue
        if entry.stat().st_size > MAX_BYTES:
            problems.append(Problem(file=rel, message=f"is over {MAX_BYTES:,} bytes; a history file holds words"))
            continue
        try:
            data, lines = load_model(HistoryFile, decode(entry.read_bytes(), rel), rel, HISTORY_SCHEMA)
        except BenchledgerError as err:
            problems.extend(err.problems)
            continue
        out.append(HistoryNotes(path=rel, data=data, lines=lines))
    return out


def history_problems(ledger: Ledger) -> list[Problem]:
    """Every history entry naming a run that does not exist, or a benchmark, metric or
    condition that is not the run's."""
    out = []
    for notes in ledger.history:
        lists = (("annotate", notes.data.annotate), ("exclude", notes.data.exclude), ("accept", notes.data.accept))
        for name, entries in lists:
            for i, entry in enumerate(entries):
                message, field = _entry_problem(entry.run, entry.benchmark, entry.metric, entry.condition, ledger)
                if message is not None:
                    loc = (name, i, field)
                    out.append(
                        Problem(
                            file=notes.path,
                            line=line_for(loc, notes.lines),
                            field=f"{name}.{i}.{field}",
                            message=message,
                        )
                    )
    return out


def _entry_problem(
    ref: str, benchmark: str | None, metric: str | None, condition: Mapping[str, object], ledger: Ledger
) -> tuple[str | None, str]:
    found = run_reference_problem(ref, ledger.runs, ledger.failed_runs)
    if found is not None or ref not in ledger.runs:
        return found, "run"
    run: Run = ledger.runs[ref]
    if benchmark is not None and benchmark != run.meta.benchmark:
        return f"run {ref!r} is of benchmark {run.meta.benchmark!r}, not {benchmark!r}; fix it or remove the line", (
            "benchmark"
        )
    if metric is not None and metric not in run.meta.metrics:
        known = ", ".join(run.meta.metrics)
        return f"{metric!r} is not a metric of run {ref!r}; its metrics are: {known}", "metric"
    if condition and not run.results.matching(condition):
        return condition_problem(run, ref, dict(condition)), "condition"
    return None, "run"
