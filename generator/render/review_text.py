"""`benchledger review` as Markdown (a pull-request comment, a job summary) or JSON. Every
value from the publication is untrusted: Markdown-escaped in tables, plain in JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict

from ..analysis.history_review import AddedPoint, NoteChange
from ..analysis.review import Review, VerdictChange
from ..format.commands import HIDDEN
from . import text as t

MARK = "<!-- benchledger review -->"  # lets a workflow find and update its own comment
MAX_CHARS = 60_000  # a GitHub comment holds 65,536
MAX_STATEMENT = 300


JOINER = "&#8288;"  # a word joiner: invisible, but it ends what GitHub would link
# Characters that reorder or hide text (bidirectional controls, zero-width marks, tag characters
# and the other default-ignorable code points, control characters) or are not text at all (lone
# surrogates of undecodable file names): shown as their code, e.g. <U+202E>; what a recorded
# command may not hold (format.commands.HIDDEN), tab and line feed aside.
_HIDDEN = HIDDEN
_LINKED = re.compile(r"(www|https?|ftp|mailto|xmpp)(&#46;|\.|&#58;)", re.IGNORECASE)


def _said(value: str) -> str:
    """Untrusted text for a comment: escaped, cut, with bidirectional and invisible characters
    shown as their code, and with @ and # followed by a word joiner and `www.`, `https:` (and
    the other autolinked prefixes) broken by one, so GitHub (which decodes entities before it
    links) neither mentions anyone, nor links an issue, nor makes a live link of a domain."""
    cut = value if len(value) <= MAX_STATEMENT else value[: MAX_STATEMENT - 1] + "…"
    visible = _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", cut)
    escaped = str(t.text(visible)).replace("&#64;", "&#64;" + JOINER).replace("&#35;", "&#35;" + JOINER)
    return _LINKED.sub(lambda m: m.group(1) + JOINER + m.group(2), escaped)


def _id(value: str) -> str:
    """An id in a code span, as written (ids match [a-z0-9._-]); anything else escaped plainly."""
    return f"`{value}`" if all(c.isascii() and (c.isalnum() or c in "._-") for c in value) else _said(value)


def review_markdown(found: Review, base: str, head: str) -> str:
    """The review as a comment: a title, one line of counts, then a section per kind of change."""
    lines = [MARK, *_guarded(found), f"## benchledger review: {_said(base)} → {_said(head)}", ""]
    if found.refused:
        why = f"**Review refused:** {_said(found.refused)}"
        return "\n".join([*lines, why, "", "Nothing of this change was judged; fix that and push again.", ""])
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
        (len(found.resigned), "receipt re-signed after an edit", "receipts re-signed after an edit"),
        (len(found.receipts), "receipt state changed", "receipt states changed"),
        (len(found.reruns), "rerun outcome changed", "rerun outcomes changed"),
        (len(found.problems), "new problem", "new problems"),
        (len(found.notes), "history-file entry changed", "history-file entries changed"),
        (
            sum(h.verdict == "worse" for h in found.history),
            "added run worse than its series",
            "added runs worse than their series",
        ),
    ]
    tally = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts if n)
    unchanged = "Runs, claims, grids, receipts and problems are as they were: the change is in the files named above."
    lines += [f"**{tally}**" if tally else unchanged, ""]
    if not found.judged:
        lines += ["A side has errors, so its verdicts could not be computed; fix the problems below first.", ""]
    lines += _runs(found)
    lines += _notes(found.notes)
    lines += _history(found.history)
    lines += _changes("Claims whose verdict changed", "Claim", found.verdicts, "Measured after")
    lines += _caused(found.verdicts, found.settings)
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
    lines += _caused(found.grids, found.settings)
    if found.stale:
        lines += ["### Receipts gone stale", ""]
        lines += [f"- {_id(run)}: its files changed after a receipt vouched for them" for run in found.stale]
        lines += [""]
    if found.resigned:
        lines += ["### Receipts re-signed after an edit", ""]
        lines += [
            f"- {_id(run)}: {_path(receipt)} ({_said(who)}) vouches for files this change edits; "
            "the edit and the receipt come from the same change, so it does not verify the run: "
            "ask the verifier to confirm"
            for run, receipt, who in found.resigned
        ]
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
    said: dict[str, list[str]] = {}
    for run, what, path in found.files:
        said.setdefault(run, []).append(f"{what} {_path(path)}")
    rows = [(r, "added") for r in found.added]
    rows += [(r, "changed" + (": " + "; ".join(said[r]) if r in said else "")) for r in found.changed]
    rows += [(r, "removed") for r in found.removed]
    if not rows:
        return []
    table = ["### Runs", "", "| Run | Change |", "| --- | --- |"]
    return [*table, *(f"| {_id(r)} | {what} |" for r, what in rows), ""]


def _history(found: Sequence[AddedPoint]) -> list[str]:
    """Each added run against the current level of its series: the verdict with the change in
    percent and its interval, or why it was not judged (a series it would split, named)."""
    if not found:
        return []
    out = [
        "### Added runs against their series",
        "",
        "Each added run is judged against the current level of its series (its last segment), not the run before it.",
        "",
        "| Run | Series | Against | Verdict |",
        "| --- | --- | --- | --- |",
    ]
    for h in found:
        at = ", ".join(f"{k}={v}" for k, v in h.condition)
        series = _said(f"{h.benchmark}: {h.metric}" + (f" at {at}" if at else ""))
        against = f"{len(h.segment)} runs, {_id(h.segment[0])} … {_id(h.segment[-1])}" if h.segment else "—"
        if h.verdict is None or h.ratio is None or h.low is None or h.high is None:
            verdict = f"not judged: {_said(h.why)}"
        else:
            verdict = f"**{h.verdict}** {_percent(h.ratio)} [{_percent(h.low)}, {_percent(h.high)}]"
        out.append(f"| {_id(h.run)} | {series} | {against} | {verdict} |")
    return [*out, ""]


def _notes(found: Sequence[NoteChange]) -> list[str]:
    """History-file entries added or removed: an exclusion or an acceptance can hide a regression."""
    if not found:
        return []
    out = ["### History files", ""]
    for n in found:
        where = f" ({_said(n.narrowed)})" if n.narrowed else ""
        out.append(f"- {n.how} {_path(n.file)}: **{n.kind}** {_id(n.run)}{where}: {_said(n.words)}")
    return [*out, ""]


def _percent(ratio: float) -> str:
    """A ratio as the change in percent, with a true minus sign: 0.9 -> −10.0%."""
    return f"{(ratio - 1) * 100:+.1f}%".replace("-", "−")


def _changes(title: str, kind: str, changes: Sequence[VerdictChange], last: str) -> list[str]:
    if not changes:
        return []
    out = [f"### {title}", "", f"| {kind} | Before | After | {last} |", "| --- | --- | --- | --- |"]
    for c in changes:
        before, after = c.before or "(new)", c.after or "(removed)"
        said, effect = _said(c.statement), _said(c.measured) or "–"
        out.append(f"| {_id(c.id)}: {said} | {_said(before)} | **{_said(after)}** | {effect} |")
    return [*out, ""]


def _caused(changes: Sequence[VerdictChange], settings_changed: Sequence[tuple[str, str, str]]) -> list[str]:
    """Verdicts that changed because mkdocs.yml's verdict settings changed, not the data."""
    caused = [c for c in changes if c.by_settings]
    if not caused:
        return []
    settings = "; ".join(_setting(s) for s in settings_changed if s[0] in VERDICT_SETTINGS) or "its settings"
    return [
        *(
            f"- {_id(c.id)}: changed by mkdocs.yml ({settings}), not by the data; "
            f"with the base's settings it reads {_said(c.before or '(new)')}"
            for c in caused
        ),
        "",
    ]


