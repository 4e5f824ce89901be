"""The records of an attribution grid: its cells, its effects and the grid with its verdict
(fitted in attribution.py, judged in grid_verdict.py)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from ..format.front_matter import Attribution
from . import stats
from .verdicts import Verdict

GridVerdict = Literal["no trial data", "interacts", "misattributed", "supported", "inconclusive"]
GRID_VERDICTS: tuple[GridVerdict, ...] = get_args(GridVerdict)
JOINER = " × "


@dataclass(frozen=True, kw_only=True)
class Cell:
    run: str
    levels: tuple[str, ...]  # each factor's value in this run, in the order of `factors`
    values: tuple[float, ...]  # per-trial values at the grid's condition (excluded trials left out)
    mean: float | None
    low: float | None  # the mean's interval
    high: float | None


@dataclass(frozen=True, kw_only=True)
class Effect:
    factors: tuple[str, ...]  # one factor: a main effect; more: their interaction
    ratio: float
    ci: tuple[float, float]
    tost: tuple[float, float]
    verdict: Verdict

    @property
    def name(self) -> str:
        return JOINER.join(self.factors)

    @property
    def size(self) -> float:
        return abs(math.log(self.ratio))


@dataclass(frozen=True, kw_only=True)
class Grid:
    attribution: Attribution
    report: str  # the slug of the report that declares it
    factors: tuple[str, ...]
    levels: Mapping[str, tuple[str, str]]  # factor -> (base level, other level)
    cells: tuple[Cell, ...]
    effects: tuple[Effect, ...]
    verdict: GridVerdict
    earned: str | None  # the factor the grid credits: the largest real main effect in the gain's direction
    reason: str
    noise: float | None = None
    band: float | None = None
    df: int | None = None
    trials_needed: int | None = None  # per cell, when inconclusive
    confidence: float = stats.CONFIDENCE
    unsettled: str | None = None  # inconclusive, and more trials per cell will not settle it: why
    settles_as: str | None = None  # the verdict the trials needed would most likely give
    oriented: Mapping[str, str] = field(default_factory=dict)  # factor -> what chose its base level, in words
    gain: float | None = None  # the ratio of the gain the credit is about: the claim's cells, else all factors

    def effect(self, *factors: str) -> Effect | None:
        return next((e for e in self.effects if e.factors == factors), None)


def effect_terms(k: int) -> list[tuple[int, ...]]:
    """Every main effect, then every interaction, in the order of the factors."""
    return [combo for r in range(1, k + 1) for combo in itertools.combinations(range(k), r)]
