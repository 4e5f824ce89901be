"""Write a receipt for a run (and sign it with ssh-keygen when asked)."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..analysis.signatures import NAMESPACE
from ..errors import BenchledgerError, Problem
from ..format.hashing import RECEIPTS_DIR, hashed_files
from ..format.models import RECEIPT_SCHEMA
from ..ledger.load import load
from ..ledger.records import RUNS_DIR

METHODS = ("rerun", "review", "recompute")


def slug(name: str) -> str:
    """'Zak Example' -> 'zak-example'."""
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-") or "verifier"


def resolve_run_id(repo: Path, run: str) -> str:
    """A run id from an id or a folder path (relative to the repository or the current folder)."""
    if "/" not in run.rstrip("/") and "\\" not in run:
        return run.rstrip("/")
    runs = (repo / RUNS_DIR).resolve()
    for base in (repo, Path.cwd()):
        resolved = (base / run).resolve()
        if resolved.parent == runs:
            return resolved.name
    raise BenchledgerError(Problem(file=run, message=f"is not a run folder under {runs}"))


def free_name(folder: Path, base: str) -> str:
    """base, or base-2, base-3, ... : the first name under folder that no receipt, signature or
    kept-trials folder holds yet, so a second receipt of the same verifier and day never
    replaces the first."""
    number = 1
    while True:
        name = base if number == 1 else f"{base}-{number}"
        taken = (folder / f"{name}.yaml", folder / f"{name}.yaml.sig", folder / name)
        if not any(path.exists() or path.is_symlink() for path in taken):
            return name
        number += 1


def predates(run_day: dt.date, day: dt.date, run_id: str) -> None:
    """Refuse a receipt dated before its run was measured: check would refuse it."""
    if day < run_day:
        raise BenchledgerError(
            Problem(
                file="--date",
                message=f"{day.isoformat()} is before {run_id} was measured ({run_day.isoformat()}); "
                "a receipt cannot predate its run: give the day you verified it",
            )
        )


def write_receipt(
    repo: Path,
    run: str,
    *,
    by: str,
    method: str,
    statement: str | None = None,
    sign: Path | None = None,
    date: str | None = None,
) -> list[Path]:
    """Write runs/<id>/receipts/<date>-<slug>.yaml (and its .sig); return the files written."""
    if method not in METHODS:
        raise BenchledgerError(
            Problem(file="--method", message=f"expected one of {', '.join(METHODS)}, got {method!r}")
        )
    try:
        day = dt.date.fromisoformat(date) if date else dt.date.today()
    except ValueError:
        raise BenchledgerError(Problem(file="--date", message=f"{date!r} is not YYYY-MM-DD")) from None
    if not by.strip():
        raise BenchledgerError(Problem(file="--by", message="give the verifier's name"))
    run_id = resolve_run_id(repo, run)
    ledger = load(repo)
    mine = [p for p in ledger.errors if p.file.startswith(f"{RUNS_DIR}/{run_id}")]
    if mine:
        raise BenchledgerError(mine)
    if run_id not in ledger.runs:
        raise BenchledgerError(
            Problem(file=f"{RUNS_DIR}/{run_id}", message="no such run; give its folder (runs/<id>) or its id")
        )
    predates(ledger.runs[run_id].meta.date, day, run_id)
    folder = ledger.root / RUNS_DIR / run_id / RECEIPTS_DIR
    target = folder / f"{free_name(folder, f'{day.isoformat()}-{slug(by)}')}.yaml"
    receipt = {
        "schema": RECEIPT_SCHEMA,
        "verifier": by.strip(),
        "method": method,
        "date": day.isoformat(),
        "statement": statement,
        "files": hashed_files(ledger.runs[run_id].blobs),
    }
    if statement is None:
        del receipt["statement"]
    return write_signed(target, receipt, sign)


def write_signed(
    target: Path, receipt: dict[str, Any], key: Path | None, before: Callable[[], None] = lambda: None
) -> list[Path]:
    """The receipt (and its .sig when a key is given), signed as a draft first so that a
    failed signature writes nothing; `before` runs once signing succeeded (kept files)."""
    text = yaml.safe_dump(receipt, sort_keys=False, allow_unicode=True, width=100)
    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / target.name
        draft.write_text(text, encoding="utf-8")
        if key is not None:
            sign_file(draft, key)
        before()
        target.parent.mkdir(parents=True, exist_ok=True)
        written = [target]
        shutil.copyfile(draft, target)
        if key is not None:
            shutil.copyfile(draft.with_name(draft.name + ".sig"), target.with_name(target.name + ".sig"))
            written.append(target.with_name(target.name + ".sig"))
    return written


def sign_file(path: Path, key: Path) -> None:
    if shutil.which("ssh-keygen") is None:
        raise BenchledgerError(
            Problem(
                file="--sign",
                message="ssh-keygen is not installed; install OpenSSH "
                "(Debian: apt-get install openssh-client) or verify without --sign",
            )
        )
    if not key.is_file():
        raise BenchledgerError(Problem(file=str(key), message="no such key file"))
    done = subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", NAMESPACE, str(path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise BenchledgerError(Problem(file=str(key), message=f"ssh-keygen could not sign: {done.stderr.strip()}"))
