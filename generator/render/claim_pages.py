"""A page per claim chain (the claims index is claims_index.py; how a verdict reads is
verdict_text.py; a report's claims panel is report_panels.py). Renderers return strings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ..analysis.claims import ACCEPTED, Evaluation
from ..analysis.comparison import Comparison, Settings, Side
from ..analysis.rates import RateSummary
from ..analysis.records import RATE_EXACT
from ..analysis.stats import IDENTICAL, IDENTICAL_SIDES
from ..format.signed import level as level_of
from ..format.signed import points, times
from . import blocks, rate_text
from . import text as t
from .finding_text import check_text, corrected_line, finding_text, unrecorded_lines
from .templating import generated_mark, render
from .verdict_text import credit_lines, flag_pills, interval_text, proportions, sides_n, verdict_badges

CLAIMS = "claims"


@dataclass(frozen=True)
class TrialsBlock:
    id: str
    spec: str
    table: Markup


@dataclass(frozen=True)
class SweepBlock:
    spec: str
    caption: str
    table: Markup


def side_figures(label: str, s: Side | None, unit: str | None, level: str, own: bool = False) -> list[tuple[str, str]]:
    """One side's figures, after its run (and its condition, `own`, when the two sides of the
    claim sit at different conditions: "2026-11-30-gzip at size=200: mean ...")."""
    if s is None:
        return []
    who = f"{s.run} at {s.label}" if own else s.run
    u = "" if s.is_rate or not unit else f" {unit}"
    shown: Callable[[float | None], str] = t.percent if s.is_rate else t.number  # a rate: never a fraction
    figure = shown(s.values[0]) if s.values else "–"
    if s.published is not None:
        sd, n = s.published
        return [(label, f"{who}: published mean {figure}{u}, SD {shown(sd)}, n = {n}")]
    if s.reported:
        return [(label, f"{who}: {figure}{u}, trials not reported")]
    if s.summary is None:
        return [(label, f"{s.run}: no trials at {s.label}")]
    if s.rate is not None:
        return _rate_figures(label, who, s, s.rate, level)
    ci = ""
    if s.summary.constant:
        ci = f" ({IDENTICAL}: no run-to-run variation was measured; a deterministic workload?)"
    elif s.summary.ci_low is not None:
        ci = f" [{shown(s.summary.ci_low)}, {shown(s.summary.ci_high)}]"
    mean = "mean of per-trial rates" if s.is_rate else "mean"
    out = [(label, f"{who}: {mean} {shown(s.summary.mean)}{ci}{u}, n = {s.summary.n}")]
    if s.excluded:
        left_out = ", ".join(f"trial {trial} ({reason})" for trial, _, reason in s.excluded)
        out.append((f"{label}, excluded", left_out))
    return out


def _rate_figures(label: str, who: str, s: Side, rate: RateSummary, level: str) -> list[tuple[str, str]]:
    """A measured rate's side: the mean of its trials' rates with the t interval over them (the
    trial is the unit), and the summed counts as context only."""
    shown = rate_text.mean_interval(rate)
    if rate.ci_low is not None:
        shown += f" ({level}, t over the trials)"
    out = [(label, f"{who}: mean of per-trial rates {shown}, n = {rate.n} trials")]
    if s.excluded:
        left_out = ", ".join(f"trial {trial} ({reason})" for trial, _, reason in s.excluded)
        out.append((f"{label}, excluded", left_out))
    denominator = s.counted[1] if s.counted else "attempts"
    context = f"{rate_text.counts(rate, denominator)} (context only: the interval counts trials)"
    out.append((f"{label}, counts", context))
    return out


def comparison_figures(ev: Evaluation, level: str) -> list[tuple[str, str]]:
    """What a comparison card lists: each side, the measured effect, the claimed one, the band."""
    cmp = ev.comparison
    assert cmp is not None
    figures = []
    for c in cmp.conditions:
        where = f" at {c.label}" if len(cmp.conditions) > 1 else ""
        own = c.baseline.label != c.candidate.label
        figures += side_figures(f"Baseline{where}", c.baseline, cmp.unit, level, own)
        figures += side_figures(f"Candidate{where}", c.candidate, cmp.unit, level, own)
        measured = t.minus(interval_text(c, simultaneous=bool(where), unit=cmp.unit)) + (
            f" ({c.verdict})" if where else ""
        )
        said = "Reported" if c.baseline.reported or c.candidate.reported else "Measured"
        figures.append((f"{said}{where}", measured))
        if c.trials_needed:
            likely = f", most likely as {c.settles_as}" if c.settles_as else ""
            figures.append((f"Trials needed per side{where}", f"{c.trials_needed} to settle the verdict{likely}"))
        elif c.unsettled:
            figures.append((f"Trials needed per side{where}", t.minus(c.unsettled)))  # it says why
        if c.restored is not None:
            figures.append((f"With the excluded trials{where}", c.restored))
        if c.mann_whitney_p is not None:
            figures.append((f"Mann–Whitney p (cross-check){where}", f"{c.mann_whitney_p:.3g}"))
    kind = f" ({cmp.claimed.kind})" if cmp.claimed else " (direction: the metric's better)"
    figures.append(("Claimed", t.claimed(ev.claim.claimed) + kind))
    if cmp.margin is not None:
        figures.append(("Equivalence margin", f"±{cmp.margin:.1%}"))
    bands = [(c.label, c.band) for c in cmp.conditions if c.band is not None]
    if len({b for _, b in bands}) == 1:
        figures.append(("Within-noise band", f"±{bands[0][1]:.1%}"))
    elif bands:  # each condition's own band, named: they follow each condition's noise
        figures.append(("Within-noise band", "; ".join(f"{label}: ±{b:.1%}" for label, b in bands)))
    if len(cmp.conditions) > 1:
        figures.append(("Intervals", f"simultaneous (Bonferroni), each at {cmp.conditions[0].confidence:.2%}"))
    return figures


def card(ev: Evaluation, role: Markup | str, level: str) -> dict[str, object]:
    c = ev.claim
    figures = comparison_figures(ev, level) if ev.comparison is not None else []
    figures += side_figures("Figure", ev.figure, ev.unit, level)
    if c.value is not None:
        figures.append(("Stated figure", t.number(c.value)))
    if ev.sources:
        figures.append(("Source", " · ".join(f"{run}: {words}" for run, words in ev.sources)))
    if ev.receipts:
        figures.append(("Receipts", " · ".join(f"{run}: {state}" for run, state in ev.receipts)))
    if ev.reproduced:
        figures.append(("Rerun", " · ".join(f"{run}: {found.words}" for run, found in ev.reproduced)))
    # Raw HTML is not rewritten by MkDocs: these hrefs assume directory URLs (the default).
    links = [str(t.link("report", t.path_url(f"../../reports/{ev.report.slug}") + "/"))]
    for run in dict.fromkeys(r for r in (c.baseline, c.candidate, c.run) if r):  # a claim inside one run: once
        links.append(str(t.link(run, f"../../runs/{run}/")))
    if c.source is not None:
        links.append(str(t.link(c.source.citation, t.url(c.source.url))))
    return {
        "slug": ev.headline.replace(" ", "-"),
        "role": role,
        "findings": findings(ev, "../"),
        "date": c.date,
        "id": c.id,
        "statement": t.lines(c.statement),
        "badge": verdict_badges(ev),
        "credits": credit_lines(ev, "../"),
        "flags": flag_pills(ev.flags),
        "figures": figures,
        "reason": reason_markup(ev.reason),
        "links": Markup(" · ".join(links)),
    }


def reason_markup(reason: str) -> Markup:
    """The verdict's reason as page text, the field a claim may add (`incomplete: accepted`) as code."""
    shown = str(t.text(t.minus(reason)))
    code = str(t.text(f"`{ACCEPTED}`"))
    return Markup(shown.replace(code, f"<code>{t.text(ACCEPTED)}</code>"))


