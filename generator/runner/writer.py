"""Write a run folder without ever leaving a half-written one in place, and without replacing
or deleting anything a person or another run wrote.

The folder is assembled in a visible scratch folder beside the target
(`runs/<id>.partial-<token>/`, created exclusively, so two runs never share one, and marked
with format.scratch.MARK); results.csv and requests.csv are rewritten there after every
completed trial. `finish()` writes run.yaml and manifest.yaml beside the completed trials and
moves them into the run folder, which it creates exclusively (os.mkdir): a folder of the same
id that appeared while the run measured is never replaced. With `force`, the folder that
existed at the start is replaced only if it still holds exactly what it held then (else it is
left as it is); what it held is said at the start and at the end. Whenever the run cannot be
moved into place, or the runner crashes, the scratch folder stays and its path is said;
`check` flags one left behind.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..errors import BenchledgerError, Problem
from ..format.models import RUN_ID
from ..format.scratch import MARK, mark_text

Listing = dict[str, tuple[int, int]]  # run-relative path -> (size, mtime in ns)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e15 else str(value)
    return str(value)


def check_target(out_dir: Path, run_id: str | None, force: bool) -> None:
    """Refuse, before anything is measured, an id that is not a run id, an existing run folder
    (without force), and an --out that is a file."""
    if run_id is not None and not RUN_ID.match(run_id):
        shown = run_id.encode("unicode_escape").decode()
        raise BenchledgerError(
            Problem(
                file="--id",
                message=f"'{shown}' is not a run id; use lowercase letters, digits, '.', '_' and '-' (YYYY-MM-DD-slug)",
            )
        )
    if run_id is not None and (out_dir / run_id).exists() and not force:
        raise BenchledgerError(
            Problem(
                file=str(out_dir / run_id), message="already exists; pass --force to replace it, or choose another --id"
            )
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise BenchledgerError(
            Problem(file=str(out_dir), field="--out", message="is a file; give a folder for the run folders")
        )


def listing(folder: Path) -> Listing | None:
    """Every file under `folder` with its size and modification time; None when it is no folder."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    out: Listing = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_dir() or path.is_symlink():
            stat = path.lstat()
            out[path.relative_to(folder).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


def files_words(found: Listing) -> str:
    """'its 3 files (raw/notes.txt, results.csv, run.yaml)', the first 10 named."""
    names = sorted(found)
    shown = ", ".join(names[:10]) + (f", and {len(names) - 10} more" if len(names) > 10 else "")
    return f"its {len(names)} {'file' if len(names) == 1 else 'files'}" + (f" ({shown})" if names else "")


def _changes(before: Listing, now: Listing | None) -> str:
    """What changed in a run folder since the start, in words ('raw/server.log added')."""
    if now is None:
        return "removed"
    added = sorted(set(now) - set(before))
    gone = sorted(set(before) - set(now))
    changed = sorted(p for p in set(before) & set(now) if before[p] != now[p])
    found = ((added, "added"), (changed, "changed"), (gone, "removed"))
    return "; ".join(f"{', '.join(names[:5])} {what}" for names, what in found if names)


class RunWriter:
    def __init__(self, out_dir: Path, run_id: str, force: bool, say: Callable[[str], None] | None = None) -> None:
        check_target(out_dir, run_id, force)
        self.target = out_dir / run_id
        self.force = force
        # with --force: what the run folder holds now, and may be replaced only while it still holds it
        self.replacing = listing(self.target) if force else None
        self.replaced: Listing | None = None  # what finish() deleted, to be said
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            self.tmp = _scratch(out_dir, run_id)
        except OSError as err:
            raise BenchledgerError(
                Problem(
                    file=str(out_dir),
                    field="--out",
                    message=f"cannot be written ({err.strerror or err}); choose a writable folder",
                )
            ) from None
        if self.replacing is not None and say is not None:
            say(f"--force: {self.target} will be replaced when this run is written: {files_words(self.replacing)}.")
        self.results: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []

    def add_trial(self, row: dict[str, Any], requests: list[dict[str, Any]]) -> None:
        """Record one completed trial and rewrite the CSV files in the temporary folder."""
        self.add_rows([row], requests)

    def add_rows(self, rows: list[dict[str, Any]], requests: list[dict[str, Any]]) -> None:
        """Record many finished rows at once (an import), writing each CSV file once."""
        self.results.extend(rows)
        self.requests.extend(requests)
        self._write_csv("results.csv", self.results)
        if self.requests:
            self._write_csv("requests.csv", self.requests)

    def _write_csv(self, name: str, rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
        columns = columns or list(dict.fromkeys(k for row in rows for k in row))
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_number(row[c]) if row.get(c) is not None else "" for c in columns])
        (self.tmp / name).write_text(buffer.getvalue(), encoding="utf-8")

    def write_raw_bytes(self, name: str, data: bytes) -> None:
        """A file kept as it was, under raw/."""
        (self.tmp / "raw").mkdir(exist_ok=True)
        (self.tmp / "raw" / name).write_bytes(data)

    def write_raw(self, name: str, text: str) -> None:
        self.write_raw_bytes(name, text.encode("utf-8"))

    def finish(self, run: dict[str, Any], manifest: dict[str, Any], result_columns: list[str]) -> Path:
        """Write the YAML files, fix the results columns, and move the run into place."""
        self._write_csv("results.csv", self.results, result_columns)
        for name, data in (("run.yaml", run), ("manifest.yaml", manifest)):
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
            (self.tmp / name).write_text(text, encoding="utf-8")
        aside = self._set_aside()
        try:
            os.mkdir(self.target)  # exclusive: a folder of this id made meanwhile is never written into
        except FileExistsError:
            if aside is not None:
                aside.rename(self.target)  # the old run back where it was
            raise self._blocked("was created while this run measured (by another run or by hand)") from None
        for entry in sorted(self.tmp.iterdir()):
            if entry.name != MARK and entry != aside:
                entry.rename(self.target / entry.name)
        if aside is not None:
            shutil.rmtree(aside)  # exactly the files the run folder held when --force was given
        (self.tmp / MARK).unlink()
        self.tmp.rmdir()
        return self.target

    def _set_aside(self) -> Path | None:
        """With --force and a run folder at the start: that folder moved aside, once it is known to
        hold exactly what it held at the start (so nothing written meanwhile is deleted)."""
        if self.replacing is None:
            return None
        now = listing(self.target)
        if now is None and not self.target.exists() and not self.target.is_symlink():
            return None  # removed meanwhile: nothing is replaced
        if now != self.replacing:
            raise self._blocked(f"changed while this run measured ({_changes(self.replacing, now)})")
        aside = self.tmp / f"replaced-{self.target.name}"
        self.target.rename(aside)
        moved = listing(aside)
        if moved != self.replacing:  # written between the look and the move: put back, untouched
            aside.rename(self.target)
            raise self._blocked(f"changed while this run measured ({_changes(self.replacing, moved)})")
        self.replaced = self.replacing
        return aside

    def _blocked(self, why: str) -> BenchledgerError:
        """The run folder cannot take this run: it is left as it is, and the run stays, complete,
        in the scratch folder, whose path the error names."""
        n = len(self.results)  # one row per trial and condition
        trials = f"{n} {'trial is' if n == 1 else 'trials are'}"
        return BenchledgerError(
            Problem(
                file=str(self.target),
                message=f"{why}, so it was left as it is; this run's {trials} written in {self.tmp}: rename that "
                f"folder to a free run id, set id: in its run.yaml to the same, and delete its {MARK}",
            )
        )

    def abandon(self) -> None:
        """Delete the scratch folder (only ever this writer's own)."""
        shutil.rmtree(self.tmp, ignore_errors=True)


def _scratch(out_dir: Path, run_id: str) -> Path:
    """A new scratch folder of this run, created exclusively (never one another run holds)."""
    while True:
        folder = out_dir / f"{run_id}.partial-{secrets.token_hex(4)}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        (folder / MARK).write_text(mark_text(run_id, started, os.getpid()), encoding="utf-8")
        return folder
