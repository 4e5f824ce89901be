"""The one exception family, and the located problem it carries.

The library never prints or exits: it collects `Problem`s, and the CLI (`cli/common.py`,
its `reported()` context) turns them into `Error: ...` lines on stderr and exit code 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True, kw_only=True)
class Problem:
    """Something wrong with one file: where, which field, what, and the fix.

    Built by keyword: `Problem(file="runs/x/run.yaml", field="metrics", message="...")`.
    """

    file: str
    line: int | None = None
    field: str | None = None
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.message}"


class BenchledgerError(Exception):
    """Raised when input cannot be used; carries every problem found."""

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            problems = [Problem(file="", message=problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
