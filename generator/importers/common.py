"""What every importer produces, and how it becomes a run folder: the same atomic writing and
`--force` rule as the runner, the original files kept in raw/ with their hashes in run.yaml."""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..errors import BenchledgerError, Problem
from ..format.hashing import file_hash
from ..format.models import MANIFEST_SCHEMA, RUN_SCHEMA
from ..format.paths import file_name, is_local_path, local_paths
from ..runner.writer import RunWriter, check_target

MAX_INPUT_BYTES = 256 * 1024 * 1024


@dataclass
class Imported:
    """A foreign result file read into benchledger's shape (nothing written yet)."""

    tool: str
    format: str
    conditions: list[str]
    metrics: dict[str, dict[str, str]]  # name -> {unit, better}
    rows: list[dict[str, Any]]  # results.csv rows: trial (or None), conditions, metrics (and M.sd, M.n)
    manifest: dict[str, Any]
    date: dt.date | None
    trial_unit: str | None
    per_trial: bool  # False: published summaries only (a reported run)
    notes: list[str] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)  # run.yaml `excluded:` entries
    requests: list[dict[str, Any]] = field(default_factory=list)  # requests.csv rows, when the tool keeps them
    rates: dict[str, dict[str, str]] = field(default_factory=dict)  # run.yaml `rates:` (counts -> proportion)


@dataclass(frozen=True)
class Options:
    """What the person importing says about the run (the file cannot)."""

    run_id: str
    out: Path
    force: bool = False
    title: str | None = None
    benchmark: str | None = None
    setup: dict[str, Any] = field(default_factory=dict)
    citation: str | None = None
    url: str | None = None
    date: dt.date | None = None
    keep_paths: bool = False  # keep local absolute paths (check refuses them); else their file names


def read_inputs(paths: list[Path]) -> list[tuple[str, bytes]]:
    """Each input file's name and bytes, refusing what is missing, a folder or too large."""
    out = []
    for path in paths:
        if not path.is_file():
            raise BenchledgerError(Problem(str(path), None, None, "no such file; give the tool's output file"))
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise BenchledgerError(Problem(str(path), None, None, f"is larger than {MAX_INPUT_BYTES:,} bytes"))
        out.append((path.name, path.read_bytes()))
    return out


def load_json(name: str, data: bytes, what: str) -> Any:
    """A JSON document, or a located error saying it is not `what`."""
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise BenchledgerError(Problem(name, None, None, f"is not {what} ({str(err)[:120]})")) from None


def finite(value: Any) -> TypeGuard[int | float]:
    """A JSON number (not a boolean) that is finite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def positive(value: Any) -> TypeGuard[int | float]:
    return finite(value) and value > 0


def source(imported: Imported, options: Options) -> dict[str, Any]:
    """measured (your own per-trial data), republished (someone else's, cited), or reported
    (published summaries only, cited)."""
    if not imported.per_trial:
        if not options.citation:
            raise BenchledgerError(
                Problem(
                    "--citation",
                    None,
                    None,
                    f"{imported.tool} {imported.format} output holds no per-trial values, so it becomes a reported "
                    "run: say who published it with --citation (and --url)",
                )
            )
        return {"kind": "reported", "citation": options.citation} | ({"url": options.url} if options.url else {})
    if options.citation or options.url:
        if not (options.citation and options.url):
            raise BenchledgerError(
                Problem(
                    "--citation/--url", None, None, "a run measured by someone else needs both --citation and --url"
                )
            )
        return {"kind": "republished", "citation": options.citation, "url": options.url}
    return {"kind": "measured"}


def write_run(imported: Imported, inputs: list[tuple[str, bytes]], options: Options) -> Path:
    """The run folder, assembled beside the target and renamed into place."""
    check_target(options.out, options.run_id, options.force)
    day = options.date or imported.date
    if day is None:
        day = dt.date.today()
        imported.notes.append(f"{imported.tool} records no date: this is the day of the import; use --date to set it.")
    src = source(imported, options)
    if not options.keep_paths:
        _reduce_paths(imported)
    raw = {f"raw/{name}": data for name, data in inputs}
    run: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "id": options.run_id,
        "title": options.title or f"{imported.tool} results imported from {', '.join(n for n, _ in inputs)}",
        "date": day.isoformat(),
        "benchmark": options.benchmark or imported.tool,
        "setup": options.setup,
        "conditions": imported.conditions,
        "metrics": imported.metrics,
        **({"rates": imported.rates} if imported.rates else {}),
        "source": src,
        "imported": {
            "tool": imported.tool,
            "format": imported.format,
            "files": {path: file_hash(data) for path, data in raw.items()},
        },
    }
    if imported.trial_unit:
        run["trial_unit"] = imported.trial_unit
    if imported.excluded:
        run["excluded"] = imported.excluded
    if imported.notes:
        run["notes"] = "\n\n".join(imported.notes) + "\n"
    writer = RunWriter(options.out, options.run_id, options.force)
    writer.add_rows(_exact(imported.rows), _exact(imported.requests))
    for path, data in raw.items():
        writer.write_raw_bytes(path.removeprefix("raw/"), data)
    columns = list(dict.fromkeys(k for row in imported.rows for k in row))
    manifest = {"schema": MANIFEST_SCHEMA, "captured": {"by": f"benchledger import {imported.tool}", "method": "auto"}}
    return writer.finish(run, manifest | imported.manifest, columns)


def _reduce_paths(imported: Imported) -> None:
    """Local absolute paths (a model file on the measuring machine) become their file names: a
    publication names the file, not the publisher's disk (the original stays under raw/)."""
    found = sorted({value for _, value in local_paths(imported.manifest)})
    for rows in (imported.rows, imported.requests):
        found += sorted({v for row in rows for v in row.values() if is_local_path(v)} - set(found))
    if not found:
        return
    imported.manifest = _reduced(imported.manifest)
    for rows in (imported.rows, imported.requests):
        for row in rows:
            row.update({k: file_name(v) for k, v in row.items() if is_local_path(v)})
    shown = ", ".join(f"`{file_name(v)}`" for v in found[:5])
    imported.notes.append(
        f"Local paths were reduced to their file names ({shown}); the original file under raw/ keeps them."
    )


def _reduced(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _reduced(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_reduced(v) for v in data]
    return file_name(data) if is_local_path(data) else data


def _exact(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Floats written with every digit they have (repr is the shortest text that reads back the
    same number), not rounded to the runner's six significant digits."""
    return [{k: _digits(v) if isinstance(v, float) else v for k, v in row.items()} for row in rows]


def _digits(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
