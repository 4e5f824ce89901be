"""The publication at a glance, for any page that asks for it with `<!-- at a glance -->`:
what the claims came to (those judged on measured trials apart from those without trial data,
corrections by finding), then per report which claims hold and which were corrected and how,
each with its effect and n and its own verdict pill; the latest corrections; runs whose receipts
or reruns need a look; attribution grids. Bounded at every size: the lists show the newest few
and say how many more there are."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..analysis.claims import Evaluation
from ..analysis.grid_records import Grid
from ..analysis.receipts import RunReceipts
from ..ledger.records import Ledger
from . import claims_index
from . import text as t
from .finding_text import finding_text
from .verdict_text import badge, interval_text, sides_n, verdict_badges

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
        cells = " ".join(f"[{badge(v)} {n}]({up}claims/{_filtered(v, total)})" for v, n in counts.items() if n)
        parts.append(cells)
    parts += _by_report(ledger, evaluations, up)
    parts += _runs(ledger, receipts, up)
    parts += _grids(grids, up)
    return "\n\n" + "\n\n".join(parts) + "\n\n"


def _filtered(verdict: str, total: int) -> str:
    """Where the claims of one verdict are listed: the index filtered by its buttons, or, once the
    index is paged (`claims_index.PER_PAGE`), that verdict's own pages."""
    if total > claims_index.PER_PAGE:
        return claims_index.index_path(verdict)
    return f"index.md#verdict={verdict.replace(' ', '-')}"


# The order a reader is told what the claims came to: what holds, what does not, what cannot tell.
HEADLINES: tuple[str, ...] = (
    "supported",
    "contradicted",
    "overstated",
    "misattributed",
    "interacts",
    "within noise",
    "incomplete run",
    "inconclusive",
    "no trial data",
)
WORDS = {
    "supported": "hold",
    "misattributed": "credited to the wrong factor",
    "interacts": "credit not separable",
    "no trial data": "without trial data",
    "incomplete run": "resting on an incomplete run",
}
UNJUDGED = "no trial data"  # figures published without trials, or prose: counted apart from measured claims


def headline_counts(evaluations: Mapping[str, Evaluation]) -> dict[str, int]:
    """Claims by headline, in HEADLINES' order: a supported claim whose credit a grid judges
    misattributed counts as credited to the wrong factor, never as holding."""
    return {v: sum(ev.headline == v for ev in evaluations.values()) for v in HEADLINES}


def found(evaluations: Mapping[str, Evaluation], counts: Mapping[str, int], reports: int, runs: int) -> str:
    """What the publication found, in three short sentences: the claims judged on measured
    trials by headline, those without trial data apart, and the corrections by finding
    ("**15 claims** from 5 reports over 18 runs. **9 judged on trials**: 4 hold, ... **6 without
    trial data** ... **2 corrections**: 1 misattributed, 1 with no finding stated.")."""
    total = len(evaluations)
    judged = {v: n for v, n in counts.items() if v != UNJUDGED and n}
    out = [f"**{t.plural(total, 'claim')}** from {t.plural(reports, 'report')} over {t.plural(runs, 'run')}."]
    if judged:
        said = ", ".join(f"{n} {WORDS.get(v, v)}" for v, n in judged.items())
        out.append(f"**{sum(judged.values())} judged on measured trials**: {said}.")
    if counts.get(UNJUDGED):
        out.append(
            f"**{counts[UNJUDGED]} without trial data**: figures published without trials, or prose; "
            "shown, never judged."
        )
    out += _findings_sentence(evaluations)
    return " ".join(out)


def _findings_sentence(evaluations: Mapping[str, Evaluation]) -> list[str]:
    """The corrections counted by what they found ("**2 corrections**: 1 misattributed, 1 with no
    finding stated.")."""
    fixes = [ev for ev in evaluations.values() if ev.claim.corrects]
    if not fixes:
        return []
    by: dict[str, int] = {}
    for ev in fixes:
        key = ev.claim.finding or "with no finding stated"
        by[key] = by.get(key, 0) + 1
    said = ", ".join(f"{n} {finding}" for finding, n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))
    return [f"**{t.plural(len(fixes), 'correction')}**: {said}."]


def _more(items: int) -> str:
    return f" ({items - SHOWN} more)" if items > SHOWN else ""


def _listed(title: str, lines: Sequence[str]) -> list[str]:
    """A bold title and the first SHOWN lines as a list (none when there are no lines)."""
    if not lines:
        return []
    return [f"**{title}**{_more(len(lines))}\n\n" + "\n".join(lines[:SHOWN])]


TITLE_MAX = 110  # characters of a claim's statement shown as its link's title


def title(ev: Evaluation) -> str:
    """A claim's statement as a link title: its first sentence, cut at a word to TITLE_MAX characters."""
    return t.shortened(ev.claim.statement, TITLE_MAX)