MAX_SIDE_TRIALS = 100  # trials listed per side; the charts bin, the statistics keep all


def trials_table(ev: Evaluation) -> Markup:
    """Every trial behind the claim, excluded ones struck through with their reason (an HTML
    table that search does not index: the claim is found by its statement and figures)."""
    own = any(c.baseline.label != c.candidate.label for c in ev.conditions)  # each side's own condition
    several = len(ev.conditions) > 1 or own
    head = ["Condition"] * several + ["Side", "Run", "Trial", "Value"]
    rows: list[list[str | Markup]] = []
    for c in ev.conditions:
        for name, s in (("baseline", c.baseline), ("candidate", c.candidate)):
            where = [s.label if own else c.label] * several
            shown = _rate_percent if s.is_rate else t.number
            for k, (trial, value) in enumerate(zip(s.trials, s.values, strict=True)):
                if k == MAX_SIDE_TRIALS:
                    more = f"{len(s.values) - k:,} more trials in the run's results.csv"
                    rows.append([*where, name, s.run, "…", more])
                    break
                rows.append([*where, name, s.run, "reported" if trial is None else str(trial), shown(value)])
            for trial, value, reason in s.excluded:
                struck = Markup(f"<del>{shown(value)}</del> (excluded: {t.text(reason)})")
                rows.append([*where, name, s.run, Markup(f"<del>{trial}</del>"), struck])
    return blocks.table(head, rows, right=[len(head) - 2, len(head) - 1], searched=False, kind="trials")


