"""The records of a comparison: the verdict settings and the question it asks, both sides at
a condition, each condition's judgement (with its ratio and intervals when measured), and the
claim's judgement over all its conditions. Frozen; no logic beyond derived fields and the
settings' one validation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import BenchledgerError, Problem
from ..format.claimed import Claimed, Direction
from . import rates, stats
from .ratios import Source
from .verdicts import Verdict

NO_VARIATION = "no run-to-run variation"
REPETITIONS = "repetitions in one process"
# A rate claim whose trials are identical on both sides (a fixed prompt set at temperature 0):
# its difference is exact, but only for those prompts.
RATE_EXACT = "every trial identical: exact for this prompt set; another prompt set may differ"


@dataclass(frozen=True)
class Settings:
    """The verdict rule's parameters, published on the methods page."""

    confidence: float = stats.CONFIDENCE
    min_effect: float = 0.01
    noise: float | None = None  # None: the larger per-trial CV of the two sides

    @classmethod
    def parse(cls, given: Mapping[str, object], where: str, prefix: str = "plugins.benchledger.") -> Settings:
        """The one reading of the verdict parameters, for the plugin and the CLI alike: each of
        `given` (missing or None: the default above) checked, or a BenchledgerError naming the
        file (`where`), the field (`prefix` + key: `plugins.benchledger.min_effect`, or
        `--min-effect` for prefix "--"), the value and the fix."""
        known = {"confidence": (0.5, "0.95"), "min_effect": (0.0, "0.01"), "noise": (0.0, "0.06")}
        values: dict[str, float] = {}
        for key, (low, example) in known.items():
            value = given.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value < 1:
                shown = repr(value)[:40] if isinstance(value, str | int | float) else f"a {type(value).__name__}"
                message = f"{shown} is not a number in [{low:g}, 1); e.g. {example}"  # never the repr of a structure
                field = prefix + (key.replace("_", "-") if prefix == "--" else key)
                raise BenchledgerError(Problem(file=where, field=field, message=message))
            values[key] = float(value)
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class Side:
    """One run's trials (or published summary) at one condition."""

    run: str
    label: str
    values: tuple[float, ...]  # per-trial values (per-trial rates for a rate); reported: the figure
    trials: tuple[int | None, ...]
    reported: bool
    summary: stats.Summary | None  # None for reported figures
    rate: rates.RateSummary | None = None  # a measured rate: its trials' proportions, mean and interval
    counted: tuple[str, str] | None = None  # a rate: the metrics it divides (numerator, denominator)
    published: tuple[float, int] | None = None  # reported run with a published (SD, n)
    excluded: tuple[tuple[int | None, float, str], ...] = ()  # (trial, value, reason) left out
    repetitions: bool = False  # the run's trials are repetitions inside one process
    is_rate: bool = False  # a rate (a proportion): its difference is also shown in percentage points

    @property
    def proportion(self) -> float | None:
        """A rate's mean over its trials' proportions (or the mean of its figures when reported);
        None otherwise. The trial is the unit, as for every other figure: never pooled tokens."""
        if not self.is_rate or not self.values:
            return None
        if self.rate is not None and self.rate.mean is not None:
            return self.rate.mean
        return sum(self.values) / len(self.values)

    @property
    def n(self) -> int:
        if self.published is not None:
            return self.published[1]
        return 0 if self.reported else len(self.values)

    @property
    def constant(self) -> bool:
        return self.summary is not None and self.summary.constant

    @property
    def mean_sd_n(self) -> tuple[float, float, int] | None:
        """(mean, SD, n) from the trials or the published summary; None without a spread."""
        if self.published is not None and self.values:
            return self.values[0], self.published[0], self.published[1]
        if self.summary is not None and self.summary.sd is not None:
            return self.summary.mean, self.summary.sd, self.summary.n
        return None

    @property
    def cv(self) -> float | None:
        found = self.mean_sd_n
        return found[1] / abs(found[0]) if found and found[0] else None


@dataclass(frozen=True)
class Confound:
    """A manifest or setup key that differs between the two runs and is not varied on purpose."""

    key: str
    baseline: str
    candidate: str


@dataclass(frozen=True, kw_only=True)
class Question:
    """What one comparison asks, the same at every condition of a claim."""

    settings: Settings
    level: float  # the interval level at each condition (Bonferroni over several)
    direction: Direction
    claimed: Claimed | None
    claimed_ratio: float | None

    @property
    def equivalence(self) -> bool:
        return self.claimed is not None and self.claimed.kind == "equivalence"

    @property
    def margin(self) -> float:
        """An equivalence claim's margin: its own ("±6%"), else the smallest change worth calling
        ("0%", "1.0x", "no difference"), never the data's run-to-run noise."""
        own = self.claimed.margin if self.claimed is not None else None
        return own if own is not None else self.settings.min_effect


