"""How a claim's verdict and effect read wherever they are shown (the claims ledger, claim
cards, report panels, the front page, grid pages, `benchledger review`): badges, the credit a
grid gives, the effect with its interval in the claim's own unit, and the flags."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from markupsafe import Markup

from ..analysis.claims import Evaluation
from ..analysis.comparison import Comparison, Side
from ..analysis.records import RATE_EXACT
from ..analysis.stats import IDENTICAL_SIDES
from ..analysis.wording import pct
from ..format.signed import level as level_of
from ..format.signed import points, times
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
        + t.text(t.minus(c.sentence[:1].upper() + c.sentence[1:]))
        + Markup(" (the grid ")
        + t.link(c.statement, f"{up}{c.grid}/")
        + Markup(").")
        for c in ev.credits
    ]


def interval_text(c: Comparison, simultaneous: bool = False, unit: str | None = None) -> str:
    """A condition's measured effect with its interval: in percent for a metric; for a rate,
    the difference in percentage points and both rates first, then the ratio, labelled as one
    (a "+138.6%" beside percentages reads as points). A Bonferroni interval says its level."""
    if c.ratio is None:
        return "–"
    rates = _rates(c, unit)
    if rates:
        return _rate_interval(c, c.ratio, rates, simultaneous)
    shown = pct(c.ratio)
    if c.ci_low is None or c.ci_high is None:
        return f"{shown} ({no_interval(c)})"
    if c.ci_low == c.ci_high:
        return f"{shown} ({IDENTICAL_SIDES}: no interval)"
    notes = [f"{level_of(c.confidence)} simultaneous (Bonferroni)"] if simultaneous else []
    notes += ["from published mean, SD and n"] if c.source == "summaries" else []
    return f"{shown} [{pct(c.ci_low)}, {pct(c.ci_high)}]" + (f" ({'; '.join(notes)})" if notes else "")


def no_interval(c: Comparison) -> str:
    """Why a ratio has no interval: reported figures, or measured sides with too few trials
    ("1 trial, no interval"; "1 trial of the baseline, no interval" when only one side is short)."""
    if c.baseline.reported or c.candidate.reported:
        return "reported figures, no interval"
    short = [(name, s.n) for name, s in (("baseline", c.baseline), ("candidate", c.candidate)) if s.n < 2]
    if not short:
        return "no interval"
    if len(short) == 2 and short[0][1] == short[1][1]:
        return f"{short[0][1]} trial{'s' if short[0][1] != 1 else ''} a side, no interval"
    return ", ".join(f"{n} trial{'s' if n != 1 else ''} of the {name}" for name, n in short) + ", no interval"


def _rate_interval(c: Comparison, ratio_of: float, rates: str, simultaneous: bool) -> str:
    """A rate claim in one unit: percentage points first, then the ratio it is judged by, labelled
    as one, with its interval: '+39.0 pp, 28.2% → 67.2% (ratio 2.386x [2.101x, 2.710x])'. When every
    trial of both sides gave the same rate it says so, and shows no interval of no width."""
    ratio = f"ratio {times(ratio_of)}"
    if c.ci_low is None or c.ci_high is None:
        return f"{rates} ({ratio}; {no_interval(c)})"
    if (c.baseline.constant and c.candidate.constant) or c.ci_low == c.ci_high:
        return f"{rates} ({ratio}; {RATE_EXACT})"
    notes = [f"{level_of(c.confidence)} simultaneous (Bonferroni)"] if simultaneous else []
    notes += ["from published mean, SD and n"] if c.source == "summaries" else []
    return f"{rates} ({ratio} [{times(c.ci_low)}, {times(c.ci_high)}]" + "".join(f"; {n}" for n in notes) + ")"


def proportions(c: Comparison, unit: str | None) -> tuple[float, float] | None:
    """Both sides as proportions, for a claim read in percentage points: a rate's means over its
    trials' rates, or a metric measured in percent (a reported acceptance "72.2" with unit %)
    divided by 100; None for any other metric."""
    if c.baseline.is_rate and c.candidate.is_rate:
        base, cand = c.baseline.proportion, c.candidate.proportion
    elif unit == "%":
        base, cand = _percent(c.baseline), _percent(c.candidate)
    else:
        return None
    return (base, cand) if base is not None and cand is not None else None


def _rates(c: Comparison, unit: str | None) -> str:
    """The difference in percentage points and both sides ("+49.5 pp, 22.7% → 72.2%"); "" for a
    metric that is not a proportion."""
    found = proportions(c, unit)
    if found is None:
        return ""
    base, cand = found
    return f"{points(cand - base)}, {base:.1%} → {cand:.1%}"


def _percent(s: Side) -> float | None:
    """A side's figure in percent (its mean, or the reported figure) as a proportion."""
    figure = s.summary.mean if s.summary is not None else s.values[0] if s.values else None
    return figure / 100 if figure is not None else None


def sides_n(c: Comparison) -> str:
    """Both sides' n as one cell: '5 / 5', 'not reported / 5', 'trials not reported'."""
    return t.n_pair(*(None if s.reported else s.n for s in (c.baseline, c.candidate)))


def effect(ev: Evaluation) -> str:
    """The measured effect: its interval, or one line per condition of a several-condition claim
    (a decrease with the minus sign, `text.minus`)."""
    if len(ev.conditions) > 1:
        return t.minus(
            "; ".join(f"{c.label}: {interval_text(c, simultaneous=True, unit=ev.unit)}" for c in ev.conditions)
        )
    return t.minus(interval_text(ev.only, unit=ev.unit)) if ev.only else "–"


def flags(ev: Evaluation) -> str:
    return ", ".join(ev.flags) or "–"


FlagKind = Literal["info", "caution", "problem", "corrected"]
_PROBLEMS = ("finding not borne out", "stale run", "run not reproduced", "incomplete run", "credit misattributed")
_INFO = ("unverified run", "no trial data", "understated", "republished run")


def flag_kind(flag: str) -> FlagKind:
    """What a flag means to a reader, which its colour shows (benchledger.css .bl-flag--<kind>):
    a correction exists, a problem with the verdict or its runs, something that informs only,
    or (any other flag) a reason for caution."""
    if flag.startswith("corrected"):
        return "corrected"
    if flag.startswith(_PROBLEMS) or flag.startswith("credit interacts"):
        return "problem"
    return "info" if flag in _INFO else "caution"


def flag_pills(shown: Sequence[str]) -> Markup:
    """Flags as outlined pills, each coloured by `flag_kind`, the text always beside the colour."""
    return Markup(" ").join(Markup(f'<span class="bl-flag bl-flag--{flag_kind(f)}">{t.text(f)}</span>') for f in shown)