def _rate_percent(value: float | None) -> str:
    return t.percent(value, 2)


FOREST_COLUMNS = (
    "Claim",
    "Condition",
    "Verdict",
    "Ratio",
    "Interval",
    "Level",
    "Within-noise band",
    "n (baseline / candidate)",
)


def _interval(low: float | None, high: float | None) -> str:
    """A ratio's interval in the table beside the forest plot; one of no width is not printed."""
    if low is None or high is None:
        return "none"
    return IDENTICAL_SIDES if low == high else f"[{t.number(low)}, {t.number(high)}]"


def _ratio_cells(c: Comparison, unit: str | None) -> tuple[str, str]:
    """The Ratio and Interval cells: a metric's ratio and its interval; a rate's difference in
    percentage points first, then its ratio labelled as one ("+39.0 pp (ratio 2.386x)"), and the
    ratio's interval ("[2.101x, 2.710x]"), or why it has none."""
    both = proportions(c, unit)
    if both is None or c.ratio is None:
        return (t.number(c.ratio) if c.ratio is not None else "–"), _interval(c.ci_low, c.ci_high)
    ratio = f"{points(both[1] - both[0])} (ratio {times(c.ratio)})"
    if c.ci_low is None or c.ci_high is None:
        return ratio, "none"
    if (c.baseline.constant and c.candidate.constant) or c.ci_low == c.ci_high:
        return ratio, RATE_EXACT
    return ratio, f"[{times(c.ci_low)}, {times(c.ci_high)}]"


def _min_effect(ev: Evaluation) -> str:
    """The smallest change worth calling, and for a claim on a rate the ratio it bounds: a rate
    is judged by its ratio, with min_effect as a ratio ("±1.0%, as a ratio 0.990x to 1.010x")."""
    shown = f"±{ev.min_effect:.1%}"
    if any(proportions(c, ev.unit) is not None for c in ev.conditions):
        shown += f" (a rate is judged by its ratio: {times(1 - ev.min_effect)} to {times(1 + ev.min_effect)})"
    return shown


def forest_rows(chain: Sequence[Evaluation]) -> list[dict[str, str]]:
    """The table beside the forest plot: one row per claim and condition."""
    out = []
    for ev in chain:
        for c in ev.conditions:
            out.append(
                {
                    "id": ev.claim.id,
                    "at": c.label,
                    "verdict": c.verdict,
                    **dict(zip(("ratio", "interval"), _ratio_cells(c, ev.unit), strict=True)),
                    "level": level_of(c.confidence),
                    "band": f"±{c.band:.1%}" if c.band is not None else "–",
                    "n": sides_n(c),
                }
            )
    return out


