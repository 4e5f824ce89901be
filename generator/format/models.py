"""Pydantic models of FORMAT.md, version 1: the run, manifest and receipt files (a
report's front matter is in front_matter.py).

Every model is frozen. Files keep unknown top-level keys (they are shown on
the site, never silently dropped); nested records forbid unknown keys so a
typo is caught instead of ignored.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

RUN_SCHEMA = "benchledger.run/1"
# results.csv columns `benchledger run openai` writes about the client itself, not the server:
# shown on the run page, never judged by a rerun (another machine's client lags differently)
CLIENT_FIGURES = frozenset(
    {
        "client_lag_p50_s",
        "client_lag_p99_s",
        "client_lag_max_s",
        "client_cpu",
        "send_delay_p50_s",
        "send_delay_p99_s",
        "client_bound",
    }
)
MANIFEST_SCHEMA = "benchledger.manifest/1"
RECEIPT_SCHEMA = "benchledger.receipt/1"

RUN_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,99}$"
RUN_ID = re.compile(RUN_ID_PATTERN)
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
SHA256_PATTERN = r"^sha256:[0-9a-f]{64}$"

Name = Annotated[str, Field(pattern=NAME_PATTERN, description="A column name: letters, digits, _")]
Scalar = str | int | float | bool | None


def check_relative_path(value: str) -> str:
    """Refuse absolute paths and `..` components (paths stay inside the repository)."""
    if value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", value):
        raise ValueError(f"path {value!r} is absolute; write it relative to the run folder")
    if ".." in re.split(r"[\\/]", value):
        raise ValueError(f"path {value!r} contains '..'; paths must stay inside the run folder")
    return value


def check_url(value: str | None) -> str | None:
    """Only http(s) links reach the site: no javascript:, data: or file: targets."""
    if value is not None and not re.match(r"^https?://[^\s<>\"']+$", value):
        raise ValueError(f"url {value!r} must be an http:// or https:// address")
    return value


DATE_YEARS = (1970, 2105)  # timestamps of these years fit the 32-bit fields of gzip and sitemaps


def check_year(value: dt.date) -> dt.date:
    if not DATE_YEARS[0] <= value.year <= DATE_YEARS[1]:
        raise ValueError(
            f"the year {value.year} is out of range; give a date between {DATE_YEARS[0]} and {DATE_YEARS[1]}"
        )
    return value


Day = Annotated[dt.date, AfterValidator(check_year)]


def check_moment(value: dt.datetime) -> dt.datetime:
    check_year(value.date())
    return value


Moment = Annotated[dt.datetime, AfterValidator(check_moment)]


def check_paths(value: dict[str, str]) -> dict[str, str]:
    for path in value:
        check_relative_path(path)
    return value


# Run-relative paths (never absolute, never with ..) -> sha256:<hex>
FileHashes = Annotated[dict[str, Annotated[str, Field(pattern=SHA256_PATTERN)]], AfterValidator(check_paths)]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _File(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    @property
    def extras(self) -> dict[str, Any]:
        """Top-level keys this version of the format does not define, kept as written."""
        return dict(self.model_extra or {})


class Metric(_Record):
    unit: str | None = Field(None, description="Unit shown beside every value, e.g. tok/s.")
    better: Literal["higher", "lower"] | None = Field(
        None, description="Which direction is an improvement; absent: shown, never judged."
    )
    description: str | None = Field(None, description="What the metric measures.")


class Rate(_Record):
    numerator: Name = Field(description="Count metric counted as successes, e.g. draft_accepted.")
    denominator: Name = Field(description="Count metric counted as attempts, e.g. draft_tokens.")
    better: Literal["higher", "lower"] = Field("higher", description="Direction of improvement.")
    description: str | None = None


class Source(_Record):
    kind: Literal["measured", "reported", "republished"] = Field(
        description="measured: trials measured by the publisher; republished: per-trial data measured by "
        "someone else and copied here (citation and url required); reported: figures copied from a "
        "publication that gave no per-trial data."
    )
    citation: str | None = Field(None, description="Who published the figures (reported runs).")
    url: str | None = Field(None, description="Where they were published (http or https).")
    provenance: str | None = Field(
        None,
        description="The source's own verification statement; shown as claimed by the source.",
    )

    _url = field_validator("url")(lambda value: check_url(value))

    @model_validator(mode="after")
    def _reported_cites(self) -> Source:
        if self.kind == "reported" and not self.citation:
            raise ValueError("a reported run needs source.citation naming the publication")
        if self.kind == "republished" and not (self.citation and self.url):
            raise ValueError("a republished run needs source.citation and source.url: who measured it, and where")
        if self.kind == "measured" and (self.citation or self.url):
            raise ValueError(
                "a measured run carries no source.citation or source.url: if someone else measured it, write "
                "kind: republished (with citation and url); if you did, remove them"
            )
        return self


class Imported(_Record):
    """What `benchledger import` read: the tool, its output format, and the original files kept
    in raw/ with their hashes (check refuses a raw file that no longer matches)."""

    tool: str = Field(min_length=1, description="The tool that wrote the original files, e.g. llama-bench.")
    format: str = Field(min_length=1, description="Their format, e.g. json, jsonl, csv, md.")
    files: FileHashes = Field(
        description="Run-relative path under raw/ -> sha256:<hex> of the original bytes (CRLF normalized)."
    )

    @field_validator("files")
    @classmethod
    def _under_raw(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value:
            if not path.startswith("raw/"):
                raise ValueError(f"imported file {path!r} must lie under raw/")
        return value


class Exclusion(_Record):
    trial: int = Field(ge=1, le=10**9, description="The excluded trial's number in results.csv.")
    at: dict[str, Scalar] = Field(
        default_factory=dict, description="The condition it is excluded at; absent: at every condition."
    )
    reason: str = Field(min_length=1, description="Why: shown beside the struck-through trial.")


class Incomplete(_Record):
    """run.yaml `incomplete:`: the run stopped before every trial it planned (interrupted, a
    trial failed, a worker process was killed); its completed trials are the run."""

    reason: str = Field(min_length=1, description="Why the run stopped early, e.g. interrupted (Ctrl-C).")
    completed_trials: int | None = Field(
        None, ge=0, le=10**9, description="Measured trials completed: one per trial and condition."
    )
    planned_trials: int | None = Field(
        None, ge=1, le=10**9, description="Measured trials planned: trials x conditions."
    )

    @property
    def words(self) -> str:
        """'3 of 5 trials completed; interrupted (Ctrl-C); ...': how the run reads everywhere."""
        done, planned = self.completed_trials, self.planned_trials
        counts = f"{done} of {planned} trials completed; " if done is not None and planned is not None else ""
        return counts + self.reason

    @model_validator(mode="after")
    def _counts(self) -> Incomplete:
        done, planned = self.completed_trials, self.planned_trials
        if done is not None and planned is not None and done > planned:
            raise ValueError(f"completed_trials {done} is more than planned_trials {planned}")
        return self


TRIAL_UNITS = ("process", "repetition", "session")


class Runner(_File):
    """run.yaml `runner:`: how benchledger's runner made the run, so it can be made again."""

    kind: str = Field(min_length=1, description="openai (a server) or command (any program).")
    invocation: list[str] = Field(
        default_factory=list, description="The benchledger command line, after `benchledger`, as run."
    )
    base_url: str | None = Field(None, description="The server the run measured (openai runs).")
    model: str | None = Field(None, description="The model name sent to the server.")
    endpoint: str | None = Field(None, description="chat or completions.")
    prompts: str | None = Field(None, description="The prompt set: built-in, or the file it was read from.")
    prompts_sha256: str | None = Field(None, description="sha256:<hex> of that file, when one was given.")


