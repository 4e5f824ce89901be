"""`benchledger rerun`: make a run again from the invocation its runner recorded, compare every
figure with the original by the equivalence test, and write a `method: rerun` receipt that
keeps the new trials beside it (receipts/<name>/), so the rerun can itself be inspected.

The rerun is measured into a temporary folder outside the publication; only the receipt and
the kept files are written into the run folder, and only when the environment the rerun
recorded matches the original's in every key the verifier did not allow to differ.

Measuring is the runner's work, which this room may not import: the caller passes a `Measure`
(the CLI passes `benchledger run` itself, parsed and run in this process), so the command shown
to the person is the one executed, read by the parser that wrote the invocation.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from ..analysis.comparison import environment
from ..analysis.reproduction import Figure, Outcome, figures, outcome
from ..errors import BenchledgerError, Problem
from ..format.commands import FOLD_AT, FOLD_WIDTH, folded, shell_line
from ..format.hashing import RECEIPTS_DIR, file_hash, hashed_files
from ..format.models import RECEIPT_SCHEMA
from ..format.paths import file_name, is_local_path
from ..ledger.invocation import option_value, runner_argv
from ..ledger.load import load
from ..ledger.records import RUNS_DIR, Run
from ..ledger.runs import load_run
from .receipt import free_name, predates, resolve_run_id, slug, write_signed
from .rerun_line import check_reading, recorded_line, with_option

KEPT = ("results.csv", "run.yaml", "manifest.yaml")
RECEIPTS = RECEIPTS_DIR.rstrip("/")
AUTO_MANIFEST = ("schema", "captured", "host", "software", "accelerators", "server", "environment")

Measure = Callable[[list[str]], int]
"""Runs `benchledger ARGV` (a `run openai` or `run command` line) and returns its exit status."""

Read = Callable[[list[str]], Mapping[str, Any]]
"""The parameters `benchledger ARGV` would measure with, read by the same parser, without
measuring; a line the parser refuses raises BenchledgerError."""


@dataclass(frozen=True)
class Rerun:
    receipt: Path
    written: tuple[Path, ...]
    figures: tuple[Figure, ...]
    outcome: Outcome  # the state with its counts, as the site will say it
    differences: tuple[tuple[str, object, object], ...]


@dataclass(frozen=True)
class Request:
    """What the verifier asked for."""

    run: str
    by: str
    base_url: str | None = None
    trials: int | None = None
    margin: float | None = None
    allow: tuple[str, ...] = ()
    sign: Path | None = None
    date: str | None = None


def refuse() -> bool:
    """The default consent: none (a caller that runs commands must ask the person)."""
    return False


def rerun(
    repo: Path,
    ask: Request,
    measure: Measure,
    *,
    read: Read,
    echo: Callable[[str], None] = print,
    consent: Callable[[], bool] = refuse,
) -> Rerun:
    """Re-execute the run's recorded invocation with `measure`, compare, and write the receipt.

    The exact command is shown (echo) and run only when `consent` says yes: rerunning a run
    folder someone else wrote runs their command with your rights."""
    if not ask.by.strip():
        raise BenchledgerError(Problem(file="--by", message="give the verifier's name"))
    day = _day(ask.date)
    ledger = load(repo)
    run_id = resolve_run_id(repo, ask.run)
    mine = [p for p in ledger.errors if p.file.startswith(f"{RUNS_DIR}/{run_id}")]
    if mine:
        raise BenchledgerError(mine)
    if run_id not in ledger.runs:
        raise BenchledgerError(Problem(file=f"{RUNS_DIR}/{run_id}", message="no such run; give its folder or its id"))
    original = ledger.runs[run_id]
    _vouched(original)
    argv = recorded_line(original, base_url=ask.base_url, trials=ask.trials)
    predates(original.meta.date, day, run_id)
    folder = ledger.root / RUNS_DIR / run_id
    name = free_name(folder / RECEIPTS, f"{day.isoformat()}-rerun-{slug(ask.by)}")
    target = folder / RECEIPTS / f"{name}.yaml"
    with tempfile.TemporaryDirectory(prefix="benchledger-rerun-") as tmp:
        made = _measure(Path(tmp), original, argv, (read, measure), echo, consent)
        differences = _differences(original, made)
        refused = [d for d in differences if not _allowed(d[0], ask.allow)]
        if refused:
            raise BenchledgerError(
                [
                    Problem(
                        file=f"{RUNS_DIR}/{run_id}",
                        field=key,
                        message=f"differs: {old!r} in the run, {new!r} in the rerun; the rerun is not a "
                        f"reproduction of this run (pass --allow-difference {key} if the difference is known "
                        "and harmless)",
                    )
                    for key, old, new in refused
                ]
            )
        found = tuple(figures(original, made.results, ask.margin))
        kept = {f"{RECEIPTS}/{name}/{file}": (Path(tmp) / "rerun" / file).read_bytes() for file in KEPT}
    receipt = _receipt(original, ask, day, name, kept=kept, found=found, differences=differences)
    written = _write(folder, target, receipt, kept, ask.sign)
    return Rerun(target, tuple(written), found, outcome(found), tuple(differences))


def _day(text: str | None) -> dt.date:
    try:
        return dt.date.fromisoformat(text) if text else dt.date.today()
    except ValueError:
        raise BenchledgerError(Problem(file="--date", message=f"{text!r} is not YYYY-MM-DD")) from None


def _vouched(run: Run) -> None:
    """A run.yaml changed since a receipt vouched for it may hold an edited invocation: refused."""
    for receipt in run.receipts:
        listed = receipt.data.files.get("run.yaml")
        if listed is not None and listed != file_hash(run.blobs["run.yaml"]):
            message = (
                f"changed since {receipt.name} vouched for it, so its invocation may have been edited; "
                "compare it with the committed history, then restore it or verify the run again"
            )
            raise BenchledgerError(Problem(file=f"{RUNS_DIR}/{run.id}/run.yaml", message=message))


def _measure(
    tmp: Path,
    original: Run,
    argv: list[str],
    runner: tuple[Read, Measure],
    echo: Callable[[str], None],
    consent: Callable[[], bool],
) -> Run:
    """Run the runner into tmp/rerun, once the person consented to the exact command. The
    manifest extras are rebuilt from the original manifest (every section the runner does not
    capture itself), never read from a path the run folder names."""
    manifest = original.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
    rebuilt = {k: v for k, v in manifest.items() if k not in AUTO_MANIFEST}
    (tmp / "extra.yaml").write_text(yaml.safe_dump(rebuilt, sort_keys=False), encoding="utf-8")
    argv = with_option(argv, "--manifest-extra", str(tmp / "extra.yaml"))
    argv = with_option(with_option(argv, "--id", "rerun"), "--out", str(tmp))
    read, measure = runner
    try:
        given = read(argv)  # what the parser will hand the runner, before anything is shown or run
    except BenchledgerError as err:
        where = f"{RUNS_DIR}/{original.id}/run.yaml"
        raise BenchledgerError(
            [Problem(file=where, field="runner.invocation", message=p.message) for p in err.problems]
        ) from None
    check_reading(original, given, argv)
    command = [sys.executable, "-m", "generator.cli", *argv]  # the same command, as a person would type it
    echo(f"benchledger rerun will execute the command recorded in {RUNS_DIR}/{original.id}/run.yaml:")
    _show(shell_line(command), echo)
    if original.meta.runner is not None and option_value(runner_argv(original.meta.runner), "--ray") is not None:
        echo("(the recorded --ray is left out: a rerun measures from this machine, with its own worker processes)")
    if original.meta.runner is not None and original.meta.runner.kind == "command":
        _show(shell_line(given["command"]), echo, "which runs this program once per trial, with your rights: ")
    if not consent():  # asked once the command is shown
        message = "not confirmed; nothing was run (pass --yes to run it without asking)"
        raise BenchledgerError(
            Problem(file=f"{RUNS_DIR}/{original.id}/run.yaml", field="runner.invocation", message=message)
        )
    with _interrupts_abort():
        status = measure(argv)
    if status != 0 or not (tmp / "rerun" / "results.csv").is_file():
        message = f"the rerun failed (exit {status}); nothing was written (its output is above)"
        raise BenchledgerError(Problem(file=f"{RUNS_DIR}/{original.id}", message=message))
    return _made(tmp / "rerun", original)


def _show(line: str, echo: Callable[[str], None], lead: str = "  ") -> None:
    """A command as a shell reads it after `lead`: on one line, or, past FOLD_AT characters,
    folded in indented lines of FOLD_WIDTH under a line that says so (the command's own tabs and
    line breaks are written \\t and \\n, so every break shown is a fold)."""
    if len(line) <= FOLD_AT:
        echo(lead + line)
        return
    echo(
        f"{lead}({len(line):,} characters, folded every {FOLD_WIDTH}: the line breaks below are not in the "
        "command; its own tabs and line breaks show as \\t and \\n)"
    )
    for piece in folded(line):
        echo("  " + piece)


@contextlib.contextmanager
def _interrupts_abort() -> Iterator[None]:
    """Ctrl-C while the rerun measures ends the rerun with nothing written. The runner keeps the
    trials completed before a Ctrl-C as a shorter run, which is right for a run but would let a
    rerun cut short be compared and receipted: the interrupt is noted here and raised again once
    the runner has returned (as when the runner was a child process that got the same signal)."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous == signal.SIG_IGN:
        yield  # signal handlers belong to the main thread; an ignored Ctrl-C stays ignored
        return
    interrupted = False

    def note(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        interrupted = True
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt


def _made(folder: Path, original: Run) -> Run:
    """The rerun's folder read like any run, measured at the original's conditions."""
    made, problems = load_run(folder)
    if made is None:
        raise BenchledgerError(problems)
    if made.meta.incomplete is not None:  # a rerun cut short (its runner stopped early) reproduces nothing
        message = (
            f"the rerun stopped early ({made.meta.incomplete.words}); nothing was written: a rerun cut short "
            "reproduces nothing"
        )
        raise BenchledgerError(Problem(file=f"{RUNS_DIR}/{original.id}", message=message))
    if made.results.conditions != original.results.conditions:
        shown = f"{list(made.results.conditions)} instead of {list(original.results.conditions)}"
        raise BenchledgerError(
            Problem(file=f"{RUNS_DIR}/{original.id}", field="conditions", message=f"the rerun measured {shown}")
        )
    return made


def _differences(original: Run, made: Run) -> list[tuple[str, object, object]]:
    """Recorded keys whose value differs between the run and the rerun. A local path and its file
    name are the same value: the runner writes paths as file names unless --keep-paths, and a run
    made before it did (or with --keep-paths) still names the same model file."""
    a, b = environment(original), environment(made)
    return [
        (k, a.get(k, "(absent)"), b.get(k, "(absent)"))
        for k in sorted(set(a) | set(b))
        if _named(a.get(k)) != _named(b.get(k))
    ]


def _named(value: object) -> object:
    return file_name(value) if isinstance(value, str) and is_local_path(value) else value


def _allowed(key: str, allow: Sequence[str]) -> bool:
    return any(key == a or key.startswith(a + ".") for a in allow)


def _receipt(
    run: Run,
    ask: Request,
    day: dt.date,
    name: str,
    *,
    kept: dict[str, bytes],
    found: Sequence[Figure],
    differences: Sequence[tuple[str, object, object]],
) -> dict[str, Any]:
    """The receipt: the statement says the outcome in the site's words; the site recomputes it
    from the kept trials and never reads the statement (older receipts said "4 of 12 figures
    agree (partly reproduced)")."""
    statement = (
        f"Re-ran the recorded invocation with benchledger rerun: {outcome(found).words}. "
        f"The new trials are kept under {RECEIPTS}/{name}/."
    )
    return {
        "schema": RECEIPT_SCHEMA,
        "verifier": ask.by.strip(),
        "method": "rerun",
        "date": day.isoformat(),
        "statement": statement,
        "files": hashed_files(run.blobs),
        "rerun": {
            "files": {path: file_hash(data) for path, data in kept.items()},
            **({"margin": ask.margin} if ask.margin is not None else {}),
            "allowed_differences": list(ask.allow),
            "differences": [{"key": k, "original": _scalar(a), "rerun": _scalar(b)} for k, a, b in differences],
            "figures": [_figure(f) for f in found],
        },
    }


def _scalar(value: object) -> object:
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def _figure(f: Figure) -> dict[str, Any]:
    out: dict[str, Any] = {"metric": f.metric, "at": dict(f.at)}
    for key in ("ratio", "low", "high"):
        value = getattr(f, key)
        if value is not None:
            out[key] = round(value, 6)
    return out | {"margin": round(f.margin, 6), "status": f.status}


def _write(folder: Path, target: Path, receipt: dict[str, Any], kept: dict[str, bytes], key: Path | None) -> list[Path]:
    """The kept files, then the receipt (and its signature): nothing existing is replaced."""
    written: list[Path] = []

    def keep() -> None:
        for path, data in kept.items():
            out = folder / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            written.append(out)

    receipt_files = write_signed(target, receipt, key, keep)
    return written + receipt_files