def findings(ev: Evaluation, up: str) -> list[Markup]:
    """What a claim's corrections found of it, and for a correction what it found (with whether
    its runs bear that out), one line each (`up` climbs from the page to the claims folder)."""
    out = [corrected_line(c, ev.claim.claimed, up) for c in ev.corrections]
    own = ev.correction
    if own is not None and own.finding is not None:
        corrected = t.link(own.corrects, f"{up}{t.path_url(own.corrects)}/")
        check = check_text(own)
        out.append(
            Markup("<strong>Finds ")
            + t.text(own.finding)
            + Markup("</strong> of ")
            + corrected
            + Markup(": ")
            + t.text(finding_text(own, None))
            + Markup(". ")
            + t.text(check)
        )
    return out


def claim_page(
    chain: Sequence[Evaluation],
    forest: str | None,
    trial_specs: Mapping[str, str],
    settings: Settings,
    grids: Sequence[Markup] = (),
    sweep: SweepBlock | None = None,
    *,
    focus: str | None = None,
) -> str:
    """The claim and its corrections side by side, with the forest plot, the sweep of both sides,
    trials, confounds, limits. `focus` is the claim whose page this is (the chain's original by
    default): its statement is the page's headline, so a correction's page reads as the correction."""
    first = chain[0]
    shown = next((ev for ev in chain if ev.claim.id == focus), first)
    roles = ["Original claim"] + [Markup("Correction of ") + t.text(ev.claim.corrects or "") for ev in chain[1:]]
    intro = (
        "The claim and its correction, side by side: the correction stands beside the original, "
        "which is never edited away."
        if len(chain) > 1
        else "This claim has no correction."
    )
    if shown is not first:
        intro = (
            f"A correction of the claim “{first.claim.statement}”, shown beside it: the original is never edited away."
        )
    rows = forest_rows(chain)
    trials = [
        TrialsBlock(ev.claim.id, trial_specs[ev.claim.id], trials_table(ev))
        for ev in chain
        if ev.claim.id in trial_specs
    ]
    limits = list(dict.fromkeys(limit for ev in chain for limit in [*ev.report.meta.limits, *ev.claim.limits]))
    sources = dict.fromkeys(
        Markup(f"[{t.text(ev.report.meta.title)}]({t.path_url(f'../../reports/{ev.report.slug}.md')})") for ev in chain
    )
    return render(
        "claim.md.j2",
        mark=Markup(generated_mark("the reports' front matter")),
        title=shown.claim.statement,
        intro=intro,
        lead=findings(first, "../"),
        cards=[card(ev, role, t.level(settings.confidence)) for ev, role in zip(chain, roles, strict=True)],
        forest=forest if rows else None,
        forest_table=blocks.table(FOREST_COLUMNS, [list(row.values()) for row in rows], right=[3], kind="forest"),
        folded=blocks.details,
        min_effect=_min_effect(first),
        trials=trials,
        sweep=sweep,
        confounds=[_confounds(ev) for ev in chain if ev.claim.kind == "comparison"],
        limits=limits,
        sources=list(sources),
        grids=grids,
    )


def _confounds(ev: Evaluation) -> dict[str, object]:
    """A comparison's unmatched conditions: the keys that differ and are not the ones it varies."""
    inside = ev.claim.baseline == ev.claim.candidate  # a claim inside one run: one manifest, two conditions
    unseen = ev.comparison.unrecorded if ev.comparison and not inside else ()  # one run: nothing can differ
    return {
        "id": ev.claim.id,
        "rows": ev.confounds,
        "compared": ev.comparison.compared if ev.comparison else (),
        "unrecorded": unrecorded_lines(ev.corrections, unseen),
        "varies": ", ".join(ev.claim.varies),
        "baseline": ev.claim.baseline,
        "candidate": ev.claim.candidate,
        "inside": inside,
        "sides": "; ".join(dict.fromkeys(c.label for c in ev.conditions)),
    }
