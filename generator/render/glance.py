"""The publication at a glance, for any page that asks for it with `<!-- at a glance -->`:
claims by verdict (linking the filtered ledger), the latest corrections, runs whose receipts
or reruns need a look, attribution grids, and the newest reports. Bounded at every size: the
lists show the newest few and say how many more there are."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..analysis.claims import Evaluation
from ..analysis.grid_records import Grid
from ..analysis.receipts import RunReceipts
from ..ledger.records import Ledger
from . import text as t
from .verdict_text import badge, verdict_badges

MARKER = "<!-- at a glance -->"
SHOWN = 5  # newest items per list
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def marker_line(markdown: str) -> int | None:
    """The index of the first line that is the marker alone, outside fenced and indented code:
    a page that writes about the marker (`<!-- at a glance -->` in inline code or an example
    block) keeps it as written."""
    fence: str | None = None
    for number, line in enumerate(markdown.split("\n")):
        if fence is not None:
            fence = None if _closes(line, fence) else fence
        elif opened := _FENCE.match(line):
            fence = opened.group(1)
        elif line.strip() == MARKER and not line.startswith(("    ", "\t")):
            return number
    return None


def _closes(line: str, fence: str) -> bool:
    """Whether `line` closes a code block opened by `fence`: the same character, at least as
    many times, and nothing else on the line (CommonMark)."""
    found = _FENCE.match(line)
    return bool(found and found.group(1).startswith(fence) and not line.strip(" " + fence[0]))


def place(markdown: str, number: int, panel: str) -> str:
    """The page with line `number` (the marker's, from `marker_line`) replaced by the panel."""
    lines = markdown.split("\n")
    lines[number] = panel
    return "\n".join(lines)


def glance(
    ledger: Ledger,
    evaluations: Mapping[str, Evaluation],
    receipts: Mapping[str, RunReceipts],
    grids: Sequence[Grid],
    up: str,
) -> str:
    """The panel as Markdown; `up` climbs from the page to the site root."""
    total = len(evaluations)
    parts = [
        f"**{total} claim{'s' if total != 1 else ''}** in {len(ledger.reports)} reports, over {len(ledger.runs)} runs."
    ]
    if total:
        counts = headline_counts(evaluations)
        parts = [found(evaluations, counts, len(ledger.reports), len(ledger.runs))]
        cells = " ".join(
            f"[{badge(v)} {n}]({up}claims/index.md#verdict={v.replace(' ', '-')})" for v, n in counts.items() if n
        )
        parts.append(cells)
    parts += _corrections(evaluations, up)
    parts += _runs(ledger, receipts, up)
    parts += _grids(grids, up)
    parts += _reports(ledger, up)
    return "\n\n" + "\n\n".join(parts) + "\n\n"


# The order a reader is told what the claims came to: what holds, what does not, what cannot tell.
HEADLINES: tuple[str, ...] = (
    "supported",
    "contradicted",
    "overstated",
    "misattributed",
    "interacts",
    "within noise",
    "inconclusive",
    "no trial data",
)
WORDS = {"supported": "hold", "misattributed": "credited to the wrong factor", "interacts": "credit not separable"}


def headline_counts(evaluations: Mapping[str, Evaluation]) -> dict[str, int]:
    """Claims by headline, in HEADLINES' order: a supported claim whose credit a grid judges
    misattributed counts as credited to the wrong factor, never as holding."""
    return {v: sum(ev.headline == v for ev in evaluations.values()) for v in HEADLINES}


def found(evaluations: Mapping[str, Evaluation], counts: Mapping[str, int], reports: int, runs: int) -> str:
    """What the publication found, in one sentence: "**15 claims**: 4 hold, 3 contradicted, ...;
    2 corrected." (`counts`: headline_counts)."""
    total = len(evaluations)
    said = ", ".join(f"{n} {WORDS.get(v, v)}" for v, n in counts.items() if n)
    corrected = sum(bool(ev.corrected_by) for ev in evaluations.values())
    fixed = f"; {corrected} corrected" if corrected else ""
    return (
        f"**{total} claim{'s' if total != 1 else ''}**: {said}{fixed}. "
        f"From {reports} report{'s' if reports != 1 else ''} over {runs} run{'s' if runs != 1 else ''}."
    )


def _more(items: int) -> str:
    return f" ({items - SHOWN} more)" if items > SHOWN else ""


def _listed(title: str, lines: Sequence[str]) -> list[str]:
    """A bold title and the first SHOWN lines as a list (none when there are no lines)."""
    if not lines:
        return []
    return [f"**{title}**{_more(len(lines))}\n\n" + "\n".join(lines[:SHOWN])]


def _corrections(evaluations: Mapping[str, Evaluation], up: str) -> list[str]:
    fixes = sorted(
        (ev for ev in evaluations.values() if ev.claim.corrects),
        key=lambda ev: (str(ev.claim.date or ""), ev.claim.id),
        reverse=True,
    )
    lines = [
        f"- [{t.text(ev.claim.statement)}]({up}claims/{ev.claim.id}/index.md) corrects "
        f"[{t.text(ev.claim.corrects)}]({up}claims/{ev.claim.corrects}/index.md) {verdict_badges(ev)}"
        for ev in fixes
    ]
    return _listed("Latest corrections", lines)


def _runs(ledger: Ledger, receipts: Mapping[str, RunReceipts], up: str) -> list[str]:
    """How many runs are stale, unverified, verified, reproduced; and the stale ones by name."""
    states: dict[str, int] = {}
    for run_id in ledger.runs:  # each run counted once, as the runs index shows it
        r = receipts.get(run_id)
        state = _state(r) if r else "unverified"
        states[state] = states.get(state, 0) + 1
    if not states:
        return []
    counts = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
    stale = sorted(run_id for run_id, r in receipts.items() if r.state == "stale")
    out = f"**Runs**: {t.text(counts)} ([all runs]({up}runs/index.md))."
    if stale:
        names = ", ".join(f"[{t.text(r)}]({up}runs/{r}/index.md)" for r in stale[:SHOWN])
        out += f" Stale receipts{_more(len(stale))}: {names}."
    return [out]


def _state(r: RunReceipts) -> str:
    """A run's state for the counts: its receipts' state, and its rerun's, without the verifier."""
    if r.reproduction is None:
        return r.state
    return r.reproduction.state if r.state == "unverified" else f"{r.state} and {r.reproduction.state}"


def _grids(grids: Sequence[Grid], up: str) -> list[str]:
    lines = [
        f"- [{t.text(g.attribution.statement)}]({up}claims/{g.attribution.id}/index.md) {badge(g.verdict)}"
        for g in grids
    ]
    return _listed("Attribution grids", lines)


def _reports(ledger: Ledger, up: str) -> list[str]:
    reports = sorted(ledger.reports, key=lambda r: (str(r.meta.date or ""), r.slug), reverse=True)
    lines = [
        f"- [{t.text(r.meta.title)}]({up}{t.path_url(f'reports/{r.slug}.md')})" + (f" · {day}" if day else "")
        for r in reports
        for day in [r.meta.date]
    ]
    return _listed("Newest reports", lines)