@dataclass(frozen=True, kw_only=True)
class Measured:
    """A condition's ratio with its intervals: present exactly when both sides hold enough (two
    trials each, or a published mean, SD and n) to compute one."""

    ratio: float
    ci_low: float
    ci_high: float
    tost_low: float  # the TOST interval, at 1 - 2 alpha
    tost_high: float
    noise: float  # the noise band: the setting's, else the larger per-trial CV of the two sides
    band: float  # max(noise, min_effect): the "no difference" band's half-width
    source: Source  # trials, or summaries (published mean, SD and n)
    understated: bool = False
    trials_needed: int | None = None  # inconclusive: trials per side that would decide it with 80% probability
    settles_as: str | None = None  # the verdict those trials would most likely give
    unsettled: str | None = None  # inconclusive, and more trials will not settle it: why
    mann_whitney_p: float | None = None  # ten or more trials a side


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """One condition of a comparison: both sides, its verdict and, when measured, the ratio
    with its intervals. The flat properties (`ci_low`, `band`, ...) read `measured` for the
    pages and the CLI, None when there is none."""

    baseline: Side
    candidate: Side
    at: Mapping[str, object]  # the condition, as the claim (or `all`) selected it
    verdict: Verdict
    reason: str  # the verdict in plain words
    confidence: float  # the level of this condition's interval (lower than the setting's: Bonferroni)
    measured: Measured | None = None  # None: "no trial data"
    point: float | None = None  # no interval: the ratio of the two sides' mean figures, when both are positive
    restored: Verdict | None = None  # the verdict with the excluded trials put back, when it differs

    @property
    def label(self) -> str:
        """The condition compared: one label when both sides sit at it, else both, baseline
        first ("size=200 → size=100": a claim inside one run, or runs whose conditions differ)."""
        b, c = self.baseline.label, self.candidate.label
        return b if b == c else f"{b} → {c}"

    @property
    def ratio(self) -> float | None:
        return self.measured.ratio if self.measured is not None else self.point

    @property
    def ci_low(self) -> float | None:
        return self.measured.ci_low if self.measured is not None else None

    @property
    def ci_high(self) -> float | None:
        return self.measured.ci_high if self.measured is not None else None

    @property
    def noise(self) -> float | None:
        return self.measured.noise if self.measured is not None else None

    @property
    def band(self) -> float | None:
        return self.measured.band if self.measured is not None else None

    @property
    def source(self) -> Source | None:
        return self.measured.source if self.measured is not None else None

    @property
    def understated(self) -> bool:
        return self.measured is not None and self.measured.understated

    @property
    def trials_needed(self) -> int | None:
        return self.measured.trials_needed if self.measured is not None else None

    @property
    def settles_as(self) -> str | None:
        return self.measured.settles_as if self.measured is not None else None

    @property
    def unsettled(self) -> str | None:
        return self.measured.unsettled if self.measured is not None else None

    @property
    def mann_whitney_p(self) -> float | None:
        return self.measured.mann_whitney_p if self.measured is not None else None


@dataclass(frozen=True, kw_only=True)
class ClaimComparison:
    """Everything `benchledger compare` prints and a claim card shows: the claim's verdict over
    all its conditions, and each condition's own comparison."""

    metric: str
    unit: str | None
    direction: Direction  # +1: the claim says the candidate's ratio is above 1; -1 below; 0 none
    claimed: Claimed | None
    claimed_ratio: float | None  # a magnitude as a ratio; None otherwise
    margin: float | None  # an equivalence claim's margin (min_effect when it states none)
    min_effect: float
    confounds: tuple[Confound, ...]
    conditions: tuple[Comparison, ...]
    verdict: Verdict
    reason: str
    compared: tuple[str, ...] = ()  # every recorded key checked for unmatched conditions
    unrecorded: tuple[str, ...] = ()  # recommended sections (and warmup_trials) neither side records

    @property
    def only(self) -> Comparison | None:
        """The single condition of a one-condition comparison."""
        return self.conditions[0] if len(self.conditions) == 1 else None

    @property
    def flags(self) -> list[str]:
        sides = [s for c in self.conditions for s in (c.baseline, c.candidate)]
        out = []
        if any(s.constant for s in sides):
            out.append(NO_VARIATION)
        if any(s.repetitions for s in sides):
            out.append(REPETITIONS)
        if any(c.source == "summaries" for c in self.conditions):
            out.append("from published summaries")
        restored = [c for c in self.conditions if c.restored is not None]
        if restored:
            count = sum(len(s.excluded) for c in restored for s in (c.baseline, c.candidate))
            out.append(f"verdict depends on {count} excluded trial{'s' if count != 1 else ''}")
        return out