class RunFile(_File):
    """run.yaml: what was run."""

    schema_: Literal["benchledger.run/1"] = Field(alias="schema", description="Format version.")
    id: str = Field(pattern=RUN_ID_PATTERN, description="Equals the run folder's name.")
    title: str = Field(min_length=1, description="One line saying what this run is.")
    date: Day = Field(description="Day the trials were measured (YYYY-MM-DD).")
    benchmark: str = Field(min_length=1, description="Workload name; only runs of one benchmark are compared.")
    setup: dict[str, Any] = Field(default_factory=dict, description="The knobs this run sets on purpose.")
    conditions: list[Name] = Field(default_factory=list, description="results.csv columns that index the load.")
    metrics: dict[Name, Metric] = Field(
        description="Every other results.csv column, declared with its unit and direction."
    )
    rates: dict[Name, Rate] = Field(default_factory=dict, description="Proportions derived from count metrics.")
    warmup_trials: int | None = Field(
        None, ge=0, le=1_000_000, description="Trials run and discarded before trial 1; absent: not reported."
    )
    source: Source = Field(description="measured, or reported with a citation.")
    notes: str | None = Field(None, description="Markdown, rendered as untrusted text.")
    excluded: list[Exclusion] = Field(
        default_factory=list,
        description="Trials kept in results.csv and on the page but left out of every statistic, each with a reason.",
    )
    imported: Imported | None = Field(
        None, description="Set by benchledger import: the original files and their hashes."
    )
    runner: Runner | None = Field(None, description="Set by benchledger's runner: how the run was made.")
    incomplete: Incomplete | None = Field(
        None,
        description="Set when the run stopped before every planned trial: why, and how many trials completed. "
        "A claim resting on it gets the verdict incomplete run, unless the claim says incomplete: accepted.",
    )
    trial_unit: str | None = Field(
        None,
        min_length=1,
        description="What one trial is: process (a fresh process each), repetition (repeated inside one "
        "process: intervals may be too narrow), session, or your own words.",
    )

    @model_validator(mode="after")
    def _names_consistent(self) -> RunFile:
        taken = {"trial"} | set(self.conditions)
        for name in self.metrics:
            if name in taken:
                raise ValueError(f"metric {name!r} is also a condition or 'trial'; rename one")
        for name, rate in self.rates.items():
            if name in self.metrics:
                raise ValueError(f"rate {name!r} has the name of a metric; rename the rate")
            for part in (rate.numerator, rate.denominator):
                if part not in self.metrics:
                    raise ValueError(
                        f"rate {name!r} uses {part!r}, which is not a declared metric; declare it under metrics"
                    )
        if len(set(self.conditions)) != len(self.conditions):
            raise ValueError("conditions lists a column twice; list each once")
        return self


