"""What every importer produces, and how it becomes a run folder: the same atomic writing and
`--force` rule as the runner, the original files kept in raw/ with their hashes in run.yaml."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeGuard, TypeVar

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

MAX_INPUT_BYTES = 256 * 1024 * 1024
T = TypeVar("T")


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


SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "pwd", "authorization", "bearer", "credential", "credentials", "cookie"}
)
SECRET_JOINED = ("apikey", "accesskey", "privatekey", "secretkey", "sessionkey")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# userinfo with a password, or a user name long enough to be a token (https://ghp_...@host);
# ssh://git@host is neither. A scheme is tried only where a run of scheme characters begins
# (the lookbehind), so a 100,000-letter value is scanned once, not once per letter: linear.
_USERINFO = re.compile(
    r"(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#\s@:]*:[^/?#\s@]+|[^/?#\s@:]{20,})@"
)
_BEARER = re.compile(r"\bbearer\s+[A-Za-z0-9._~+/=-]{12,}", re.I)
_ASSIGNED = re.compile(r"^-{0,2}([A-Za-z0-9_.-]+)[=:]\s*(.+)$")
_QUERY = re.compile(r"[?&]([^=&#\s]+)=([^&#\s]+)")


def secret_name(name: str) -> bool:
    """A key, header, flag or variable name that holds a credential: api_key, openai_api_key,
    X-Api-Key, hf_token, bearer_token, client_secret, password, Authorization, --api-key...
    (the name's last word, or api key and the like anywhere in it: `tokens`, `max_tokens`,
    `tokenizer`, `time_to_first_token_ms` are not credentials)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    joined = "".join(words)
    return bool(words) and (words[-1] in SECRET_WORDS or any(s in joined for s in SECRET_JOINED))


def redacted(value: str) -> bool:
    text = value.strip().strip("\"'")
    return not text.strip("*") or text in ("None", "null") or "redacted" in text.lower() or text.startswith("${")


def secret_in_text(text: str) -> bool:
    """A credential inside a string: userinfo in a URL, a bearer token, a secret query
    parameter, or `NAME=value` / `Header: value` with a secret name."""
    if _USERINFO.search(text) or _BEARER.search(text):
        return True
    if any(secret_name(k) and not redacted(v) for k, v in _QUERY.findall(text)):
        return True
    assigned = _ASSIGNED.match(text.strip())
    return assigned is not None and secret_name(assigned.group(1)) and not redacted(assigned.group(2))


def credential_paths(document: Any) -> list[str]:
    """JSON paths of credentials in a parsed document, however deeply nested: a string under a
    secret key (in nested objects and header maps), the item after a secret flag in an
    argument list (`--api-key VALUE`), and any string holding one (secret_in_text)."""
    found: list[str] = []
    stack: list[tuple[Any, str, bool]] = [(document, "$", False)]  # node, its path, named secret
    while stack:
        node, path, named = stack.pop()
        if isinstance(node, str):
            if (named and not redacted(node)) or secret_in_text(node):
                found.append(path)
        elif isinstance(node, dict):
            stack += [(value, f"{path}.{key}", named or secret_name(str(key))) for key, value in node.items()]
        elif isinstance(node, list):
            for i, value in enumerate(node):
                flag = node[i - 1] if i > 0 else None
                after_flag = isinstance(flag, str) and flag.startswith("-") and secret_name(flag)
                stack.append((value, f"{path}[{i}]", named or after_flag))
    return sorted(found)


def refuse_credentials(name: str, document: Any) -> None:
    """An input holding a credential is refused: its original is published under raw/."""
    found = list(credential_paths(document))
    if found:
        message = (
            "holds a credential; the original file is published under raw/, so remove or redact it "
            '(e.g. "***") and import again'
        )
        raise BenchledgerError([Problem(file=name, field=where, message=message) for where in found])


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


@dataclass(frozen=True, kw_only=True)
class Machine:
    """What a result file records of the machine it ran on: the host (name, CPU, OS) with its
    accelerators; None or empty where the file records nothing. `naming` says whose names the
    accelerators carry (llama-bench: the backend, since CUDA, ROCm and Vulkan describe one GPU
    differently); names are compared only between files of one naming."""

    name: str | None = None
    cpu: str | None = None
    os: str | None = None
    accelerators: tuple[str, ...] = ()
    naming: str | None = None

    def described(self) -> str:
        """'minibox (Linux 3.13.0-55-generic)', 'AMD EPYC 7763 with NVIDIA A100, NVIDIA A100'."""
        host = " ".join(x for x in (self.name, f"({self.os})" if self.os else None) if x) or None
        cpu = self.cpu if not host else (f"{host}, {self.cpu}" if self.cpu else host)
        gpus = ", ".join(self.accelerators)
        shown = " with ".join(x for x in (cpu, gpus) if x)
        return shown[:200] or "a machine the file does not describe"


