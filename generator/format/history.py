"""history/<name>.yaml: what a publisher says about the history of its series, committed so a
pull request shows it (FORMAT.md, "History files").

Three lists, each entry naming one run and, when the run holds several series, which of them:
`annotate` (words shown at that run's point), `exclude` (the run drawn but left out of the
segmentation, with the reason) and `accept` (the change whose first run after it is this run
is known and accepted, with the reason: it stays on the pages, no longer needing attention).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import RUN_ID_PATTERN, Name, Scalar

HISTORY_SCHEMA = "benchledger.history/1"

Words = Annotated[str, Field(min_length=1, max_length=1000)]


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str = Field(pattern=RUN_ID_PATTERN, description="A run id (its folder name under runs/).")
    benchmark: str | None = Field(None, min_length=1, description="Only series of this benchmark; absent: any.")
    metric: Name | None = Field(None, description="Only series of this metric; absent: every metric of the run.")
    condition: dict[Name, Scalar] = Field(
        default_factory=dict, description="Only series at this condition (some or all of its columns); absent: every."
    )


class Annotation(_Entry):
    text: Words = Field(
        description="What is known at this run, e.g. 'known: flash-attention off by default from b6120'."
    )


class Exclusion(_Entry):
    reason: Words = Field(description="Why the run is left out of its series' segmentation; shown beside its point.")


class Acceptance(_Entry):
    reason: Words = Field(description="Why the change is accepted; `run` is the first run after the change.")


class HistoryFile(BaseModel):
    """history/<name>.yaml: annotations, exclusions and accepted changes of the publication's series.
    Unknown keys are refused, at the top too: a misspelt list would otherwise exclude nothing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_: Literal["benchledger.history/1"] = Field(alias="schema", description="Format version.")
    annotate: list[Annotation] = Field(default_factory=list, description="Words shown at a run's point.")
    exclude: list[Exclusion] = Field(default_factory=list, description="Runs left out of a series' segmentation.")
    accept: list[Acceptance] = Field(default_factory=list, description="Changes known and accepted.")