VERDICT_SETTINGS = ("confidence", "min_effect", "noise")


def _setting(change: tuple[str, str, str]) -> str:
    what, before, after = change
    if what in VERDICT_SETTINGS:
        return f"`{what}` {_said(before)} → {_said(after)}"
    name = _path(after or before)
    if what == "inherits":
        return f"inherits {name} (MkDocs merges its hooks, plugins and settings into mkdocs.yml's)"
    return f"{what}: {name}" + (" (code the publish build runs)" if what == "hook added" else "")


WHAT = {
    "mkdocs.yml": "the site's settings and the code its build runs (hooks, plugins, confidence, min_effect)",
    "allowed_signers": "who may sign receipts; this review judges signatures with the base branch's file",
    "requirements-site.txt": "the packages the publish workflow installs: code the publish build runs",
}
FOLDER = {
    "hook": "beside a hook mkdocs.yml names, which can import it: code the publish build runs",
    "theme": "in theme.custom_dir: MkDocs renders its templates with Jinja, unsandboxed: code the publish build runs",
    "inherit": "the file mkdocs.yml's INHERIT names: MkDocs merges its hooks, plugins and settings into the build's",
}


def _guarded(found: Review) -> list[str]:
    """Before anything else: workflow files the change touches (the first line: a workflow can run
    code on the repository's runners), then mkdocs.yml and allowed_signers, which decide verdicts."""
    flows = [(p, how) for p, how in found.guarded if p.startswith(".github/workflows/")]
    rest = [(p, how) for p, how in found.guarded if (p, how) not in flows]
    out = []
    if flows:
        said = ", ".join(f"{_path(p)} ({how}{_flow(found, p)})" for p, how in flows)
        out.append(
            f"> **⚠ This pull request adds or changes workflow files:** {said}. Read them before approving a run."
        )
    for path, how in rest:
        name = path.rsplit("/", 1)[-1]
        said = WHAT.get(name, "decides how runs are judged")
        inside = [why for folder, why in found.code_folders if _under(path, folder)]
        if any(path == hook or path.endswith("/" + hook) for hook in found.hooks):
            said = "a hook mkdocs.yml names: code the publish build runs"
        elif inside:
            said = FOLDER[inside[0]]
        what: list[str] = []
        if name == "mkdocs.yml":
            what = [_setting(s) for s in found.settings]
        elif name == "allowed_signers":
            what = [f"{verb} a key for {_said(who)}" for verb, who in found.signers]
            if found.own_signers:
                would = ", ".join(f"{_id(run)} would read {state}" for run, state in found.own_signers)
                said += f" (with this change's own file, {would})"
        if what:
            said = "; ".join(what) + ". " + said[0].upper() + said[1:]
        out.append(f"> **⚠ {_path(path)} ({how}):** {said}.")
    return [*out, ""] if out else []