def machine_of(manifest: dict[str, Any], naming: str | None = None) -> Machine:
    """The machine a manifest's `host` and `accelerators` sections describe."""
    found, listed = manifest.get("host"), manifest.get("accelerators")
    host: dict[str, Any] = found if isinstance(found, dict) else {}
    gpus: list[Any] = listed if isinstance(listed, list) else []
    names = tuple(str(g["name"]) for g in gpus if isinstance(g, dict) and g.get("name"))

    def text(key: str) -> str | None:
        value = host.get(key)
        return str(value).strip() or None if value is not None else None

    return Machine(name=text("name"), cpu=text("cpu"), os=text("os"), accelerators=names, naming=naming)


def same_machine(a: Machine, b: Machine) -> bool:
    """One machine, unless a host field both record differs, or the accelerators of one are not
    all among the other's (a run on GPU 0, GPU 1 or both is still that machine: the devices a
    run chose are its condition, not another machine)."""
    if any(x and y and x != y for x, y in ((a.name, b.name), (a.cpu, b.cpu), (a.os, b.os))):
        return False
    if not (a.accelerators and b.accelerators) or a.naming != b.naming:
        return True
    few, many = sorted((Counter(a.accelerators), Counter(b.accelerators)), key=lambda c: c.total())
    return not few - many


def _merged(a: Machine, b: Machine) -> Machine:
    gpus = max((a.accelerators, b.accelerators), key=len)
    return Machine(
        name=a.name or b.name, cpu=a.cpu or b.cpu, os=a.os or b.os, accelerators=gpus, naming=a.naming or b.naming
    )


@dataclass(kw_only=True)
class OnMachine(Generic[T]):
    """The items (files, tests) measured on one machine, and where they are (for messages)."""

    machine: Machine
    items: list[T]
    where: list[str]


def by_machine(items: Iterable[tuple[T, Machine, str]]) -> list[OnMachine[T]]:
    """Items grouped by the machine they ran on, in order of first appearance; `where` names
    each group's places (file names, or 'file lines 1-40'), each once."""
    groups: list[OnMachine[T]] = []
    for item, machine, where in items:
        group = next((g for g in groups if same_machine(g.machine, machine)), None)
        if group is None:
            groups.append(OnMachine(machine=machine, items=[item], where=[where]))
            continue
        group.machine = _merged(group.machine, machine)
        group.items.append(item)
        if where not in group.where:
            group.where.append(where)
    return groups


def refuse_machines(groups: Sequence[OnMachine[Any]]) -> None:
    """Machines never merge: inputs from two machines are refused in one line naming both."""
    if len(groups) < 2:
        return
    a, b = groups[0], groups[1]
    more = f" and {len(groups) - 2} more" if len(groups) > 2 else ""
    message = (
        f"comes from another machine than {_places(a.where)}: {b.machine.described()}, not "
        f"{a.machine.described()}{more}; a run is measured on one machine, so import each machine's results as "
        "its own run, or give --split-by machine to write one run per machine"
    )
    raise BenchledgerError(Problem(file=_places(b.where), message=message))


def _places(where: list[str]) -> str:
    return ", ".join(where[:3]) + (f" (+{len(where) - 3} more)" if len(where) > 3 else "")


def per_machine(
    files: Sequence[tuple[str, bytes]],
    parse: Callable[[Sequence[tuple[str, bytes]]], Imported],
    machine: Callable[[Imported], Machine] | None = None,
) -> list[tuple[OnMachine[tuple[str, bytes]], Imported]]:
    """The files grouped by the machine each records (its manifest's host and accelerators, or
    what the importer's `machine` reads), each group read into one run: the one rule every
    importer that takes several files follows."""
    recorded = machine or (lambda imported: machine_of(imported.manifest))
    if len(files) == 1:
        imported = parse(files)
        return [(OnMachine(machine=recorded(imported), items=list(files), where=[files[0][0]]), imported)]
    groups = by_machine((f, recorded(parse([f])), f[0]) for f in files)
    return [(g, parse(g.items)) for g in groups]


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
