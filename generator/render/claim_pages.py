"""Pages about claims: the claims ledger, a page per claim chain, the methods page
and the claims panel of a report. Renderers return strings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ..analysis.claims import Evaluation
from ..analysis.comparison import Settings, Side
from . import text as t
from .templating import generated_mark, render

CLAIMS = "claims"


def badge(verdict: str) -> Markup:
    slug = verdict.replace(" ", "-")
    return Markup(f'<span class="bl-verdict bl-verdict--{slug}">{t.text(verdict)}</span>')


def effect(ev: Evaluation) -> str:
    """The measured effect with its interval, in percent."""
    if ev.ratio is None:
        return "–"
    shown = f"{(ev.ratio - 1) * 100:+.1f}%"
    if ev.ci_low is None or ev.ci_high is None:
        return f"{shown} (reported figures, no interval)"
    return f"{shown} [{(ev.ci_low - 1) * 100:+.1f}%, {(ev.ci_high - 1) * 100:+.1f}%]"


def flags(ev: Evaluation) -> str:
    return ", ".join(ev.flags) or "–"


def claims_index(evaluations: Mapping[str, Evaluation]) -> str:
    """Every claim, newest first, with its verdict badge, effect and flags."""
    ordered = sorted(evaluations.values(), key=lambda e: (str(e.claim.date or ""), e.claim.id), reverse=True)
    rows = [
        {
            "date": ev.claim.date or "–",
            "link": Markup(f"[{t.text(ev.claim.statement)}]({ev.claim.id}/index.md)"),
            "badge": badge(ev.verdict),
            "measured": effect(ev),
            "claimed": ev.claim.claimed or "–",
            "flags": flags(ev),
        }
        for ev in ordered
    ]
    counts: dict[str, int] = {}
    for ev in ordered:
        counts[ev.verdict] = counts.get(ev.verdict, 0) + 1
    return render(
        "claims_index.md.j2",
        mark=Markup(generated_mark("the reports' front matter")),
        rows=rows,
        counts=sorted(counts.items()),
    )


@dataclass(frozen=True)
class TrialsBlock:
    id: str
    spec: str
    table: Markup


def side_figures(label: str, s: Side | None, unit: str | None, level: str) -> list[tuple[str, str]]:
    if s is None:
        return []
    u = f" {unit}" if unit else ""
    if s.reported:
        return [(label, f"{s.run}: {t.number(s.values[0]) if s.values else '–'}{u}, trials not reported")]
    if s.summary is None:
        return [(label, f"{s.run}: no trials at {s.label}")]
    ci = ""
    if s.summary.ci_low is not None:
        ci = f" [{t.number(s.summary.ci_low)}, {t.number(s.summary.ci_high)}]"
    out = [(label, f"{s.run}: mean {t.number(s.summary.mean)}{ci}{u}, n = {s.summary.n}")]
    if s.pooled is not None and s.pooled.pooled is not None:
        p = s.pooled
        out.append(
            (
                f"{label}, pooled",
                f"{t.percent(p.pooled)} of {t.number(p.attempts)} (Wilson {level} "
                f"{t.percent(p.wilson_low)} – {t.percent(p.wilson_high)})",
            )
        )
    return out


def card(ev: Evaluation, role: Markup | str, level: str) -> dict[str, object]:
    c = ev.claim
    figures = side_figures("Baseline", ev.baseline, ev.unit, level)
    figures += side_figures("Candidate", ev.candidate, ev.unit, level)
    figures += side_figures("Figure", ev.figure, ev.unit, level)
    if c.value is not None:
        figures.append(("Stated figure", t.number(c.value)))
    if c.kind == "comparison":
        figures.append(("Measured", effect(ev)))
        figures.append(("Claimed", c.claimed or "–"))
        if ev.noise is not None:
            figures.append(("Noise band", f"±{ev.noise:.1%}"))
        if ev.trials_needed:
            figures.append(("Trials needed per side", str(ev.trials_needed)))
        if ev.mann_whitney_p is not None:
            figures.append(("Mann–Whitney p (cross-check)", f"{ev.mann_whitney_p:.3g}"))
    if ev.receipts:
        figures.append(("Receipts", " · ".join(f"{run}: {state}" for run, state in ev.receipts)))
    # Raw HTML is not rewritten by MkDocs: these hrefs assume directory URLs (the default).
    links = [str(t.link("report", t.path_url(f"../../reports/{ev.report.slug}") + "/"))]
    for run in (c.baseline, c.candidate, c.run):
        if run:
            links.append(str(t.link(run, f"../../runs/{run}/")))
    if c.source is not None:
        links.append(str(t.link(c.source.citation, t.url(c.source.url))))
    return {
        "slug": ev.verdict.replace(" ", "-"),
        "role": role,
        "date": c.date,
        "id": c.id,
        "statement": t.lines(c.statement),
        "badge": badge(ev.verdict),
        "flags": ev.flags,
        "figures": figures,
        "reason": ev.reason,
        "links": Markup(" · ".join(links)),
    }


def trials_table(ev: Evaluation) -> Markup:
    rows = "| Side | Run | Trial | Value |\n| --- | --- | ---: | ---: |\n"
    for name, s in (("baseline", ev.baseline), ("candidate", ev.candidate)):
        if s is None:
            continue
        for trial, value in zip(s.trials, s.values, strict=True):
            shown = "reported" if trial is None else str(trial)
            rows += f"| {name} | {t.text(s.run)} | {shown} | {t.number(value)} |\n"
    return Markup(rows)


def claim_page(
    chain: Sequence[Evaluation], forest: str | None, trial_specs: Mapping[str, str], settings: Settings
) -> str:
    """The claim and its corrections side by side, with the forest plot, trials, confounds, limits."""
    first = chain[0]
    roles = ["Original claim"] + [Markup("Correction of ") + t.text(ev.claim.corrects or "") for ev in chain[1:]]
    intro = (
        "The claim and its correction, side by side: the correction stands beside the original, "
        "which is never edited away."
        if len(chain) > 1
        else "This claim has no correction."
    )
    forest_rows = [
        {
            "id": ev.claim.id,
            "verdict": ev.verdict,
            "ratio": t.number(ev.ratio) if ev.ratio is not None else "–",
            "interval": f"[{t.number(ev.ci_low)}, {t.number(ev.ci_high)}]" if ev.ci_low is not None else "none",
            "noise": f"±{ev.noise:.1%}" if ev.noise is not None else "–",
            "min_effect": f"±{ev.min_effect:.0%}",
            "n": f"{ev.baseline.n if ev.baseline else '–'} / {ev.candidate.n if ev.candidate else '–'}",
        }
        for ev in chain
        if ev.claim.kind == "comparison"
    ]
    trials = [
        TrialsBlock(ev.claim.id, trial_specs[ev.claim.id], trials_table(ev))
        for ev in chain
        if ev.claim.id in trial_specs
    ]
    confounds = [
        {
            "id": ev.claim.id,
            "rows": ev.confounds,
            "varies": ", ".join(ev.claim.varies) or "nothing",
            "baseline": ev.claim.baseline,
            "candidate": ev.claim.candidate,
        }
        for ev in chain
        if ev.claim.kind == "comparison"
    ]
    limits: list[str] = []
    for ev in chain:
        for limit in [*ev.report.meta.limits, *ev.claim.limits]:
            if limit not in limits:
                limits.append(limit)
    sources = []
    for ev in chain:
        link = Markup(f"[{t.text(ev.report.meta.title)}](../../reports/{ev.report.slug}.md)")
        if link not in sources:
            sources.append(link)
    return render(
        "claim.md.j2",
        mark=Markup(generated_mark("the reports' front matter")),
        title=first.claim.statement,
        intro=intro,
        cards=[card(ev, role, t.level(settings.confidence)) for ev, role in zip(chain, roles, strict=True)],
        forest=forest if forest_rows else None,
        forest_rows=forest_rows,
        confidence=t.level(settings.confidence),
        trials=trials,
        confounds=confounds,
        limits=limits,
        sources=sources,
    )


def methods_page(settings: Settings) -> str:
    noise = "the larger per-trial CV of the two sides" if settings.noise is None else f"±{settings.noise:.1%}"
    rule = (
        "± the larger per-trial coefficient of variation of the two runs at that condition"
        if settings.noise is None
        else f"fixed by the publication at ±{settings.noise:.1%}"
    )
    return render(
        "methods.md.j2",
        mark=Markup(generated_mark("the plugin configuration")),
        confidence=t.level(settings.confidence),
        min_effect=f"{settings.min_effect:.1%}",
        noise=noise,
        noise_rule=rule,
    )


def report_panel(evaluations: Sequence[Evaluation]) -> str:
    """The claims panel of a report page: statement, verdict and effect of each claim."""
    if not evaluations:
        return ""
    rows = "".join(
        f"| [{t.text(ev.claim.statement)}](../claims/{ev.claim.id}/index.md) | {badge(ev.verdict)} | "
        f"{t.text(effect(ev))} | {t.text(flags(ev))} |\n"
        for ev in evaluations
    )
    return (
        "\n\n**Claims in this report** ([how verdicts are computed](../methods.md))\n\n"
        "| Claim | Verdict | Measured | Flags |\n| --- | --- | --- | --- |\n" + rows + "\n"
    )


def insert_panel(markdown: str, panel: str) -> str:
    """Put the panel where `<!-- claims -->` stands, else after the first H1, else on top."""
    if "<!-- claims -->" in markdown:
        return markdown.replace("<!-- claims -->", panel, 1)
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join([*lines[: i + 1], panel, *lines[i + 1 :]])
    return panel + markdown
