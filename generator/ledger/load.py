"""Walk a publication repository into one immutable `Ledger`.

Loading never stops at the first problem: every file is read and each problem
is recorded with its file, line and field. A run or report with an error is
left out of the ledger (`Ledger.failed_runs` names the runs); `Ledger.problems`
says why. Reading never calls a semantic check: `audit()` composes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..errors import BenchledgerError, Problem
from ..forked import forked
from ..format.scratch import MARK, OLD_SCRATCH, leftover
from .history import load_history
from .publication import docs_problems, layout_problems, report_name_problems
from .records import DOCS_DIR, REPORTS_DIR, RUNS_DIR, Ledger, Report, Run
from .reports import load_report
from .runs import ParsedRuns, assembled, decode, load_run, measurement_keys, undeclared_metrics
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
    folders: list[Path | Problem] = []  # each entry: a run folder to read, or what is wrong with it
    for entry in entries:
        rel = f"{RUNS_DIR}/{entry.name}"
        if entry.name.startswith("."):
            if (old := OLD_SCRATCH.match(entry.name)) and entry.is_dir() and not entry.is_symlink():
                folders.append(Problem(file=rel, message=leftover(old["id"])))
        elif entry.is_symlink():
            message = "is a symlink; symlinks are refused under runs/: move the real folder here"
            folders.append(Problem(file=rel, message=message))
        elif (entry / MARK).is_file():
            folders.append(Problem(file=rel, message=leftover(entry.name.rpartition(".partial-")[0] or entry.name)))
        elif entry.is_dir():
            folders.append(entry)
        else:
            folders.append(Problem(file=rel, message="is not a run folder; ignored", severity="warning"))
    loaded = iter(_loaded([f for f in folders if isinstance(f, Path)], cache, seen))
    for item in folders:
        if isinstance(item, Problem):
            problems.append(item)
            continue
        run, found = next(loaded)
        problems.extend(found)
        if run is not None:
            runs[run.id] = run
        else:
            failed.add(item.name)
    if cache is not None:
        for gone in set(cache) - {(run.id, run.digest) for run in runs.values()}:
            del cache[gone]
    if seen is not None:
        for folder_name in set(seen) - set(runs):
            del seen[folder_name]
    return runs, failed


def _loaded(
    folders: list[Path], cache: ParsedRuns | None, seen: SeenRuns | None
) -> list[tuple[Run | None, list[Problem]]]:
    """Each run folder read and parsed (`runs.load_run`), with the warnings about its names, by
    forked workers when there are many (`generator.forked`: 10,000 runs are 11 s of reading
    YAML and CSV on one core); in this process under `serve`, whose `seen` is kept across
    rebuilds. A run the cache knows comes back from a worker as its files alone, and is put
    together here from the cache's entry: its parsed parts are not copied."""
    known = frozenset(cache or ())  # read by the workers

    def read(folder: Path) -> tuple[Run | None, list[Problem]]:
        run, found = load_run(folder, cache, seen)
        if run is not None:
            found += [*undeclared_metrics(run), *measurement_keys(run)]
        return run, found

    def in_worker(folder: Path) -> tuple[Run | Known | None, list[Problem]]:
        run, found = read(folder)
        if run is not None and (run.id, run.digest) in known:
            return Known(run.id, dict(run.blobs), run.digest), found
        return run, found

    done = forked(in_worker, folders, what="run folders read") if seen is None else None
    if done is None:  # in this process, where `load_run` itself reuses and fills the cache
        return [read(folder) for folder in folders]
    out: list[tuple[Run | None, list[Problem]]] = []
    for run, found in done:
        if isinstance(run, Known):
            assert cache is not None  # only a cache's runs are Known
            out.append((assembled(run.id, run.blobs, run.digest, cache[(run.id, run.digest)]), found))
        else:
            if cache is not None and run is not None:  # parsed by a worker: its cache entry is made here
                parts = (run.meta, run.manifest, run.results, run.requests, run.receipts)
                cache.setdefault((run.id, run.digest), parts)
            out.append((run, found))
    return out


@dataclass(frozen=True)
class Known:
    """A run folder whose files the cache has parsed: its id, files and their digest."""

    id: str
    blobs: dict[str, bytes]
    digest: str


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
