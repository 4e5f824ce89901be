"""`benchledger export`: the ledger as three tidy tables (trials, runs, claims), in CSV or JSON,
the same tables the built site publishes under ledger/."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .common import Repo, docs_dir_of, fail, verdict_settings

app = typer.Typer()


@app.command()
def export(
    repo: Repo = Path("."),
    format: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
    out: Annotated[Path, typer.Option(help="Folder the three tables are written into.")] = Path("ledger-export"),
    force: Annotated[bool, typer.Option(help="Replace tables written before.")] = False,
) -> None:
    """Write the ledger as three tidy tables: every trial, every run and every claim.

    trials.csv: one row per trial and condition (run, trial, condition, excluded, then at.<condition>,
    metric.<name> and rate.<name>: the trial's proportion); runs.csv: one row per run with what its
    trials share (date, title, benchmark, source, trial_unit, setup.<key>, unit.<metric>, rate_of.<rate>);
    claims.csv: one row per claim and condition with its verdict and interval (for a rate,
    difference_pp: its difference in percentage points). The built site publishes the same
    tables under ledger/.
    """
    from ..analysis.audit import audit
    from ..analysis.claims import evaluate_publication
    from ..analysis.receipts import reproductions
    from ..render.ledger_files import export_files

    if format not in ("csv", "json"):
        fail(f"--format {format!r}: expected csv or json")
    _outside_runs(repo, out)
    checked = audit(repo, docs_dir_of(repo).relative_to(repo.resolve()).as_posix(), stale_is_error=False)
    if checked.errors:
        fail(checked.errors)
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = reproductions(checked.receipts)
    evaluations, _ = evaluate_publication(checked.ledger, verdict_settings(repo, None, None), states, reproduced)
    files = export_files(checked.ledger, evaluations, format)
    _export_target(out, list(files), force)
    for name, data in files.items():
        tmp = out / f".{name}.{os.getpid()}.tmp"
        try:
            tmp.write_bytes(data)
            tmp.replace(out / name)  # replaces a file, never writes through a link
        except OSError as err:
            fail(f"{out / name}: cannot be written ({err.strerror}); choose another --out")
        typer.echo(f"wrote {out / name}")


def _outside_runs(repo: Path, out: Path) -> None:
    """--out never lies in runs/: a run folder's files are hashed by its receipts (and read by
    check), so tables written there would make its receipts stale."""
    from ..ledger.records import RUNS_DIR

    runs, where = (repo.resolve() / RUNS_DIR).resolve(), out.resolve()
    fix = "choose a folder outside runs/, e.g. --out ledger-export"
    if where == runs:
        fail(f"--out: {where} is runs/, which holds only run folders; {fix}")
    if where.is_relative_to(runs):
        run = where.relative_to(runs).parts[0]
        fail(
            f"--out: {where} lies in the run folder runs/{run}, whose files its receipts hash: the tables would "
            f"make them stale; {fix}"
        )


def _export_target(out: Path, names: list[str], force: bool) -> None:
    """--out is a folder (made if missing) whose tables are new, or regular files with --force."""
    if out.exists() and not out.is_dir():
        fail(f"--out: {out} is a file; give a folder for the tables")
    for name in names:
        path = out / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            fail(f"{path}: is a link or not a regular file; remove it, or choose another --out")
        if path.exists() and not force:
            fail(f"{path}: already exists; pass --force to replace it, or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail(f"--out: {out} cannot be created ({err.strerror}); give a folder you can write to")