def _under(path: str, folder: str) -> bool:
    """Whether `path` (from the repository's top) lies in `folder` (from the publication's; ""
    is its top, where the :(glob)*.py pathspec found only the .py files beside a hook)."""
    if not folder:
        return path.endswith(".py")
    return path == folder or path.endswith("/" + folder) or path.startswith(folder + "/") or f"/{folder}/" in path


def _flow(found: Review, path: str) -> str:
    """What a workflow says of when and where it runs, as the change leaves it, to follow its
    path: `; on pull_request_target; **runs on a self-hosted runner**`."""
    for flow, triggers, hosted in found.workflows:
        if flow == path:
            on = f"; on {', '.join(_said(t) for t in triggers[:10])}" if triggers else ""
            return on + ("; **runs on a self-hosted runner**" if hosted else "")
    return ""


def _path(value: str) -> str:
    """A path in a code span when it is plain (ASCII); otherwise escaped like any untrusted text."""
    return f"`{value}`" if all(c.isascii() and (c.isalnum() or c in "._-/") for c in value) else _said(value)


def review_json(found: Review, base: str, head: str) -> str:
    data = asdict(found)
    data["problems"] = [{"problem": str(p), "severity": p.severity} for p in found.problems]
    text = json.dumps({"base": base, "head": head, **data}, indent=1, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace").decode()  # an undecodable file name: \udcff, as JSON reads it
