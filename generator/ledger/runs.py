"""Read one run folder into a `Run`: its YAML files, its tables and its receipts.

Every problem is collected with its file, line and field; a run with an error
is returned as None beside its problems.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from types import MappingProxyType

from ..errors import BenchledgerError, Problem
from ..format.hashing import file_hash, normalized_bytes
from ..format.models import MANIFEST_SCHEMA, RECEIPT_SCHEMA, RUN_ID, RUN_SCHEMA, ManifestFile, ReceiptFile, RunFile
from .records import RUNS_DIR, Receipt, Request, Results, Run
from .tables import mark_excluded, parse_requests, parse_results
from .yamlio import Lines, load_model

Signature = tuple[tuple[str, int, int, int, int, int], ...]  # each entry's name, mode, size, times, inode
ParsedRuns = MutableMapping[Path, tuple[Signature, Run | None, list[Problem]]]


def decode(data: bytes, rel: str) -> str:
    """UTF-8 text with CRLF normalized, or a located problem."""
    try:
        return normalized_bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise BenchledgerError(
            Problem(rel, None, None, f"is not UTF-8 text (byte {err.start}); save it as UTF-8")
        ) from None


def _walk(folder: Path, rel: str, problems: list[Problem]) -> tuple[list[str], Signature]:
    """Every regular file under a run folder, run-relative, and the folder's signature
    (to reuse a parsed run while nothing changed); symlinks are problems."""
    files, signature = [], []
    for here, dirs, names in os.walk(folder, followlinks=False):
        for name in sorted(dirs + names):
            path = Path(here) / name
            shown = f"{rel}/{path.relative_to(folder).as_posix()}"
            info = path.lstat()
            mode = info.st_mode
            signature.append((shown, mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
            if stat.S_ISLNK(mode):
                problems.append(
                    Problem(
                        shown,
                        None,
                        None,
                        "is a symlink; symlinks are refused under runs/: replace it with the real file",
                    )
                )
            elif stat.S_ISREG(mode):
                files.append(path.relative_to(folder).as_posix())
            elif not stat.S_ISDIR(mode):
                problems.append(Problem(shown, None, None, "is not a regular file; remove it"))
        dirs[:] = [d for d in dirs if not (Path(here) / d).is_symlink()]
    return sorted(files), tuple(signature)


def load_run(folder: Path, cache: ParsedRuns | None = None) -> tuple[Run | None, list[Problem]]:
    """Parse one run folder; with a cache, reuse the last parse while no file in it changed."""
    walked: list[Problem] = []
    files, signature = _walk(folder, f"{RUNS_DIR}/{folder.name}", walked)
    cached = cache.get(folder) if cache is not None else None
    if cached is not None and cached[0] == signature:
        return cached[1], list(cached[2])
    run, problems = parse_run(folder, files, walked)
    if cache is not None:
        cache[folder] = (signature, run, list(problems))
    return run, problems


def parse_run(folder: Path, files: list[str], walked: list[Problem]) -> tuple[Run | None, list[Problem]]:
    """Parse a run folder whose files (and the problems found walking it) are known."""
    rid, rel = folder.name, f"{RUNS_DIR}/{folder.name}"
    if not RUN_ID.match(rid):
        return None, [
            Problem(
                rel,
                None,
                None,
                f"folder name {rid!r} is not a run id; use lowercase letters, digits, '.', '_' and '-' "
                "(YYYY-MM-DD-slug)",
            )
        ]
    problems = list(walked)
    blobs = {f: (folder / f).read_bytes() for f in files}

    def text_of(name: str, required: bool = True) -> str | None:
        if name not in blobs:
            path = folder / name
            if path.is_symlink():
                return None  # reported by the walk
            if path.is_dir():
                problems.append(
                    Problem(f"{rel}/{name}", None, None, "is a folder, not a regular file; replace it with the file")
                )
            elif required:
                problems.append(
                    Problem(f"{rel}/{name}", None, None, f"is missing; every run folder needs {name} (see FORMAT.md)")
                )
            return None
        return decode(blobs[name], f"{rel}/{name}")

    meta, manifest, results, requests = _parse_files(rid, rel, text_of, problems)
    receipts = _receipts(blobs, rel, problems)
    if meta is not None and meta.imported is not None:
        problems += _imported_problems(meta, blobs, rel)
    if problems or meta is None or manifest is None or results is None:
        return None, problems
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(blobs[name]).digest())
    run = Run(rid, rel, meta, manifest, results, requests, receipts, MappingProxyType(blobs), digest.hexdigest())
    return run, problems


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
                        f"{rel}/run.yaml",
                        lines.get(("id",)),
                        "id",
                        f"{meta.id!r} differs from its folder {rid!r}; make them equal",
                    )
                )
    except BenchledgerError as err:
        problems.extend(err.problems)
    try:
        text = text_of("manifest.yaml")
        if text is not None:
            manifest, _ = load_model(ManifestFile, text, f"{rel}/manifest.yaml", MANIFEST_SCHEMA)
    except BenchledgerError as err:
        problems.extend(err.problems)
    if meta is not None:
        try:
            text = text_of("results.csv")
            if text is not None:
                results = parse_results(text, f"{rel}/results.csv", meta)
                results = mark_excluded(results, meta, f"{rel}/run.yaml", lines)
            text = text_of("requests.csv", required=False)
            if text is not None:
                requests = parse_requests(text, f"{rel}/requests.csv", meta)
        except BenchledgerError as err:
            problems.extend(err.problems)
    return meta, manifest, results, requests


def _imported_problems(meta: RunFile, blobs: Mapping[str, bytes], rel: str) -> list[Problem]:
    """The original files an import kept in raw/ must still hold the bytes that were read."""
    assert meta.imported is not None
    out = []
    for path, digest in meta.imported.files.items():
        where = f"{rel}/{path}"
        if path not in blobs:
            out.append(Problem(where, None, None, "is missing; an imported run keeps its original files in raw/"))
        elif file_hash(blobs[path]) != digest:
            message = "changed since it was imported (its sha256 differs from run.yaml's imported.files); restore it"
            out.append(Problem(where, None, None, message))
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
                        shown,
                        None,
                        None,
                        f"is a signature without its receipt {name.removesuffix('.sig')}; "
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
