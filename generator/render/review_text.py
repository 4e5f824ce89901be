"""`benchledger review` as Markdown (a pull-request comment, a job summary) or JSON. Every
value from the publication is untrusted: Markdown-escaped in tables, plain in JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from ..analysis.review import Review, VerdictChange
from . import text as t

MARK = "<!-- benchledger review -->"  # lets a workflow find and update its own comment
MAX_CHARS = 60_000  # a GitHub comment holds 65,536
MAX_STATEMENT = 300


def _said(value: str) -> str:
    """Untrusted text for a comment: escaped, cut, and with @ and # followed by a word joiner, so
    GitHub (which decodes entities before it links) neither mentions anyone nor links an issue."""
    cut = value if len(value) <= MAX_STATEMENT else value[: MAX_STATEMENT - 1] + "…"
    return str(t.text(cut)).replace("&#64;", "&#64;&#8288;").replace("&#35;", "&#35;&#8288;")


def _id(value: str) -> str:
    """An id in a code span, as written (ids match [a-z0-9._-]); anything else escaped plainly."""
    return f"`{value}`" if all(c.isalnum() or c in "._-" for c in value) else _said(value)


def review_markdown(found: Review, base: str, head: str) -> str:
    """The review as a comment: a title, one line of counts, then a section per kind of change."""
    lines = [MARK, *_guarded(found), f"## benchledger review: {_said(base)} → {_said(head)}", ""]
    if found.empty:
        return "\n".join([*lines, "No run, claim, grid, receipt or problem changes.", ""])
    counts = [
        (len(found.added), "run added", "runs added"),
        (len(found.changed), "run changed", "runs changed"),
        (len(found.removed), "run removed", "runs removed"),
        (len(found.verdicts), "claim verdict changed", "claim verdicts changed"),
        (len(found.edited), "claim edited", "claims edited"),
        (len(found.corrections), "new correction", "new corrections"),
        (len(found.grids), "grid verdict changed", "grid verdicts changed"),
        (len(found.stale), "receipt gone stale", "receipts gone stale"),
        (len(found.receipts), "receipt state changed", "receipt states changed"),
        (len(found.reruns), "rerun outcome changed", "rerun outcomes changed"),
        (len(found.problems), "new problem", "new problems"),
    ]
    lines += ["**" + ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts if n) + "**", ""]
    if not found.judged:
        lines += ["A side has errors, so its verdicts could not be computed; fix the problems below first.", ""]
    lines += _runs(found)
    lines += _changes("Claims whose verdict changed", "Claim", found.verdicts, "Measured after")
    if found.corrections:
        lines += ["### New corrections", ""]
        said = {fix: f": finds {finding} ({_said(check)})" for fix, finding, check in found.findings}
        lines += [f"- {_id(fix)} corrects {_id(claim)}{said.get(fix, '')}" for fix, claim in found.corrections] + [""]
    if found.edited:
        lines += ["### Claims edited under the same id", ""]
        lines += [
            f"- {_id(claim)}: its declaration changed (a claim is corrected by a new one)" for claim in found.edited
        ]
        lines += [""]
    lines += _changes("Grids whose verdict changed", "Grid", found.grids, "Why, after")
    if found.stale:
        lines += ["### Receipts gone stale", ""]
        lines += [f"- {_id(run)}: its files changed after a receipt vouched for them" for run in found.stale]
        lines += [""]
    if found.receipts:
        lines += ["### Receipt states", "", "| Run | Before | After |", "| --- | --- | --- |"]
        lines += [f"| {_id(run)} | {was} | **{now}** |" for run, was, now in found.receipts] + [""]
    if found.reruns:  # the words are the site's (analysis.reproduction.Outcome), from fixed parts
        lines += ["### Reruns", "", "| Run | Before | After |", "| --- | --- | --- |"]
        lines += [f"| {_id(run)} | {was} | **{now}** |" for run, was, now in found.reruns] + [""]
    if found.problems:
        lines += ["### New problems", ""]
        lines += [f"- {p.severity}: {_said(str(p))}" for p in found.problems] + [""]
    text = "\n".join(lines)
    if len(text) > MAX_CHARS:
        text = (
            text[:MAX_CHARS].rsplit("\n", 1)[0]
            + "\n\n… cut to fit a comment; `benchledger review --format json` has it all.\n"
        )
    return text


def _runs(found: Review) -> list[str]:
    rows = [(r, "added") for r in found.added] + [(r, "changed") for r in found.changed]
    rows += [(r, "removed") for r in found.removed]
    if not rows:
        return []
    table = ["### Runs", "", "| Run | Change |", "| --- | --- |"]
    return [*table, *(f"| {_id(r)} | {what} |" for r, what in rows), ""]


def _changes(title: str, kind: str, changes: Sequence[VerdictChange], last: str) -> list[str]:
    if not changes:
        return []
    out = [f"### {title}", "", f"| {kind} | Before | After | {last} |", "| --- | --- | --- | --- |"]
    for c in changes:
        before, after = c.before or "(new)", c.after or "(removed)"
        said, effect = _said(c.statement), _said(c.measured) or "–"
        out.append(f"| {_id(c.id)}: {said} | {_said(before)} | **{_said(after)}** | {effect} |")
    return [*out, ""]


WHAT = {
    "mkdocs.yml": "the site's settings and the code its build runs (hooks, plugins, confidence, min_effect)",
    "allowed_signers": "who may sign receipts; this review judges signatures with the base branch's file",
}


def _guarded(found: Review) -> list[str]:
    """Before anything else: workflow files the change touches (the first line: a workflow can run
    code on the repository's runners), then mkdocs.yml and allowed_signers, which decide verdicts."""
    flows = [(p, how) for p, how in found.guarded if p.startswith(".github/workflows/")]
    rest = [(p, how) for p, how in found.guarded if (p, how) not in flows]
    out = []
    if flows:
        said = ", ".join(f"{_path(p)} ({how})" for p, how in flows)
        out.append(
            f"> **⚠ This pull request adds or changes workflow files:** {said}. Read them before approving a run."
        )
    for path, how in rest:
        out.append(
            f"> **⚠ {_path(path)} ({how}):** {WHAT.get(path.rsplit('/', 1)[-1], 'decides how runs are judged')}."
        )
    return [*out, ""] if out else []


def _path(value: str) -> str:
    """A path in a code span when it is plain; otherwise escaped like any untrusted text."""
    return f"`{value}`" if all(c.isalnum() or c in "._-/" for c in value) else _said(value)


def review_json(found: Review, base: str, head: str) -> str:
    data = asdict(found)
    data["problems"] = [{"problem": str(p), "severity": p.severity} for p in found.problems]
    return json.dumps({"base": base, "head": head, **data}, indent=1, ensure_ascii=False) + "\n"