def claim_link(ev: Evaluation, up: str) -> str:
    """The claim's title linking its page, then its own verdict pill: a pill sits on the claim it judges."""
    return f"[{t.text(title(ev))}]({up}claims/{ev.claim.id}/index.md) {verdict_badges(ev)}"


def effect_n(ev: Evaluation) -> str:
    """The measured effect with its interval and both sides' n, for a one-condition comparison;
    the number of conditions otherwise."""
    if ev.only is not None:
        return f"{t.text(t.minus(interval_text(ev.only, unit=ev.unit)))}, n = {sides_n(ev.only)}"
    if ev.conditions:
        ns = {sides_n(c) for c in ev.conditions}
        each = f", n = {ns.pop()} at each" if len(ns) == 1 else ""
        return f"at {t.plural(len(ev.conditions), 'condition')}{each}"
    return ""


def _by_report(ledger: Ledger, evaluations: Mapping[str, Evaluation], up: str) -> list[str]:
    """Per report, newest first, with where its figures come from: the claims that hold and
    those corrected (with what the correction found), each with its effect and n, SHOWN at
    most; the rest counted by headline."""
    out = []
    reports = sorted(ledger.reports, key=lambda r: (str(r.meta.date or ""), r.slug), reverse=True)
    for report in reports[:SHOWN]:
        mine = [evaluations[c.id] for c in report.meta.claims if c.id in evaluations]
        holds = [ev for ev in mine if ev.headline == "supported" and not ev.corrected_by]
        picked = [*(ev for ev in mine if ev.corrected_by), *holds][:SHOWN]
        lines = [_corrected(ev, evaluations, up) if ev.corrected_by else _holds(ev, up) for ev in picked]
        rest: dict[str, int] = {}
        shown = {ev.claim.id for ev in picked}
        for ev in mine:
            if ev.claim.id not in shown and ev.claim.corrects not in shown:  # a correction is on its claim's line
                rest[ev.headline] = rest.get(ev.headline, 0) + 1
        if rest:
            said = ", ".join(
                f"{n} {WORDS.get(v, v)}" for v, n in sorted(rest.items(), key=lambda kv: HEADLINES.index(kv[0]))
            )
            lines.append(f"- Also {said} ([every claim]({up}{t.path_url(f'reports/{report.slug}.md')}))")
        day = f" · {report.meta.date}" if report.meta.date else ""
        head = f"**[{t.text(report.meta.title)}]({up}{t.path_url(f'reports/{report.slug}.md')})**{day}"
        out.append(f"{head} · {t.text(_provenance(mine, ledger))}" + ("\n\n" + "\n".join(lines) if lines else ""))
    if len(reports) > SHOWN:
        out.append(f"{t.plural(len(reports) - SHOWN, 'older report')}: see the navigation.")
    return out


def _provenance(evaluations: Sequence[Evaluation], ledger: Ledger) -> str:
    """Where a report's figures come from: "6 runs measured here", "2 runs reported without trials"."""
    runs = {r for ev in evaluations for r in (ev.claim.baseline, ev.claim.candidate, ev.claim.run) if r is not None}
    kinds: dict[str, int] = {}
    for run_id in sorted(runs & set(ledger.runs)):
        kind = ledger.runs[run_id].meta.source.kind
        kinds[kind] = kinds.get(kind, 0) + 1
    words = {"measured": "measured here", "reported": "reported without trials", "republished": "republished"}
    said = [f"{t.plural(n, 'run')} {words.get(k, k)}" for k, n in sorted(kinds.items())]
    return ", ".join(said) if said else "no runs: prose only"


def _holds(ev: Evaluation, up: str) -> str:
    return f"- **Holds**: {claim_link(ev, up)} {effect_n(ev)}".rstrip()


def _corrected(ev: Evaluation, evaluations: Mapping[str, Evaluation], up: str) -> str:
    """A corrected claim with its pill, what its first correction found, its effect and n, then
    each correction with its own pill."""
    fixes = [evaluations[i] for i in ev.corrected_by if i in evaluations]
    found = next((c for c in ev.corrections if c.finding), None)
    what = f"Corrected ({found.finding})" if found else "Corrected"
    words = finding_text(found, ev.claim.claimed) if found else ""
    said = f" {t.text(words[:1].upper() + words[1:])}." if found else ""
    reported = any(c.baseline.reported or c.candidate.reported for c in ev.conditions)
    shown = effect_n(ev)
    measured = f" {'As reported' if reported else 'On its own runs'}: {shown}." if shown else ""
    by = "; ".join(claim_link(fix, up) for fix in fixes)
    return f"- **{what}**: {claim_link(ev, up)}{said}{measured} Corrected by {by}"


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
