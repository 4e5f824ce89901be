"""Read one run folder into a `Run`: its YAML files, its tables and its receipts.

Every problem is collected with its file, line and field; a run with an error
is returned as None beside its problems.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.hashing import file_hash, normalized_bytes
from ..format.models import MANIFEST_SCHEMA, RECEIPT_SCHEMA, RUN_ID, RUN_SCHEMA, ManifestFile, ReceiptFile, RunFile
from ..format.paths import file_name, is_local_path, local_paths
from .invocation import invocation_problems
from .publication import chart_name_problems, published_file_problems, reserved_id
from .records import RUNS_DIR, Receipt, Request, Results, Run
from .seen_runs import SeenRuns, Signature, unchanged
from .tables import mark_excluded, parse_requests, parse_results
from .yamlio import Lines, line_for, load_model

Parsed = tuple[RunFile, ManifestFile, Results, tuple[Request, ...] | None, tuple[Receipt, ...]]
ParsedRuns = MutableMapping[tuple[str, str], Parsed]  # (folder name, digest of its files) -> what they parse to


def decode(data: bytes, rel: str) -> str:
    """UTF-8 text with CRLF normalized, or a located problem."""
    try:
        return normalized_bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise BenchledgerError(
            Problem(file=rel, message=f"is not UTF-8 text (byte {err.start}); save it as UTF-8")
        ) from None


def _walk(
    folder: Path, rel: str, problems: list[Problem], inner: str = "", stats: list[Signature] | None = None
) -> list[str]:
    """Every regular file under a run folder, run-relative, in sorted order; symlinks are problems.
    `stats` gets each file's `Signature`, in the order the folders are walked."""
    files = []
    with os.scandir(folder / inner if inner else folder) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        name = f"{inner}{entry.name}"
        mode = entry.stat(follow_symlinks=False).st_mode
        shown = os.fsencode(name).decode("utf-8", "backslashreplace")
        if shown != name:  # bytes that are not UTF-8: no receipt or page can name the file
            problems.append(Problem(file=f"{rel}/{shown}", message="is not a UTF-8 file name; rename it"))
        elif stat.S_ISLNK(mode):
            message = "is a symlink; symlinks are refused under runs/: replace it with the real file"
            problems.append(Problem(file=f"{rel}/{name}", message=message))
        elif stat.S_ISREG(mode):
            files.append(name)
            if stats is not None:
                info = entry.stat(follow_symlinks=False)
                stats.append((name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev))
        elif stat.S_ISDIR(mode):
            if stats is not None:  # a folder's times change as entries are added, removed or renamed
                info = entry.stat(follow_symlinks=False)
                stats.append((f"{name}/", 0, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev))
            files += _walk(folder, rel, problems, f"{name}/", stats)
        else:
            problems.append(Problem(file=f"{rel}/{name}", message="is not a regular file; remove it"))
    return sorted(files)


def run_digest(blobs: Mapping[str, bytes]) -> str:
    """sha256 over every file's run-relative path and the sha256 of its bytes."""
    digest = hashlib.sha256()
    for name in sorted(blobs):
        digest.update(name.encode() + b"\0" + hashlib.sha256(blobs[name]).digest())
    return digest.hexdigest()


def load_run(
    folder: Path, cache: ParsedRuns | None = None, seen: SeenRuns | None = None
) -> tuple[Run | None, list[Problem]]:
    """Read one run folder and parse it. With a cache, a folder whose name and file bytes
    (every file is read and hashed each time) parsed cleanly before is not parsed again.
    With `seen` (`serve`'s, across rebuilds), a folder is not read at all while every file's
    and folder's signature (name, size, mtime, change time, inode, device: a write changes the
    change time, which no one can set; an entry added, removed or renamed changes its folder's)
    is the one it was read with, and every change time was over RACY_NS older than that read
    (`seen_runs.unchanged`),
    as git trusts its index. `ledger.load` passes `seen` only where the file system keeps
    change times (`keeps_change_times`)."""
    rid, rel = folder.name, f"{RUNS_DIR}/{folder.name}"
    walked: list[Problem] = []
    read_at = time.time_ns()  # before the walk: a write after it changes a signature
    stats: list[Signature] | None = None
    if seen is not None:
        info = os.lstat(folder)
        stats = [("./", 0, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)]
    files = _walk(folder, rel, walked, stats=stats)
    signature = tuple(stats or ())
    held = seen.get(rid) if seen is not None else None
    if held is not None and not walked and unchanged(held, signature):
        return held[2], list(held[3])
    blobs = {f: (folder / f).read_bytes() for f in files}
    digest = run_digest(blobs)
    known = cache.get((rid, digest)) if cache is not None and not walked else None
    if known is not None:
        run: Run | None = assembled(rid, blobs, digest, known)
        problems: list[Problem] = []
    else:
        run, problems = parse_run(folder, blobs, walked, digest)
        if cache is not None and run is not None:
            cache[(rid, digest)] = (run.meta, run.manifest, run.results, run.requests, run.receipts)
    if seen is not None:
        if run is not None and not walked:
            seen[rid] = (signature, read_at, run, list(problems))
        else:
            seen.pop(rid, None)
    return run, problems


