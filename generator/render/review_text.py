"""`benchledger review` as Markdown (a pull-request comment, a job summary) or JSON. Every
value from the publication is untrusted: Markdown-escaped in tables, plain in JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from ..analysis.review import Review, VerdictChange
from . import text as t

MARK = "<!-- benchledger review -->"  # lets a workflow find and update its own comment


def review_markdown(found: Review, base: str, head: str) -> str:
    """The review as a comment: a title, one line of counts, then a section per kind of change."""
    lines = [MARK, f"## benchledger review: {t.text(base)} → {t.text(head)}", ""]
    if found.empty:
        return "\n".join([*lines, "No run, claim, grid, receipt or problem changes.", ""])
    counts = [
        (len(found.added), "run(s) added"),
        (len(found.changed), "run(s) changed"),
        (len(found.removed), "run(s) removed"),
        (len(found.verdicts), "claim verdict(s) changed"),
        (len(found.corrections), "new correction(s)"),
        (len(found.grids), "grid verdict(s) changed"),
        (len(found.stale), "receipt(s) gone stale"),
        (len(found.problems), "new problem(s)"),
    ]
    lines += ["**" + ", ".join(f"{n} {what}" for n, what in counts if n) + "**", ""]
    if not found.judged:
        lines += ["A side has errors, so its verdicts could not be computed; fix the problems below first.", ""]
    lines += _runs(found)
    lines += _changes("Claims whose verdict changed", "Claim", found.verdicts, "Measured after")
    if found.corrections:
        lines += ["### New corrections", ""]
        lines += [f"- `{t.text(fix)}` corrects `{t.text(claim)}`" for fix, claim in found.corrections] + [""]
    lines += _changes("Grids whose verdict changed", "Grid", found.grids, "Why, after")
    if found.stale:
        lines += ["### Receipts gone stale", ""]
        lines += [f"- `{t.text(run)}`: its files changed after a receipt vouched for them" for run in found.stale]
        lines += [""]
    if found.problems:
        lines += ["### New problems", ""]
        lines += [f"- {p.severity}: {t.text(str(p))}" for p in found.problems] + [""]
    return "\n".join(lines)


def _runs(found: Review) -> list[str]:
    rows = [(r, "added") for r in found.added] + [(r, "changed") for r in found.changed]
    rows += [(r, "removed") for r in found.removed]
    if not rows:
        return []
    table = ["### Runs", "", "| Run | Change |", "| --- | --- |"]
    return [*table, *(f"| `{t.text(r)}` | {what} |" for r, what in rows), ""]


def _changes(title: str, kind: str, changes: Sequence[VerdictChange], last: str) -> list[str]:
    if not changes:
        return []
    out = [f"### {title}", "", f"| {kind} | Before | After | {last} |", "| --- | --- | --- | --- |"]
    for c in changes:
        before, after = c.before or "(new)", c.after or "(removed)"
        said = t.text(c.statement)
        out.append(
            f"| `{t.text(c.id)}`: {said} | {t.text(before)} | **{t.text(after)}** | {t.text(c.measured) or '–'} |"
        )
    return [*out, ""]


def review_json(found: Review, base: str, head: str) -> str:
    data = asdict(found)
    data["problems"] = [{"problem": str(p), "severity": p.severity} for p in found.problems]
    return json.dumps({"base": base, "head": head, **data}, indent=1, ensure_ascii=False) + "\n"
