"""What every importer produces, and how it becomes a run folder: the same atomic writing and
`--force` rule as the runner, the original files kept in raw/ with their hashes in run.yaml."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from ..errors import BenchledgerError, Problem
from ..format.commands import HIDDEN, describe
from ..format.hashing import file_hash
from ..format.models import MANIFEST_SCHEMA, RUN_SCHEMA
from ..format.paths import file_name, is_local_path, local_paths
from ..format.scratch import MARK
from ..ledger.publication import reserved_id
from ..ledger.runs import LOCAL_PATH, parse_run, run_digest
from ..ledger.yamlio import Lines, parse_yaml
from ..runner.writer import RunWriter, check_target, files_words
from .credentials import refuse_credentials

MAX_INPUT_BYTES = 256 * 1024 * 1024


@dataclass(kw_only=True)
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
    captured_at: dt.datetime | None = None  # when the tool recorded the machine, when it says (manifest captured.at)
    undated: str = ""  # why `date` is None though the files hold a date (it could not be read), as a note


@dataclass(frozen=True, kw_only=True)
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
    """Each input file's name (as kept under raw/) and bytes, refusing what is missing, a folder,
    too large, or given twice. Files of one base name from different folders keep distinct
    names: result.json, result-2.json, ..."""
    out: list[tuple[str, bytes]] = []
    names: set[str] = set()
    first: dict[bytes, Path] = {}
    for path in paths:
        if not path.is_file():
            raise BenchledgerError(Problem(file=str(path), message="no such file; give the tool's output file"))
        unshown = _UNSHOWN.search(path.name)
        if unshown is not None:  # kept as raw/NAME and in the title: refused, never written or printed raw
            code = ord(unshown.group())
            held = f"the byte 0x{code - 0xDC00:02X} (not UTF-8)" if 0xDC80 <= code <= 0xDCFF else ""
            message = (
                f"its name holds {held or describe(unshown.group())} at character {unshown.start() + 1}, which a "
                "terminal or a page does not show as itself; the name is kept under raw/ and in the run's title, so "
                "rename the file and import again"
            )
            raise BenchledgerError(Problem(file=_escaped(str(path)), message=message))
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise BenchledgerError(Problem(file=str(path), message=f"is larger than {MAX_INPUT_BYTES:,} bytes"))
        data = path.read_bytes()
        digest = hashlib.sha256(data).digest()
        if digest in first:
            message = (
                f"holds the same bytes as {first[digest]}; give each result file once "
                "(a file given twice would count its trials twice)"
            )
            raise BenchledgerError(Problem(file=str(path), message=message))
        first[digest] = path
        out.append((_distinct(path.name, names), data))
    return out


# what a file name kept under raw/ may not hold: what a recorded command may not (HIDDEN), tab and
# line feed too
_UNSHOWN = re.compile(f"[\\t\\n]|{HIDDEN.pattern}")


def _escaped(text: str) -> str:
    """`text` with what _UNSHOWN finds written \\t, \\n, \\x1b, \\u202e or \\U000e0041."""

    def code(found: re.Match[str]) -> str:
        ch = found.group()
        n = ord(ch)
        return {"\t": "\\t", "\n": "\\n"}.get(ch) or (
            f"\\x{n:02x}" if n < 256 else f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"
        )

    return _UNSHOWN.sub(code, text)


def _distinct(name: str, taken: set[str]) -> str:
    """`name`, or `stem-2.suffix`, `stem-3.suffix`... when an earlier input took it."""
    stem, dot, suffix = name.partition(".") if not name.startswith(".") else (name, "", "")
    found, n = name, 1
    while found in taken:
        n += 1
        found = f"{stem}-{n}{dot}{suffix}"
    taken.add(found)
    return found


def load_json(name: str, data: bytes, what: str) -> Any:
    """A JSON document, or a located error saying it is not `what` or that it holds a credential."""
    try:
        found = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise BenchledgerError(Problem(file=name, message=f"is not {what} ({str(err)[:120]})")) from None
    refuse_credentials(name, found)
    return found


def finite(value: Any) -> TypeGuard[int | float]:
    """A JSON number (not a boolean) that is finite, as a float holds it: an integer past 1.8e308
    (JSON allows 400 digits) is not, where math.isfinite would raise OverflowError."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def positive(value: Any) -> TypeGuard[int | float]:
    return finite(value) and value > 0


def source(imported: Imported, options: Options) -> dict[str, Any]:
    """measured (your own per-trial data), republished (someone else's, cited), or reported
    (published summaries only, cited)."""
    if not imported.per_trial:
        if not options.citation:
            raise BenchledgerError(
                Problem(
                    file="--citation",
                    message=f"{imported.tool} {imported.format} output holds no per-trial values, so it becomes a "
                    "reported run: say who published it with --citation (and --url)",
                )
            )
        return {"kind": "reported", "citation": options.citation} | ({"url": options.url} if options.url else {})
    if options.citation or options.url:
        if not (options.citation and options.url):
            raise BenchledgerError(
                Problem(
                    file="--citation/--url", message="a run measured by someone else needs both --citation and --url"
                )
            )
        return {"kind": "republished", "citation": options.citation, "url": options.url}
    return {"kind": "measured"}