def undeclared_metrics(run: Run) -> list[Problem]:
    """A warning per metric declared with neither a unit nor a direction: shown, never judged,
    and read without knowing what it counts."""
    return [
        Problem(
            file=f"{run.path}/run.yaml",
            field=f"metrics.{name}",
            message="has neither unit nor better: claims cannot judge it and readers cannot tell what it counts; "
            "add e.g. {unit: tok/s, better: higher}",
            severity="warning",
        )
        for name, metric in run.meta.metrics.items()
        if metric.unit is None and metric.better is None
    ]


MEASUREMENT_ENDINGS = ("_ms", "_s", "_per_second", "_throughput", "_latency")


def measurement_keys(run: Run) -> list[Problem]:
    """A warning per manifest or setup key that looks like a measurement: a name ending in `_ms`,
    `_s`, `_per_second`, `_throughput` or `_latency` with a number. Such a key is compared between
    runs as a condition (an unmatched one on every comparison), never judged as a figure."""
    out = []
    for key, value in run.environment().items():
        name = key.rsplit(".", 1)[-1]
        ending = next((e for e in MEASUREMENT_ENDINGS if name.endswith(e) and len(name) > len(e)), None)
        if ending is None or not isinstance(value, int | float) or isinstance(value, bool):
            continue
        in_setup = key.startswith("setup.")
        message = (
            f"looks like a measurement ({value!r}, a name ending in {ending}): a setting or environment key is "
            "compared between runs as a condition, never judged as a figure; if the tool measured it, make it a "
            "metric (declared under metrics: in run.yaml with its unit, its value in results.csv); if it is a "
            f'setting, write its unit into the value as text ({name}: "{value!r} {_unit_of(ending)}")'
        )
        out.append(
            Problem(
                file=f"{run.path}/{'run.yaml' if in_setup else 'manifest.yaml'}",
                field=key,
                message=message,
                severity="warning",
            )
        )
    return out


def _unit_of(ending: str) -> str:
    return {"_ms": "ms", "_s": "s", "_per_second": "per second"}.get(ending, "UNIT")


def parse_run(
    folder: Path, blobs: dict[str, bytes], walked: list[Problem], digest: str
) -> tuple[Run | None, list[Problem]]:
    """Parse a run folder whose files (and the problems found walking it) are read."""
    rid, rel = folder.name, f"{RUNS_DIR}/{folder.name}"
    if not RUN_ID.match(rid):
        return None, [
            Problem(
                file=rel,
                message=f"folder name {rid!r} is not a run id; use lowercase letters, digits, '.', '_' and '-' "
                "(YYYY-MM-DD-slug)",
            )
        ]
    if reserved_id(rid, "runs") is not None:
        return None, [Problem(file=rel, message=f"folder name {reserved_id(rid, 'runs')}, and rename the folder")]
    problems = list(walked)

    def text_of(name: str, required: bool = True) -> str | None:
        if name not in blobs:
            path = folder / name
            if path.is_symlink():
                return None  # reported by the walk
            if path.is_dir():
                problems.append(
                    Problem(file=f"{rel}/{name}", message="is a folder, not a regular file; replace it with the file")
                )
            elif required:
                problems.append(
                    Problem(file=f"{rel}/{name}", message=f"is missing; every run folder needs {name} (see FORMAT.md)")
                )
            return None
        return decode(blobs[name], f"{rel}/{name}")

    meta, manifest, results, requests = _parse_files(rid, rel, text_of, problems)
    problems += published_file_problems(rel, list(blobs))
    if meta is not None:
        problems += chart_name_problems(rel, meta.metrics, meta.rates)
    receipts = _receipts(blobs, rel, problems)
    if meta is not None and meta.imported is not None:
        problems += _imported_problems(meta, blobs, rel)
    if problems or meta is None or manifest is None or results is None:
        return None, problems
    return assembled(rid, blobs, digest, (meta, manifest, results, requests, receipts)), problems


def assembled(rid: str, blobs: dict[str, bytes], digest: str, parsed: Parsed) -> Run:
    """A run from its files' parsed parts (freshly parsed, or as the build cache kept them)."""
    meta, manifest, results, requests, receipts = parsed
    return Run(
        id=rid,
        path=f"{RUNS_DIR}/{rid}",
        meta=meta,
        manifest=manifest,
        results=results,
        requests=requests,
        receipts=receipts,
        blobs=MappingProxyType(blobs),
        digest=digest,
    )


