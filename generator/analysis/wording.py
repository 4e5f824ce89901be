"""Verdicts in plain words: why each condition got its verdict, and why the claim did."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..format.signed import change, level, points, times
from .records import Comparison, Measured, Question, Side
from .verdicts import Verdict, tost_level


def pct(ratio: float) -> str:
    """A ratio as a signed percent change: 1.077 -> '+7.7%'."""
    return change(ratio)


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


def explain(sides: tuple[Side, Side], verdict: Verdict, m: Measured, q: Question) -> str:
    """Why a measured condition got its verdict, with the numbers that decided it. A rate's
    ratio is written as one ("2.386x"), after its difference in percentage points."""
    points_of = _points(sides)
    shown: Callable[[float], str] = times if points_of else pct
    if points_of:
        interval = _rate_interval(m, q, points_of)
    elif m.ci_low != m.ci_high:
        interval = f"the {level(q.level)} interval of the ratio runs from {pct(m.ci_low)} to {pct(m.ci_high)}"
    else:
        interval = f"every trial of each side gave the same value, so the difference is exactly {pct(m.ci_low)}"
    if m.source == "summaries":
        interval += " (from published mean, SD and n)"
    tost = f"the {level(tost_level(q.level))} interval runs from {shown(m.tost_low)} to {shown(m.tost_high)}"
    prefix = _variation(sides)
    if q.equivalence:
        own = q.claimed is not None and q.claimed.margin is not None
        return prefix + _equivalence(verdict, interval, tost, q.margin, own, _more(m)) + _noise_context(m)
    return prefix + _directional(verdict, m, q, interval, tost, shown)


def _points(sides: tuple[Side, Side]) -> str:
    """A rate's difference in percentage points between the means of the trials' rates, with
    both means ("+39.0 pp, 28.2% → 67.2%"); "" for a metric."""
    base, cand = sides[0].proportion, sides[1].proportion
    if base is None or cand is None:
        return ""
    return f"{points(cand - base)}, {base:.1%} → {cand:.1%}"


def _rate_interval(m: Measured, q: Question, points_of: str) -> str:
    """A rate claim's interval in words: the ratio it is judged by, labelled as one, after its
    percentage points; exact (and only for this prompt set) when every trial was identical."""
    if m.ci_low == m.ci_high:
        return (
            f"every trial of each side gave the same rate, so for this prompt set the difference is exactly "
            f"{points_of} (ratio {times(m.ci_low)}; another prompt set may differ)"
        )
    return (
        f"the difference is {points_of}, and the {level(q.level)} interval of the ratio runs from "
        f"{times(m.ci_low)} to {times(m.ci_high)}"
    )


def _more(m: Measured) -> str:
    """What more trials would do for an inconclusive verdict."""
    if m.unsettled:
        return " " + m.unsettled
    if m.trials_needed:
        likely = f", most likely as {m.settles_as}" if m.settles_as else ""
        return f" About {m.trials_needed:,} trials per side would settle it{likely}."
    return ""


def never_settles(ratio: float, bound: float, name: str, most: int, reach: float) -> str:
    """Why more trials will not settle a verdict: the estimate lies on a bound, closer to it than
    the interval at `most` trials per side (half-width `reach`, as a change) could resolve."""
    what = f" ({name})" if name else ""
    if pct(ratio) == pct(bound):
        return (
            f"More trials will not settle this: the estimate, {pct(ratio)}, sits on the bound {pct(bound)}{what}, "
            "so however many trials are added the interval keeps straddling it."
        )
    return (
        f"More trials will not settle this: the estimate, {pct(ratio)}, is {abs(ratio - bound) * 100:.2g} points "
        f"from the bound {pct(bound)}{what}, and even at {most:,} trials per side the interval would reach "
        f"±{reach * 100:.2g}% around it, so it keeps straddling that bound."
    )


def never_decided(ratio: float, min_effect: float | None) -> str:
    """Why more trials will not settle a verdict: the estimate lies off no change yet inside the
    smallest change worth calling (or the claim gives no direction), so a narrower interval
    excludes no change (never within noise) and decides nothing else."""
    if min_effect is None:
        return (
            "More trials will not settle this: the claim gives no direction, so only within noise could decide "
            f"it, and the estimate, {pct(ratio)}, is off no change: more trials would narrow the interval to "
            "exclude no change."
        )
    band = f"±{min_effect:.1%}"
    return (
        f"More trials will not settle this: the estimate, {pct(ratio)}, lies between no change and the smallest "
        f"change worth calling ({band}), so more trials would narrow the interval to exclude no change (never "
        f"within noise) while it stays inside {band} (never a change worth calling)."
    )


def never_powered(ratio: float, most: int) -> str:
    """Why more trials will not settle a verdict, when the search established only that."""
    return (
        f"More trials will not settle this: with the estimate ({pct(ratio)}) and the spread as measured, no number of "
        f"trials up to {most:,} per side would decide it with 80% probability."
    )


def _noise_context(m: Measured) -> str:
    """The run-to-run noise beside an equivalence verdict: context, never its margin."""
    if m.noise <= 0:
        return ""
    return (
        f" Run-to-run noise, for context: CV {m.noise:.1%}, so a single run cannot show a change much "
        "smaller than that; the margin does not grow with it."
    )


def _variation(sides: tuple[Side, Side]) -> str:
    constant = [s for s in sides if s.constant]
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
    verdict: Verdict, m: Measured, q: Question, interval: str, tost: str, shown: Callable[[float], str] = pct
) -> str:
    way = "an increase" if q.direction > 0 else "a decrease"
    claimed = q.claimed
    if verdict == "contradicted":
        return f"Contradicted: {interval}, entirely beyond the smallest change worth calling, opposite to the claim."
    if verdict == "overstated" and claimed is not None:
        far = m.ci_high if q.direction > 0 else m.ci_low
        return f"Overstated: claimed {claimed.text}, the data allow at most {shown(far)} ({interval})."
    if verdict == "supported":
        text = f"Supported: {interval}, entirely beyond the smallest change worth calling, as {way}."
        if m.understated and claimed is not None:
            near = m.ci_low if q.direction > 0 else m.ci_high
            text += f" The claimed {claimed.text} is understated: the data show at least {shown(near)}."
        return text
    if verdict == "within noise":
        return (
            f"Within noise: {interval}, which contains no difference, and {tost}, inside the "
            f"±{m.band:.1%} within-noise band."
        )
    more = _more(m)
    if not q.direction:
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
