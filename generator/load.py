"""Read a publication repository into one immutable `Ledger`.

Loading never stops at the first problem: every file is checked and each
problem is recorded with its file, line and field. A run or report with an
error is left out of the ledger; `Ledger.problems` says why.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .claimcheck import validate_claims
from .errors import BenchledgerError, Problem
from .model import (
    MANIFEST_SCHEMA,
    RECEIPT_SCHEMA,
    RUN_ID,
    RUN_SCHEMA,
    Claim,
    ManifestFile,
    ReceiptFile,
    ReportMeta,
    RunFile,
)
from .tables import Request, Results, parse_requests, parse_results
from .yamlio import Lines, load_model, parse_yaml, validate

RUNS_DIR = "runs"
DOCS_DIR = "site_src"
REPORTS_DIR = "reports"
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*\r?\n?", re.S)


@dataclass(frozen=True)
class Receipt:
    name: str  # run-relative path, e.g. receipts/2026-09-25-zak.yaml
    data: ReceiptFile
    signature: str | None  # run-relative path of the .sig beside it


@dataclass(frozen=True)
class Run:
    id: str
    path: str  # repository-relative, e.g. runs/<id>
    meta: RunFile
    manifest: ManifestFile
    results: Results
    requests: tuple[Request, ...] | None
    receipts: tuple[Receipt, ...]
    blobs: Mapping[str, bytes]  # every file's bytes as committed, by run-relative path
    digest: str  # sha256 over every file's path and bytes

    @property
    def files(self) -> list[str]:
        return sorted(self.blobs)

    @property
    def reported(self) -> bool:
        return self.meta.source.kind == "reported"


@dataclass(frozen=True)
class Report:
    slug: str
    path: str  # repository-relative
    meta: ReportMeta
    body: str  # the Markdown after the front matter
    digest: str
    lines: Mapping[tuple[str | int, ...], int] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Ledger:
    root: Path
    runs: Mapping[str, Run]
    reports: tuple[Report, ...]
    problems: tuple[Problem, ...] = field(default=())
    allowed_signers: str | None = None  # the text of <root>/allowed_signers, when present

    @property
    def claims(self) -> list[tuple[Report, Claim]]:
        return [(report, claim) for report in self.reports for claim in report.meta.claims]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def summary(self) -> str:
        return f"{len(self.runs)} runs, {len(self.reports)} reports, {len(self.claims)} claims"


def normalized_bytes(data: bytes) -> bytes:
    """File bytes as hashed by receipts: CRLF normalized to LF."""
    return data.replace(b"\r\n", b"\n")


def _decode(data: bytes, rel: str) -> str:
    try:
        return normalized_bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise BenchledgerError(
            Problem(rel, None, None, f"is not UTF-8 text (byte {err.start}); save it as UTF-8")
        ) from None


def _run_files(
    folder: Path, rel: str, problems: list[Problem], signature: list[tuple[Any, ...]] | None = None
) -> list[str]:
    """Every regular file under a run folder, run-relative; symlinks are problems.
    `signature` collects each entry's name, kind, size and times (to reuse a parsed run)."""
    files = []
    for here, dirs, names in os.walk(folder, followlinks=False):
        for name in sorted(dirs + names):
            path = Path(here) / name
            shown = f"{rel}/{path.relative_to(folder).as_posix()}"
            info = path.lstat()
            mode = info.st_mode
            if signature is not None:
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
    return sorted(files)


_PARSED: dict[Path, tuple[tuple[Any, ...], Run | None, list[Problem]]] = {}


def _load_run(root: Path, folder: Path) -> tuple[Run | None, list[Problem]]:
    """Parse one run folder; reuse the last parse while no file in it changed (serve, rebuilds)."""
    signature: list[tuple[Any, ...]] = []
    walked: list[Problem] = []
    files = _run_files(folder, f"{RUNS_DIR}/{folder.name}", walked, signature)
    key = tuple(signature)
    cached = _PARSED.get(folder)
    if cached is not None and cached[0] == key:
        return cached[1], list(cached[2])
    run, problems = _parse_run(folder, files, walked)
    _PARSED[folder] = (key, run, list(problems))
    return run, problems


def _parse_run(folder: Path, files: list[str], walked: list[Problem]) -> tuple[Run | None, list[Problem]]:
    """Parse a run folder whose files (and the problems found walking it) are known."""
    rid, rel = folder.name, f"{RUNS_DIR}/{folder.name}"
    problems: list[Problem] = []
    if not RUN_ID.match(rid):
        problems.append(
            Problem(
                rel,
                None,
                None,
                f"folder name {rid!r} is not a run id; use "
                "lowercase letters, digits, '.', '_' and '-' (YYYY-MM-DD-slug)",
            )
        )
        return None, problems
    problems.extend(walked)
    blobs = {f: (folder / f).read_bytes() for f in files}

    def parse(name: str, required: bool = True) -> str | None:
        if name not in blobs:
            if required:
                problems.append(
                    Problem(
                        f"{rel}/{name}",
                        None,
                        None,
                        f"is missing; every run folder needs {name} (see FORMAT.md)",
                    )
                )
            return None
        return _decode(blobs[name], f"{rel}/{name}")

    meta = manifest = results = None
    requests: tuple[Request, ...] | None = None
    try:
        text = parse("run.yaml")
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
        text = parse("manifest.yaml")
        if text is not None:
            manifest, _ = load_model(ManifestFile, text, f"{rel}/manifest.yaml", MANIFEST_SCHEMA)
    except BenchledgerError as err:
        problems.extend(err.problems)
    if meta is not None:
        try:
            text = parse("results.csv")
            if text is not None:
                results = parse_results(text, f"{rel}/results.csv", meta)
            text = parse("requests.csv", required=False)
            if text is not None:
                requests = parse_requests(text, f"{rel}/requests.csv", meta)
        except BenchledgerError as err:
            problems.extend(err.problems)
    receipts = _load_receipts(blobs, rel, problems)
    if problems or meta is None or manifest is None or results is None:
        return None, problems
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(blobs[name]).digest())
    return Run(
        rid, rel, meta, manifest, results, requests, receipts, MappingProxyType(blobs), digest.hexdigest()
    ), problems


