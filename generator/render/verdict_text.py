"""How a claim's verdict and effect read wherever they are shown (the claims ledger, claim
cards, report panels, the front page, grid pages, `benchledger review`): badges, the credit a
grid gives, the effect with its interval in the claim's own unit, and the flags."""

from __future__ import annotations

from markupsafe import Markup

from ..analysis.claims import Evaluation
from ..analysis.comparison import Comparison, Side
from ..analysis.wording import pct
from ..format.signed import level as level_of
from ..format.signed import signed
from . import text as t


def badge(verdict: str) -> Markup:
    slug = verdict.replace(" ", "-")
    return Markup(f'<span class="bl-verdict bl-verdict--{slug}">{t.text(verdict)}</span>')


def verdict_badges(ev: Evaluation) -> Markup:
    """The claim's verdict, and beside it the verdict of a grid that overrules its credit
    ("supported · misattributed"): a claim whose credit a grid finds wrong never shows
    "supported" alone. `data-bl-headline` is what the ledger's filter and counts file it under."""
    shown = badge(ev.verdict)
    if (grid := ev.overruled) is not None:
        shown += Markup(" · ") + badge(grid.verdict)
    slug = ev.headline.replace(" ", "-")
    return Markup(f'<span class="bl-verdicts" data-bl-headline="{slug}">{shown}</span>')


def credit_lines(ev: Evaluation, up: str) -> list[Markup]:
    """One line per grid that holds both runs of the claim: its verdict on the credit, in
    words, linking the grid's page (`up` climbs from the page to the claims folder)."""
    return [
        badge(c.verdict)
        + Markup(" ")
        + t.text(c.sentence[:1].upper() + c.sentence[1:])
        + Markup(" (")
        + t.link(f"grid {c.grid}", f"{up}{c.grid}/")
        + Markup(").")
        for c in ev.credits
    ]


def interval_text(c: Comparison, simultaneous: bool = False, unit: str | None = None) -> str:
    """A condition's measured effect with its interval: in percent for a metric; for a rate,
    the difference in percentage points and both rates first, then the ratio, labelled as one
    (a "+138.6%" beside percentages reads as points). A Bonferroni interval says its level."""
    if c.ratio is None:
        return "–"
    rates = _rates(c) or _percents(c, unit)
    shown = f"{rates}; ratio {c.ratio:.3f}" if rates else pct(c.ratio)
    if c.ci_low is None or c.ci_high is None:
        return f"{shown} (reported figures, no interval)"
    if c.ci_low == c.ci_high:
        return f"{shown} (no run-to-run variation measured: no interval)"
    notes = [f"{level_of(c.confidence)} simultaneous (Bonferroni)"] if simultaneous else []
    notes += ["from published mean, SD and n"] if c.source == "summaries" else []
    bounds = f"{c.ci_low:.3f}, {c.ci_high:.3f}" if rates else f"{pct(c.ci_low)}, {pct(c.ci_high)}"
    return f"{shown} [{bounds}]" + (f" ({'; '.join(notes)})" if notes else "")


def _rates(c: Comparison) -> str:
    """For a rate, the difference in percentage points and both rates ("+49.5 pp, 22.7% → 72.2%")."""
    base, cand = c.baseline.proportion, c.candidate.proportion
    if base is None or cand is None:
        return ""
    return f"{signed((cand - base) * 100, unit=' pp')} ({base:.1%} → {cand:.1%})"


def _percents(c: Comparison, unit: str | None) -> str:
    """For a metric measured in percent (a reported acceptance "72.2" with unit %), the
    difference in percentage points and both figures, as for a rate."""
    if unit != "%":
        return ""
    base, cand = _figure(c.baseline), _figure(c.candidate)
    if base is None or cand is None:
        return ""
    return f"{cand - base:+.1f} pp ({base:.1f}% → {cand:.1f}%)"


def _figure(s: Side) -> float | None:
    if s.summary is not None:
        return s.summary.mean
    return s.values[0] if s.values else None


def effect(ev: Evaluation) -> str:
    """The measured effect: its interval, or one line per condition of a several-condition claim."""
    if len(ev.conditions) > 1:
        return "; ".join(f"{c.label}: {interval_text(c, simultaneous=True, unit=ev.unit)}" for c in ev.conditions)
    return interval_text(ev.only, unit=ev.unit) if ev.only else "–"


def flags(ev: Evaluation) -> str:
    return ", ".join(ev.flags) or "–"