class Captured(_Record):
    at: Moment | None = Field(None, description="When the manifest was captured.")
    by: str | None = Field(None, description="Tool or person that captured it.")
    method: Literal["auto", "manual"] | None = Field(None, description="auto or manual.")


class ManifestFile(_File):
    """manifest.yaml: the environment. Any keys are allowed besides schema and captured."""

    schema_: Literal["benchledger.manifest/1"] = Field(alias="schema", description="Format version.")
    captured: Captured | None = Field(None, description="Never compared between runs.")


class Difference(_Record):
    key: str = Field(min_length=1, description="A dotted manifest or setup key.")
    original: Scalar = Field(description="Its value in the run.")
    rerun: Scalar = Field(description="Its value when the run was made again.")


class RerunFigure(_Record):
    metric: Name
    at: dict[str, Scalar] = Field(default_factory=dict)
    ratio: float | None = Field(None, description="Rerun / original (geometric means).")
    low: float | None = Field(None, description="The interval, simultaneous over the rerun's figures.")
    high: float | None = None
    margin: float = Field(ge=0, description="Agrees: the 90% interval inside [1/(1+margin), 1+margin].")
    status: Literal["agrees", "differs", "unsettled"]


class Rerun(_Record):
    """What `benchledger rerun` kept: the new trials beside the receipt, and how they compared."""

    files: FileHashes = Field(description="The kept files (receipts/<name>/...) and their hashes.")
    margin: float | None = Field(
        None, gt=0, lt=1, description="The margin set by --margin, between 0 and 1; none: the default, 5%."
    )
    allowed_differences: list[str] = Field(default_factory=list, description="Keys --allow-difference accepted.")
    differences: list[Difference] = Field(default_factory=list, description="Recorded keys that differed.")
    figures: list[RerunFigure] = Field(default_factory=list, description="The agreement table, as computed then.")

    @model_validator(mode="after")
    def _kept(self) -> Rerun:
        if not any(path.endswith("/results.csv") for path in self.files):
            raise ValueError("a rerun keeps its trials: list receipts/<name>/results.csv under files")
        for path in self.files:
            if not path.startswith("receipts/"):
                raise ValueError(f"{path!r}: the rerun's files are kept under receipts/")
        return self


class ReceiptFile(_File):
    """receipts/<name>.yaml: who vouches for which bytes."""

    schema_: Literal["benchledger.receipt/1"] = Field(alias="schema", description="Format version.")
    verifier: str = Field(min_length=1, description="A person; the principal when signed.")
    method: Literal["rerun", "review", "recompute"] = Field(description="How they verified.")
    date: Day = Field(description="Day of verification.")
    statement: str | None = Field(None, description="What the verifier did and found.")
    files: FileHashes = Field(description="Run-relative path -> sha256:<hex> of its bytes with CRLF normalized to LF.")
    rerun: Rerun | None = Field(None, description="method: rerun made by benchledger rerun: the new trials.")

    @model_validator(mode="after")
    def _method(self) -> ReceiptFile:
        if self.rerun is not None and self.method != "rerun":
            raise ValueError("a receipt with rerun: has method: rerun")
        return self
