"""What a run was asked for: the options both runners share (`Common`), each runner's own
(`OpenAIOptions`, `CommandOptions`), and the person's input files read with limits and located
errors (`--manifest-extra`, read as `request.read_input` reads the prompts)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.keys import parse_assignment
from ..ledger.yamlio import parse_yaml
from .options import LoadOptions
from .request import read_input

MAX_EXTRA_BYTES = 1024 * 1024


@dataclass(kw_only=True)
class Common:
    """Options shared by both runners."""

    title: str | None
    run_id: str | None
    out: Path
    force: bool
    setup: list[str] = field(default_factory=list)
    manifest_extra: Path | None = None
    benchmark: str | None = None
    invocation: list[str] = field(default_factory=list)
    keep_paths: bool = False  # write local absolute paths as they are; else their file names

    def setup_values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in self.setup:
            parsed = parse_assignment(item)
            if parsed is None:
                raise BenchledgerError(
                    Problem(file="--setup", message=f"{item!r}: write KEY=VALUE, e.g. --setup draft_n_max=4")
                )
            out[parsed[0]] = parsed[1]
        return out

    def extra(self) -> dict[str, Any]:
        """--manifest-extra, read like every publication file (same limits, located errors)."""
        if self.manifest_extra is None:
            return {}
        shown = str(self.manifest_extra)
        text = read_input(self.manifest_extra, option="--manifest-extra", limit=MAX_EXTRA_BYTES, kind="a YAML file")
        data, _ = parse_yaml(text, shown)
        if not isinstance(data, dict):
            raise BenchledgerError(
                Problem(file=shown, line=1, message="must be a YAML mapping, e.g. kernels: {draft_head_gemm: lowm}")
            )
        return data

    def identity(self, fallback: str) -> tuple[str, str, str]:
        today = dt.date.today().isoformat()
        title = self.title or fallback
        slug = re.sub(r"[^a-z0-9._-]+", "-", title.lower()).strip("-")[:60] or "run"
        return today, title, self.run_id or f"{today}-{slug}"


@dataclass(frozen=True, kw_only=True)
class OpenAIOptions:
    """What `run openai` sends and how often, as the command line gave it (`load`: how the
    requests are offered)."""

    base_url: str
    model: str | None  # None: the first model the server lists
    endpoint: str
    prompts: str | None  # None: the built-in set
    max_tokens: int
    temperature: float
    concurrency: list[int]
    trials: int
    warmup: int
    requests: int | None  # per trial; None: LoadOptions.requests decides
    timeout: float
    load: LoadOptions = field(default_factory=LoadOptions)


@dataclass(frozen=True, kw_only=True)
class CommandOptions:
    """What `run command` executes and reads, as the command line gave it. `declared` gives a
    parsed metric its unit and direction (`{"tps": {"unit": "tok/s", "better": "higher"}}`)."""

    command: list[str]
    trials: int
    warmup: int
    regexes: list[str] = field(default_factory=list)
    json_paths: list[str] = field(default_factory=list)
    timeout: float | None = None
    declared: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