def _parse_files(
    rid: str, rel: str, text_of: Callable[..., str | None], problems: list[Problem]
) -> tuple[RunFile | None, ManifestFile | None, Results | None, tuple[Request, ...] | None]:
    """run.yaml, manifest.yaml, results.csv and requests.csv, each problem collected."""
    meta = manifest = results = None
    requests: tuple[Request, ...] | None = None
    lines: Lines = {}
    try:
        text = text_of("run.yaml")
        if text is not None:
            meta, lines = load_model(RunFile, text, f"{rel}/run.yaml", RUN_SCHEMA)
            if meta.id != rid:
                problems.append(
                    Problem(
                        file=f"{rel}/run.yaml",
                        line=lines.get(("id",)),
                        field="id",
                        message=f"{meta.id!r} differs from its folder {rid!r}; make them equal",
                    )
                )
            problems.extend(invocation_problems(meta, rel, lines))
    except BenchledgerError as err:
        problems.extend(err.problems)
    try:
        text = text_of("manifest.yaml")
        if text is not None:
            manifest, manifest_lines = load_model(ManifestFile, text, f"{rel}/manifest.yaml", MANIFEST_SCHEMA)
            if meta is not None and meta.imported is not None:
                problems += _path_problems(f"{rel}/manifest.yaml", manifest.model_dump(), manifest_lines)
    except BenchledgerError as err:
        problems.extend(err.problems)
    if meta is not None and meta.imported is not None:
        problems += _path_problems(f"{rel}/run.yaml", meta.model_dump(exclude={"imported"}), lines)
    if meta is not None:
        try:
            text = text_of("results.csv")
            if text is not None:
                results = parse_results(text, f"{rel}/results.csv", meta)
                results = mark_excluded(results, meta, f"{rel}/run.yaml", lines)
                problems += _incomplete_problems(meta, results, f"{rel}/run.yaml", lines)
                if meta.imported is not None:
                    problems += _cell_path_problems(f"{rel}/results.csv", results)
            text = text_of("requests.csv", required=False)
            if text is not None:
                requests = parse_requests(text, f"{rel}/requests.csv", meta)
        except BenchledgerError as err:
            problems.extend(err.problems)
    return meta, manifest, results, requests


def _incomplete_problems(meta: RunFile, results: Results, rel: str, lines: Lines) -> list[Problem]:
    """`incomplete.completed_trials` must be what results.csv holds: the page says "3 of 5"."""
    said = meta.incomplete.completed_trials if meta.incomplete is not None else None
    if said is None or said == len(results.rows):
        return []
    return [
        Problem(
            file=rel,
            line=lines.get(("incomplete", "completed_trials")),
            field="incomplete.completed_trials",
            message=f"says {said} but results.csv holds {len(results.rows)} trial rows (one per trial and "
            "condition); make them agree",
        )
    ]


LOCAL_PATH = "is an absolute local path"  # how these problems begin: `import --keep-paths` lets them through


def _path_problems(rel: str, data: Any, lines: Lines) -> list[Problem]:
    """A value that is an absolute local path (a model file on someone's disk) is refused in an
    imported run. Runs the runner writes are not checked: it reduces such paths itself unless
    `--keep-paths` (runner/local_paths.py) and keeps the program it measured as written, and
    runs written before it did may still carry them."""
    out = []
    for at, value in local_paths(data):
        key = ".".join(map(str, at))
        fix = f"{LOCAL_PATH} ({value[:80]!r}); write the file name {file_name(value)!r} instead"
        out.append(Problem(file=rel, line=line_for(at, lines), field=key, message=fix))
    return out


def _cell_path_problems(rel: str, results: Results) -> list[Problem]:
    out = []
    for row in results.rows:
        for column, value in zip(results.conditions, row.at, strict=True):
            if is_local_path(value):
                fix = f"{LOCAL_PATH} ({value[:80]!r}); write the file name {file_name(value)!r} instead"
                out.append(Problem(file=rel, line=row.line, field=column, message=fix))
    return out


def _imported_problems(meta: RunFile, blobs: Mapping[str, bytes], rel: str) -> list[Problem]:
    """The original files an import kept in raw/ must still hold the bytes that were read."""
    assert meta.imported is not None
    out = []
    for path, digest in meta.imported.files.items():
        where = f"{rel}/{path}"
        if path not in blobs:
            out.append(Problem(file=where, message="is missing; an imported run keeps its original files in raw/"))
        elif file_hash(blobs[path]) != digest:
            message = "changed since it was imported (its sha256 differs from run.yaml's imported.files); restore it"
            out.append(Problem(file=where, message=message))
    return out


def _receipts(blobs: Mapping[str, bytes], rel: str, problems: list[Problem]) -> tuple[Receipt, ...]:
    out = []
    for name in sorted(blobs):
        if not name.startswith("receipts/") or "/" in name.removeprefix("receipts/"):
            continue  # receipts/<name>/... holds what a rerun kept, not receipts
        shown = f"{rel}/{name}"
        if name.endswith(".yaml.sig"):
            if name.removesuffix(".sig") not in blobs:
                problems.append(
                    Problem(
                        file=shown,
                        message=f"is a signature without its receipt {name.removesuffix('.sig')}; "
                        "restore it or remove the .sig",
                    )
                )
            continue
        if not name.endswith(".yaml"):
            continue
        try:
            data, _ = load_model(ReceiptFile, decode(blobs[name], shown), shown, RECEIPT_SCHEMA)
        except BenchledgerError as err:
            problems.extend(err.problems)
            continue
        sig = name + ".sig"
        out.append(Receipt(name, data, sig if sig in blobs else None))
    return tuple(out)
