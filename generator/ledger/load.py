"""Walk a publication repository into one immutable `Ledger`.

Loading never stops at the first problem: every file is read and each problem
is recorded with its file, line and field. A run or report with an error is
left out of the ledger (`Ledger.failed_runs` names the runs); `Ledger.problems`
says why. Reading never calls a semantic check: `audit()` composes them.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from ..errors import BenchledgerError, Problem
from ..format.scratch import MARK, OLD_SCRATCH, leftover
from .history import load_history
from .publication import docs_problems, layout_problems, report_name_problems
from .records import DOCS_DIR, REPORTS_DIR, RUNS_DIR, Ledger, Report, Run
from .reports import load_report
from .runs import ParsedRuns, decode, load_run, measurement_keys, undeclared_metrics
from .seen_runs import SeenRuns, keeps_change_times


def load(
    root: Path | str, docs_dir: str = DOCS_DIR, cache: ParsedRuns | None = None, seen: SeenRuns | None = None
) -> Ledger:
    """Read every run under runs/, every report under <docs_dir>/reports/, allowed_signers and
    history/*.yaml.

    With a cache (a mapping the caller owns), runs whose files did not change are reused,
    and entries that no run folder holds any more are dropped. With `seen` (`serve`'s), a run
    folder whose files' signatures are unchanged is not read again (`runs.load_run`)."""
    root = Path(root).resolve()
    problems: list[Problem] = []
    runs, failed = _runs(root, problems, cache, seen)
    layout = layout_problems(root, root / docs_dir)
    problems += layout or docs_problems(root, root / docs_dir)
    reports = [] if layout else _reports(root / docs_dir / REPORTS_DIR, root, problems)
    allowed = _allowed_signers(root, problems)
    history = load_history(root, problems)
    return Ledger(
        root=root,
        runs=MappingProxyType(runs),
        reports=tuple(reports),
        problems=tuple(problems),
        allowed_signers=allowed,
        failed_runs=frozenset(failed),
        history=tuple(history),
    )


def _runs(
    root: Path, problems: list[Problem], cache: ParsedRuns | None, seen: SeenRuns | None = None
) -> tuple[dict[str, Run], set[str]]:
    runs: dict[str, Run] = {}
    failed: set[str] = set()
    folder = root / RUNS_DIR
    if folder.is_symlink():
        problems.append(Problem(file=RUNS_DIR, message="is a symlink; make runs/ a real folder"))
        return runs, failed
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    if seen is not None and not keeps_change_times(folder):
        seen.clear()
        seen = None  # every folder is read: this file system's times cannot prove a file unchanged
    for entry in entries:
        rel = f"{RUNS_DIR}/{entry.name}"
        if entry.name.startswith("."):
            if (old := OLD_SCRATCH.match(entry.name)) and entry.is_dir() and not entry.is_symlink():
                problems.append(Problem(file=rel, message=leftover(old["id"])))
            continue
        if entry.is_symlink():
            problems.append(
                Problem(file=rel, message="is a symlink; symlinks are refused under runs/: move the real folder here")
            )
        elif (entry / MARK).is_file():
            problems.append(Problem(file=rel, message=leftover(entry.name.rpartition(".partial-")[0] or entry.name)))
        elif entry.is_dir():
            run, found = load_run(entry, cache, seen)
            problems.extend(found)
            if run is not None:
                runs[run.id] = run
                problems.extend(undeclared_metrics(run))
                problems.extend(measurement_keys(run))
            else:
                failed.add(entry.name)
        else:
            problems.append(Problem(file=rel, message="is not a run folder; ignored", severity="warning"))
    if cache is not None:
        for gone in set(cache) - {(run.id, run.digest) for run in runs.values()}:
            del cache[gone]
    if seen is not None:
        for folder_name in set(seen) - set(runs):
            del seen[folder_name]
    return runs, failed


def _reports(folder: Path, root: Path, problems: list[Problem]) -> list[Report]:
    reports = []
    if folder.is_dir():
        for path in sorted(folder.rglob("*.md")):
            if not path.is_symlink() and not path.is_file():
                continue  # docs_problems names it (a folder called x.md is walked, a FIFO refused)
            report, found = load_report(root, path, folder)
            problems.extend(found)
            if report is not None:
                reports.append(report)
    problems.extend(report_name_problems(reports))
    return reports


def _allowed_signers(root: Path, problems: list[Problem]) -> str | None:
    signers = root / "allowed_signers"
    if signers.is_symlink():
        problems.append(Problem(file="allowed_signers", message="is a symlink; make it a real file"))
    elif signers.is_file():
        try:
            return decode(signers.read_bytes(), "allowed_signers")
        except BenchledgerError as err:
            problems.extend(err.problems)
    return None
