"""Write a run folder without ever leaving a half-written one in place.

The folder is assembled in a hidden temporary folder beside the target
(`runs/.<id>.partial-<pid>`); results.csv and requests.csv are rewritten there
after every completed trial. Ctrl-C or a failed trial ends the run normally:
`finish()` writes run.yaml and manifest.yaml beside the completed trials and
renames the folder into place. If the runner itself crashes, the hidden folder
stays with the completed trials and its path is printed (session.run_plan).
An existing run folder is replaced only with `force`.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from ..errors import BenchledgerError, Problem
from ..format.models import RUN_ID


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


class RunWriter:
    def __init__(self, out_dir: Path, run_id: str, force: bool) -> None:
        check_target(out_dir, run_id, force)
        self.target = out_dir / run_id
        self.tmp = out_dir / f".{run_id}.partial-{os.getpid()}"
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            if self.tmp.exists():
                shutil.rmtree(self.tmp)
            self.tmp.mkdir()
        except OSError as err:
            raise BenchledgerError(
                Problem(
                    file=str(out_dir),
                    field="--out",
                    message=f"cannot be written ({err.strerror or err}); choose a writable folder",
                )
            ) from None
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
        """Write the YAML files, fix the results columns, and move the folder into place."""
        self._write_csv("results.csv", self.results, result_columns)
        for name, data in (("run.yaml", run), ("manifest.yaml", manifest)):
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
            (self.tmp / name).write_text(text, encoding="utf-8")
        old = None
        if self.target.exists():
            old = self.target.with_name(f".{self.target.name}.replaced-{os.getpid()}")
            self.target.rename(old)
        self.tmp.rename(self.target)
        if old is not None:
            shutil.rmtree(old)
        return self.target

    def abandon(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