def write_run(
    imported: Imported, inputs: list[tuple[str, bytes]], options: Options, say: Callable[[str], None] | None = None
) -> Path:
    """The run folder, assembled beside the target and moved into place; with --force, `say` hears which
    files of the run folder it replaces, before and after."""
    reserved = reserved_id(options.run_id, "runs")
    if reserved is not None:
        raise BenchledgerError(Problem(file="--id", message=reserved))
    check_target(options.out, options.run_id, options.force)
    day = options.date or imported.date
    if day is None:
        day = dt.date.today()
        said = imported.undated or f"{imported.tool} records no date"
        imported.notes.append(f"{said}: this is the day of the import; use --date to set it.")
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
    writer = RunWriter(options.out, options.run_id, options.force, say=say)
    writer.add_rows(_exact(imported.rows), _exact(imported.requests))
    for path, data in raw.items():
        writer.write_raw_bytes(path.removeprefix("raw/"), data)
    columns = list(dict.fromkeys(k for row in imported.rows for k in row))
    captured: dict[str, Any] = {"by": f"benchledger import {imported.tool}", "method": "auto"}
    if imported.captured_at is not None:
        captured = {"at": imported.captured_at.isoformat(), **captured}
    manifest = {"schema": MANIFEST_SCHEMA, "captured": captured}
    _refuse_unchecked(writer, run, manifest | imported.manifest, columns, options)
    folder = writer.finish(run, manifest | imported.manifest, columns)
    if writer.replaced is not None and say is not None:
        say(f"Replaced {folder}: {files_words(writer.replaced)} were deleted.")
    return folder


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


def _refuse_unchecked(
    writer: RunWriter, run: dict[str, Any], manifest: dict[str, Any], columns: list[str], options: Options
) -> None:
    """Read the assembled folder as `check` will, before it is moved into place: an import
    never writes a run folder that check refuses (nothing is written then)."""
    writer._write_csv("results.csv", writer.results, columns)
    for name, data in (("run.yaml", run), ("manifest.yaml", manifest)):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
        (writer.tmp / name).write_text(text, encoding="utf-8")  # finish() writes the same bytes
    files = sorted(p for p in writer.tmp.rglob("*") if p.is_file() and p != writer.tmp / MARK)
    blobs = {p.relative_to(writer.tmp).as_posix(): p.read_bytes() for p in files}
    _, problems = parse_run(options.out / options.run_id, blobs, [], run_digest(blobs))
    kept = options.keep_paths  # asked for: the paths are written, and check names them with the fix
    errors = [p for p in problems if p.severity == "error" and not (kept and p.message.startswith(LOCAL_PATH))]
    if errors:
        writer.abandon()
        note = "; check would refuse the imported run, so nothing was written"
        raise BenchledgerError(
            [Problem(file=p.file, line=p.line, field=p.field, message=p.message + note) for p in errors]
        )


_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def located(files: Sequence[tuple[str, bytes]], parse: Callable[[Sequence[tuple[str, bytes]]], Imported]) -> Imported:
    """`parse(files)`, its errors at JSON paths (`$.benchmarks[0].stats.mean`) also citing the line
    of the file the user gave where that value stands (the nearest enclosing one it finds)."""
    try:
        return parse(files)
    except BenchledgerError as err:
        data = dict(files)
        found: dict[str, Lines] = {}
        problems = []
        for p in err.problems:
            if p.line is None and p.file in data and p.field and p.field.startswith("$"):
                lines = found[p.file] if p.file in found else found.setdefault(p.file, _lines(data[p.file], p.file))
                p = Problem(file=p.file, line=_line_of(p.field, lines), field=p.field, message=p.message)
            problems.append(p)
        raise BenchledgerError(problems) from None


def _lines(data: bytes, name: str) -> Lines:
    """Each value's line in a JSON or YAML document (JSON read as YAML), or {} when unreadable or
    written on one line (GuideLLM's JSON: there the path alone locates the value)."""
    if data.count(b"\n", 0, len(data.rstrip())) == 0:
        return {}
    try:
        return parse_yaml(data.decode("utf-8-sig"), name)[1]
    except (BenchledgerError, UnicodeDecodeError, ValueError, RecursionError):
        return {}


def _line_of(field: str, lines: Lines) -> int | None:
    path: tuple[str | int, ...] = tuple(int(i) if i else key for key, i in _STEP.findall(field.split(" ")[0]))
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None