def _load_receipts(blobs: Mapping[str, bytes], rel: str, problems: list[Problem]) -> tuple[Receipt, ...]:
    out = []
    for name in sorted(blobs):
        if not name.startswith("receipts/"):
            continue
        shown = f"{rel}/{name}"
        if name.endswith(".yaml.sig"):
            if name.removesuffix(".sig") not in blobs:
                problems.append(
                    Problem(
                        shown,
                        None,
                        None,
                        "is a signature without its receipt "
                        f"{name.removesuffix('.sig')}; restore it or remove the .sig",
                    )
                )
            continue
        if not name.endswith(".yaml"):
            continue
        try:
            data, _ = load_model(ReceiptFile, _decode(blobs[name], shown), shown, RECEIPT_SCHEMA)
        except BenchledgerError as err:
            problems.extend(err.problems)
            continue
        sig = name + ".sig"
        out.append(Receipt(name, data, sig if sig in blobs else None))
    return tuple(out)


def _load_report(root: Path, path: Path) -> tuple[Report | None, list[Problem]]:
    rel = path.relative_to(root).as_posix()
    if path.is_symlink():
        return None, [Problem(rel, None, None, "is a symlink; reports must be real files")]
    try:
        text = _decode(path.read_bytes(), rel)
        match = FRONT_MATTER.match(text)
        if not match:
            raise BenchledgerError(
                Problem(
                    rel,
                    1,
                    None,
                    "has no front matter; start the report with a '---' block holding at least `title:`",
                )
            )
        data, lines = _parse_front_matter(match.group(1) or "", rel)
        meta = validate(ReportMeta, data, rel, lines)
    except BenchledgerError as err:
        return None, err.problems
    body = text[match.end() :]
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Report(path.stem, rel, meta, body, digest, MappingProxyType(lines)), []


def _parse_front_matter(text: str, rel: str) -> tuple[object, Lines]:
    try:
        data, lines = parse_yaml(text, rel)
    except BenchledgerError as err:  # front matter starts on line 2 of the file
        raise BenchledgerError(
            [Problem(p.file, p.line + 1 if p.line else None, p.field, p.message) for p in err.problems]
        ) from None
    if not isinstance(data, dict):
        raise BenchledgerError(Problem(rel, 2, None, "front matter must be a mapping of keys"))
    return data, {k: v + 1 for k, v in lines.items()}


def load(root: Path | str, docs_dir: str = DOCS_DIR) -> Ledger:
    """Load every run under runs/ and every report under <docs_dir>/reports/."""
    root = Path(root).resolve()
    problems: list[Problem] = []
    runs: dict[str, Run] = {}
    failed_runs: set[str] = set()
    runs_dir = root / RUNS_DIR
    if runs_dir.is_symlink():
        problems.append(Problem(RUNS_DIR, None, None, "is a symlink; make runs/ a real folder"))
    elif runs_dir.is_dir():
        for entry in sorted(runs_dir.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                problems.append(
                    Problem(
                        f"{RUNS_DIR}/{entry.name}",
                        None,
                        None,
                        "is a symlink; symlinks are refused under runs/: move the real folder here",
                    )
                )
            elif entry.is_dir():
                run, found = _load_run(root, entry)
                problems.extend(found)
                if run is not None:
                    runs[run.id] = run
                else:
                    failed_runs.add(entry.name)
            else:
                problems.append(
                    Problem(f"{RUNS_DIR}/{entry.name}", None, None, "is not a run folder; ignored", "warning")
                )
    reports = []
    reports_dir = root / docs_dir / REPORTS_DIR
    if reports_dir.is_dir():
        for path in sorted(reports_dir.rglob("*.md")):
            report, found = _load_report(root, path)
            problems.extend(found)
            if report is not None:
                reports.append(report)
    problems.extend(validate_claims(runs, reports, failed_runs))
    signers = root / "allowed_signers"
    allowed = None
    if signers.is_symlink():
        problems.append(Problem("allowed_signers", None, None, "is a symlink; make it a real file"))
    elif signers.is_file():
        try:
            allowed = _decode(signers.read_bytes(), "allowed_signers")
        except BenchledgerError as err:
            problems.extend(err.problems)
    return Ledger(root, MappingProxyType(runs), tuple(reports), tuple(problems), allowed)
