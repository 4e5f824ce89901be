"""Pydantic models of a report's front matter (FORMAT.md "Reports"): its claims, their
correction links and citations, its attribution grids and its limits. The run, manifest and
receipt files are in models.py."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from .models import RUN_ID_PATTERN, Day, Name, Scalar, _File, _Record, check_url


class Citation(_Record):
    citation: str = Field(min_length=1)
    url: str | None = None

    _url = field_validator("url")(lambda value: check_url(value))


SIDE_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string"},
        {
            "type": "object",
            "properties": {"run": {"type": "string"}, "at": {"type": "object"}},
            "required": ["run"],
            "additionalProperties": False,
        },
        {"type": "null"},
    ]
}


Finding = Literal["misattributed", "overstated", "contradicted", "within noise", "withdrawn"]
FINDINGS: tuple[Finding, ...] = ("misattributed", "overstated", "contradicted", "within noise", "withdrawn")
DOTTED_KEY = r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$"  # a cause that is a dotted key (kernels.draft_head_gemm), not words
WORDS_MAX = 500  # characters in one item of `cause`


class Claim(_Record):
    """One claim in a report's front matter."""

    id: str = Field(pattern=RUN_ID_PATTERN, description="Unique across the publication.")
    date: Day | None = Field(None, description="When the claim was made.")
    statement: str = Field(min_length=1, description="The claim in the publisher's words.")
    metric: Name | None = Field(None, description="A metric or rate name of both runs.")
    baseline: Annotated[str | None, WithJsonSchema(SIDE_SCHEMA)] = Field(
        None, description="Run id of the baseline, or {run: ID, at: {...}}: that run at its own condition."
    )
    candidate: Annotated[str | None, WithJsonSchema(SIDE_SCHEMA)] = Field(
        None, description="Run id of the candidate, or {run: ID, at: {...}}: that run at its own condition."
    )
    baseline_at: SkipJsonSchema[dict[str, Scalar]] = Field(default_factory=dict, exclude=True)
    candidate_at: SkipJsonSchema[dict[str, Scalar]] = Field(default_factory=dict, exclude=True)
    run: str | None = Field(None, description="Run id of a single-figure claim.")
    value: float | None = Field(None, description="The figure a single-figure claim states.")
    at: dict[str, Scalar] | list[dict[str, Scalar]] | Literal["all"] = Field(
        default_factory=dict,
        description="Which condition rows: one mapping, a list of mappings (judged together), or all.",
    )
    varies: list[str] = Field(default_factory=list, description="Dotted keys the claim varies.")
    claimed: str | None = Field(
        None, description='What the publisher said: "+20%", "1.2x", "±2%", "0%" or "no difference".'
    )
    min_effect: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="This claim's smallest change worth calling (0.02 = 2%), instead of the site's; also the "
        'margin of "0%", "1.0x" and "no difference".',
    )
    corrects: str | None = Field(None, description="Id of the claim this one corrects.")
    finding: Finding | None = Field(
        None,
        description="What a correction found of the claim it corrects: misattributed, overstated, contradicted, "
        "within noise or withdrawn. Only with `corrects:`.",
    )
    cause: str | list[str] | None = Field(
        None,
        description="What got the credit instead, with `finding:`: a dotted key (kernels.draft_head_gemm), "
        "a list of them, or words.",
    )
    source: Citation | None = Field(None, description="Citation of a statement-only claim.")
    limits: list[str] = Field(default_factory=list, description="Limits of this claim alone.")
    incomplete: Literal["accepted"] | None = Field(
        None,
        description="accepted: judge the claim on the trials an incomplete run (run.yaml incomplete:) has, "
        "instead of the verdict incomplete run; the claim then carries the flag incomplete run.",
    )

    @property
    def at_list(self) -> list[dict[str, Scalar]] | None:
        """The claim's conditions as a list of mappings; None for `at: all`."""
        if self.at == "all":
            return None
        return list(self.at) if isinstance(self.at, list) else [self.at]

    @property
    def kind(self) -> Literal["comparison", "figure", "statement"]:
        if self.baseline is not None or self.candidate is not None:
            return "comparison"
        return "figure" if self.run is not None else "statement"

    @model_validator(mode="before")
    @classmethod
    def _sides(cls, data: Any) -> Any:
        """`baseline: {run: ID, at: {...}}` (and candidate): one run's rows at a condition of its
        own, so a claim can compare two conditions inside one run (hyperfine's commands)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name in ("baseline", "candidate"):
            value = out.get(name)
            if isinstance(value, dict):
                unknown = sorted(set(map(str, value)) - {"run", "at"})
                if unknown or not isinstance(value.get("run"), str):
                    what = f"unknown key {unknown[0]!r}" if unknown else "no run id"
                    raise ValueError(f"{name}: {what}; write a run id, or {{run: ID, at: {{condition: value}}}}")
                at = value.get("at", {})
                if not isinstance(at, dict):
                    raise ValueError(f"{name}.at: give one mapping of condition values")
                out[name], out[f"{name}_at"] = value["run"], at
            elif f"{name}_at" in out:
                raise ValueError(f"{name}_at is not a claim key; write {name}: {{run: ID, at: {{...}}}}")
        return out

    @property
    def causes(self) -> tuple[str, ...]:
        """`cause:` as a tuple of items (keys and words), empty when absent."""
        if self.cause is None:
            return ()
        return (self.cause,) if isinstance(self.cause, str) else tuple(self.cause)

    @property
    def cause_keys(self) -> tuple[str, ...]:
        """The items of `cause:` that are dotted keys (compared between runs)."""
        return tuple(item for item in self.causes if re.fullmatch(DOTTED_KEY, item))

    @property
    def cause_words(self) -> tuple[str, ...]:
        """The items of `cause:` that are words."""
        return tuple(item for item in self.causes if not re.fullmatch(DOTTED_KEY, item))

    @field_validator("cause")
    @classmethod
    def _cause(cls, value: str | list[str] | None) -> str | list[str] | None:
        items = [value] if isinstance(value, str) else value or []
        if isinstance(value, list) and not value:
            raise ValueError("cause: lists nothing; name a dotted key (kernels.draft_head_gemm) or write words")
        for item in items:
            if not item.strip() or len(item) > WORDS_MAX:
                raise ValueError(f"cause: each item is a dotted key or words of 1 to {WORDS_MAX} characters")
        return value

    @model_validator(mode="after")
    def _finding(self) -> Claim:
        if self.finding is not None and self.corrects is None:
            raise ValueError("finding: only a correction says what it found; add corrects: <the claim's id>")
        if self.cause is not None and self.finding is None:
            raise ValueError(f"cause: needs finding: (one of {', '.join(FINDINGS)}) to say what the cause explains")
        return self

    @model_validator(mode="after")
    def _complete(self) -> Claim:
        if self.kind == "comparison":
            missing = [k for k in ("baseline", "candidate", "metric") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"a comparison claim needs {', '.join(missing)}")
            if (self.baseline_at or self.candidate_at) and self.at == "all":
                raise ValueError("`at: all` cannot be combined with a side's own `at:`; list the shared conditions")
            if self.baseline == self.candidate and self.baseline_at == self.candidate_at:
                raise ValueError(
                    f"baseline and candidate are both run {self.baseline!r} at the same condition: a run compared "
                    "with itself is no claim; give each side its own condition ({run: ID, at: {...}}) or two runs"
                )
            if isinstance(self.at, list) and not self.at:
                raise ValueError("`at:` lists no condition; give one mapping, a list of mappings, or all")
        elif self.kind == "figure":
            missing = [k for k in ("metric", "value") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"a single-figure claim needs {', '.join(missing)}")
            if not isinstance(self.at, dict):
                raise ValueError("a single-figure claim is judged at one condition; give `at:` as one mapping")
        elif self.source is None:
            raise ValueError(
                "a claim with neither baseline nor run is statement-only and needs source: {citation: ..., url: ...}"
            )
        return self


MAX_FACTORS = 4  # a 2^4 grid: 16 runs; more factors want a fractional design this tool does not fit


class Attribution(_Record):
    """A 2^k factorial grid of runs that says which factor earned a gain."""

    id: str = Field(pattern=RUN_ID_PATTERN, description="Unique across the publication (claims included).")
    date: Day | None = Field(None, description="When the attribution was made.")
    statement: str = Field(min_length=1, description="What the grid is meant to settle, in the publisher's words.")
    metric: Name = Field(description="A metric or rate name of every run in the grid.")
    at: dict[str, Scalar] = Field(default_factory=dict, description="The one condition the grid is judged at.")
    factors: dict[Name, str] = Field(
        description="Factor name -> the dotted setup or manifest key whose two values are its levels "
        "(setup.draft, engine.threads)."
    )
    runs: list[str] = Field(description="The grid's runs, one per combination of levels (2^k), in any order.")
    base: dict[Name, Scalar] = Field(
        default_factory=dict,
        description="Factor -> its base level (effects read other level / base level). A factor the claims "
        "taking the grid apart vary is oriented by their baseline instead (and must agree with it); a factor "
        "neither orients reads as a gain (its base is its worse level).",
    )
    credits: Name | None = Field(None, description="The factor the publisher credits with the gain, if any.")
    limits: list[str] = Field(default_factory=list, description="Limits of this attribution alone.")

    @model_validator(mode="after")
    def _grid(self) -> Attribution:
        k = len(self.factors)
        if not 2 <= k <= MAX_FACTORS:
            raise ValueError(f"a grid has 2 to {MAX_FACTORS} factors; this one has {k}")
        if len(self.runs) != 2**k:
            raise ValueError(f"{k} factors of two levels need {2**k} runs, one per combination; {len(self.runs)} given")
        if self.credits is not None and self.credits not in self.factors:
            raise ValueError(f"credits {self.credits!r} is not one of the factors: {', '.join(self.factors)}")
        unknown = [name for name in self.base if name not in self.factors]
        if unknown:
            raise ValueError(
                f"base names {', '.join(unknown)}, not a factor; name one of the factors: {', '.join(self.factors)}"
            )
        return self


class ReportMeta(_File):
    """The front matter of site_src/reports/<slug>.md."""

    title: str = Field(min_length=1, description="The report's title.")
    date: Day | None = Field(None, description="When the report was published.")
    claims: list[Claim] = Field(default_factory=list, description="The claims the report makes and corrects.")
    attributions: list[Attribution] = Field(
        default_factory=list, description="2^k grids of runs that say which factor earned a gain."
    )
    limits: list[str] = Field(default_factory=list, description="Limits of every claim in the report.")
