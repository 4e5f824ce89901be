"""Verdicts in plain words: why each condition got its verdict, and why the claim did."""

from __future__ import annotations

from collections.abc import Sequence

from ..format.claimed import Claimed
from ..format.signed import change
from .records import Comparison, Side
from .verdicts import Verdict


def pct(ratio: float) -> str:
    """A ratio as a signed percent change: 1.077 -> '+7.7%'."""
    return change(ratio)


def level(confidence: float) -> str:
    return f"{confidence * 100:.4g}%"


def no_data(b: Side, c: Side) -> str:
    parts = []
    for name, s in (("baseline", b), ("candidate", c)):
        if s.reported and s.published is None:
            parts.append(f"the {name} ({s.run}) holds figures copied from a publication that reported no trials")
        elif s.n < 2:
            parts.append(f"the {name} ({s.run}) has {s.n} trial{'s' if s.n != 1 else ''} at {s.label}")
    return (
        "No trial data: "
        + "; ".join(parts)
        + ". A verdict needs at least two measured trials on each side (or a published mean, SD "
        "and n >= 2); re-measure both configurations under matched conditions, several trials each, "
        "and commit the runs."
    )


def explain(
    found: Comparison,
    direction: int,
    claimed: Claimed | None,
    claimed_ratio: float | None,
    eq: bool,
    min_effect: float,
) -> str:
    """Why this condition got its verdict, with the numbers that decided it."""
    assert found.ci_low is not None and found.ci_high is not None and found.band is not None
    interval = (
        f"the {level(found.confidence)} interval of the ratio runs from {pct(found.ci_low)} to {pct(found.ci_high)}"
        if found.ci_low != found.ci_high
        else f"every trial of each side gave the same value, so the difference is exactly {pct(found.ci_low)}"
    )
    if found.source == "summaries":
        interval += " (from published mean, SD and n)"
    tost_range = f"{pct(found.tost_low or 1)} to {pct(found.tost_high or 1)}"
    tost = f"the {level(2 * found.confidence - 1)} interval runs from {tost_range}"
    prefix = _variation(found)
    if eq:
        margin = claimed.margin if claimed is not None and claimed.margin is not None else min_effect
        own = claimed is not None and claimed.margin is not None
        text = _equivalence(found.verdict, interval, tost, margin, own, _more(found))
        return prefix + text + _noise_context(found)
    return prefix + _directional(found, direction, claimed, claimed_ratio, interval, tost)


def _more(found: Comparison) -> str:
    """What more trials would do for an inconclusive verdict."""
    if found.unsettled:
        return " " + found.unsettled
    if found.trials_needed:
        likely = f", most likely as {found.settles_as}" if found.settles_as else ""
        return f" About {found.trials_needed:,} trials per side would settle it{likely}."
    return ""


def never_settles(ratio: float, bound: float, name: str) -> str:
    """Why more trials will not settle a verdict: the estimate sits on a bound."""
    what = f" ({name})" if name else ""
    return (
        f"More trials will not settle this: the estimate, {pct(ratio)}, sits on the bound {pct(bound)}{what}, "
        "so however many trials are added the interval keeps straddling it."
    )


def _noise_context(found: Comparison) -> str:
    """The run-to-run noise beside an equivalence verdict: context, never its margin."""
    if found.noise is None or found.noise <= 0:
        return ""
    return (
        f" Run-to-run noise, for context: CV {found.noise:.1%}, so a single run cannot show a change much "
        "smaller than that; the margin does not grow with it."
    )


def _variation(found: Comparison) -> str:
    constant = [s for s in (found.baseline, found.candidate) if s.constant]
    if not constant:
        return ""
    names = " and ".join(s.run for s in constant)
    return (
        f"No run-to-run variation was measured in {names} (every trial gave the same value: a deterministic "
        "workload?), so the interval shows less uncertainty than a repeat on another day would. "
    )


def _equivalence(verdict: Verdict, interval: str, tost: str, margin: float, own: bool, more: str) -> str:
    which = f"the ±{margin:.1%} margin" + ("" if own else ", the smallest change worth calling")
    if verdict == "supported":
        return f"Supported (two one-sided tests): {tost}, inside {which}."
    if verdict == "contradicted":
        return f"Contradicted: {interval}, entirely outside {which}."
    return f"Inconclusive: {tost}, not inside {which}, and {interval}, not outside it.{more}"


def _directional(
    found: Comparison, direction: int, claimed: Claimed | None, claimed_ratio: float | None, interval: str, tost: str
) -> str:
    assert found.ci_low is not None and found.ci_high is not None
    way = "an increase" if direction > 0 else "a decrease"
    verdict = found.verdict
    if verdict == "contradicted":
        return f"Contradicted: {interval}, entirely beyond the smallest change worth calling, opposite to the claim."
    if verdict == "overstated" and claimed is not None:
        far = found.ci_high if direction > 0 else found.ci_low
        return f"Overstated: claimed {claimed.text}, the data allow at most {pct(far)} ({interval})."
    if verdict == "supported":
        text = f"Supported: {interval}, entirely beyond the smallest change worth calling, as {way}."
        if found.understated and claimed is not None:
            near = found.ci_low if direction > 0 else found.ci_high
            text += f" The claimed {claimed.text} is understated: the data show at least {pct(near)}."
        return text
    if verdict == "within noise":
        return (
            f"Within noise: {interval}, which contains no difference, and {tost}, inside the "
            f"±{found.band:.1%} band of no difference."
        )
    more = _more(found)
    if not direction:
        return f"Inconclusive: the claim gives no direction to test, and {interval}.{more}"
    return f"Inconclusive: {interval}, which is too wide to decide.{more}"


def combined(judged: Sequence[Comparison], verdict: Verdict) -> str:
    """The claim's verdict over several conditions, naming the conditions that decided it."""
    by: dict[str, list[str]] = {}
    for c in judged:
        by.setdefault(c.verdict, []).append(c.label)
    counts = "; ".join(f"{v} at {', '.join(labels)}" for v, labels in by.items())
    k = len(judged)
    rule = (
        f"Judged at {k} conditions with simultaneous (Bonferroni) intervals; the claim holds only where "
        "every condition holds."
    )
    if verdict in ("supported", "within noise"):
        return f"{verdict.capitalize()} at every one of the {k} conditions. {rule}"
    return f"{verdict.capitalize()}: {counts}. {rule}"
