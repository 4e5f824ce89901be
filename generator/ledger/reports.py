"""Read one report (site_src/reports/<slug>.md): its front matter and its Markdown body."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from types import MappingProxyType

from ..errors import BenchledgerError, Problem
from ..format.front_matter import ReportMeta
from .records import Report, SweepDirective
from .runs import decode
from .yamlio import Lines, parse_yaml, validate

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*\r?\n?", re.S)
SWEEP = re.compile(r"^[ \t]*<!--[ \t]*sweep[ \t]+(?P<figure>[^:\n]*?)[ \t]*:(?P<runs>[^\n]*?)-->[ \t]*$", re.M)


def load_report(root: Path, path: Path, folder: Path) -> tuple[Report | None, list[Problem]]:
    """One report; its slug is its path under the reports folder, without .md (sub/name)."""
    rel = path.relative_to(root).as_posix()
    if path.is_symlink():
        return None, [Problem(file=rel, message="is a symlink; reports must be real files")]
    try:
        text = decode(path.read_bytes(), rel)
        match = FRONT_MATTER.match(text)
        if not match:
            raise BenchledgerError(
                Problem(
                    file=rel,
                    line=1,
                    message="has no front matter; start the report with a '---' block holding at least `title:`",
                )
            )
        data, lines = _front_matter(match.group(1) or "", rel)
        meta = validate(ReportMeta, data, rel, lines)
    except BenchledgerError as err:
        return None, err.problems
    body = text[match.end() :]
    digest = hashlib.sha256(text.encode()).hexdigest()
    slug = path.relative_to(folder).with_suffix("").as_posix()
    sweeps = tuple(
        SweepDirective(
            found.group(0),
            text.count("\n", 0, match.end() + found.start()) + 1,
            found.group("figure").strip(),
            tuple(r.strip() for r in found.group("runs").split(",") if r.strip()),
        )
        for found in SWEEP.finditer(body)
    )
    report = Report(
        slug=slug, path=rel, meta=meta, body=body, digest=digest, lines=MappingProxyType(lines), sweeps=sweeps
    )
    return report, []


def _front_matter(text: str, rel: str) -> tuple[object, Lines]:
    try:
        data, lines = parse_yaml(text, rel)
    except BenchledgerError as err:  # front matter starts on line 2 of the file
        raise BenchledgerError(
            [
                Problem(file=p.file, line=p.line + 1 if p.line else None, field=p.field, message=p.message)
                for p in err.problems
            ]
        ) from None
    if not isinstance(data, dict):
        raise BenchledgerError(Problem(file=rel, line=2, message="front matter must be a mapping of keys"))
    return data, {k: v + 1 for k, v in lines.items()}
