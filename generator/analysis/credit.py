"""What an attribution grid says about the credit a comparison claim gives.

A comparison claim credits its gain to the keys it `varies`. When both of its runs are cells
of a grid judged on the same metric at one of the claim's conditions, the grid has measured
every factor separately, and its verdict on the factor the claim credits is carried to the
claim: a claim the grid judges misattributed is never shown as "supported" alone.

Pure: takes a claim, its judged conditions and a judged grid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..format.conditions import same_condition
from ..format.front_matter import Claim
from .grid_records import Grid, GridVerdict
from .records import Comparison


@dataclass(frozen=True, kw_only=True)
class CreditCheck:
    """One grid's judgement of the factor a claim credits."""

    grid: str  # the attribution's id (its page is claims/<id>/)
    statement: str  # the attribution's statement
    verdict: GridVerdict  # the grid's verdict on this claim's credit
    credited: tuple[str, ...]  # the grid's factors the claim credits (through `varies`)
    earned: str | None  # the factor the grid credits, if any
    sentence: str  # in words, e.g. "the grid credits the gain to draft, not to threads"

    @property
    def overrules(self) -> bool:
        """The grid finds the credit wrong, or not separable: the claim's own verdict must not
        stand alone."""
        return self.verdict in ("misattributed", "interacts")


def check_credit(claim: Claim, conditions: Sequence[Comparison], grid: Grid) -> CreditCheck | None:
    """The grid's judgement of the claim's credit, when the grid holds both of the claim's runs
    on its metric at one of the claim's judged `conditions`; None when it does not bear on it."""
    a = grid.attribution
    if claim.kind != "comparison" or claim.metric != a.metric:
        return None
    if not {claim.baseline, claim.candidate} <= set(a.runs):
        return None
    own = claim.baseline_at and claim.candidate_at and same_at(claim.baseline_at, a.at)
    if not any(same_at(c.at, a.at) for c in conditions) and not (own and same_at(claim.candidate_at, a.at)):
        return None
    credited = tuple(f for f, key in a.factors.items() if _varied(key, claim.varies))
    if not credited or set(_differing(grid, claim.baseline, claim.candidate)) <= set(credited):
        return None  # credits no factor, or its runs differ in nothing but what it credits: nothing to take apart
    verdict, sentence = _judged(grid, credited)
    return CreditCheck(
        grid=a.id, statement=a.statement, verdict=verdict, credited=credited, earned=grid.earned, sentence=sentence
    )


def _differing(grid: Grid, baseline: str | None, candidate: str | None) -> tuple[str, ...]:
    """The grid's factors whose levels differ between the claim's two cells."""
    cells = {c.run: c.levels for c in grid.cells}
    if baseline not in cells or candidate not in cells:
        return grid.factors
    return tuple(f for k, f in enumerate(grid.factors) if cells[baseline][k] != cells[candidate][k])


def same_at(at: Mapping[str, object], grid_at: Mapping[str, object]) -> bool:
    """Is the claim's condition the grid's (8 matches '8' and '8.0')?"""
    return set(at) == set(grid_at) and all(same_condition(grid_at[k], str(at[k])) for k in at)


def _varied(key: str, varies: Sequence[str]) -> bool:
    return any(key == v or key.startswith(v + ".") for v in varies)


def _judged(grid: Grid, credited: tuple[str, ...]) -> tuple[GridVerdict, str]:
    """The grid's own verdict when it judges the factor the claim credits; otherwise the same
    question asked of the grid's effects: which factor earned the gain."""
    names = " and ".join(credited) or "none of the grid's factors"
    if grid.verdict == "no trial data":
        return grid.verdict, f"the grid has too few trials to tell how much of the gain {names} earned"
    if grid.verdict == "interacts":
        return grid.verdict, f"the grid finds its factors interact, so the gain cannot be credited to {names} alone"
    if credited == (grid.attribution.credits,) and grid.verdict != "supported":
        return grid.verdict, _sentence(grid.verdict, grid.earned, names)
    if grid.earned is None:
        return (
            "inconclusive",
            f"the grid credits the gain to no single factor, so the credit to {names} is not established",
        )
    if grid.earned in credited:
        return "supported", f"the grid also credits the gain to {grid.earned}"
    return "misattributed", f"the grid credits the gain to {grid.earned}, not to {names}"


def _sentence(verdict: GridVerdict, earned: str | None, names: str) -> str:
    if verdict == "misattributed" and earned is not None:
        return f"the grid credits the gain to {earned}, not to {names}"
    return f"the grid cannot tell whether {names} earned the gain"
