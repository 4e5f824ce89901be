"""Measure any command: wall time per execution, plus figures parsed from its stdout."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.models import NAME_PATTERN

MAX_FAILURES_IN_A_ROW = 3


@dataclass(frozen=True)
class Extractor:
    name: str
    pattern: re.Pattern[str] | None = None  # --metric NAME=REGEX (first group)
    path: tuple[str, ...] | None = None  # --json-metric NAME=dotted.path

    def read(self, stdout: str) -> float:
        if self.pattern is not None:
            match = self.pattern.search(stdout)
            if not match:
                raise ValueError(f"metric {self.name!r}: /{self.pattern.pattern}/ matched nothing in the output")
            text = match.group(1) if match.groups() else match.group(0)
        else:
            assert self.path is not None
            value: Any = _last_json(stdout)
            for part in self.path:
                if isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value):
                    value = value[int(part)]
                elif isinstance(value, dict) and part in value:
                    value = value[part]
                else:
                    raise ValueError(f"metric {self.name!r}: {'.'.join(self.path)} not found in the JSON output")
            text = str(value)
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"metric {self.name!r}: {text[:80]!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"metric {self.name!r}: {text[:80]!r} is not a finite number")
        return number


def _last_json(stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        for line in reversed(stdout.strip().splitlines()):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    raise ValueError("the output holds no JSON document")


def extractors(regexes: list[str], json_paths: list[str]) -> list[Extractor]:
    out = []
    for flag, items in (("--metric", regexes), ("--json-metric", json_paths)):
        for item in items:
            name, sep, spec = item.partition("=")
            if not sep or not re.match(NAME_PATTERN, name) or not spec:
                raise BenchledgerError(
                    Problem(
                        file=flag,
                        message=f"{item!r}: write NAME="
                        + ("REGEX" if flag == "--metric" else "dotted.path")
                        + " with NAME made of letters, digits and _",
                    )
                )
            if name in ("wall_seconds", "trial"):
                raise BenchledgerError(Problem(file=flag, message=f"{name!r} is reserved; choose another name"))
            if flag == "--metric":
                try:
                    out.append(Extractor(name, pattern=re.compile(spec)))
                except re.error as err:
                    raise BenchledgerError(Problem(file=flag, message=f"{item!r}: bad regex ({err})")) from None
            else:
                out.append(Extractor(name, path=tuple(spec.split("."))))
    return out


@dataclass
class Execution:
    wall_seconds: float
    exit_code: int
    values: dict[str, float]
    error: str = ""
    stderr_tail: str = ""


def check_executable(program: str) -> None:
    """Refuse, before the first trial, a command that cannot be started."""
    found = shutil.which(program)
    if found is None:
        if os.sep in program and Path(program).exists():
            raise BenchledgerError(
                Problem(file=program, message="is not executable; chmod +x it or run it through its interpreter")
            )
        raise BenchledgerError(Problem(file=program, message="command not found; check the command after --"))


def execute(command: list[str], found: list[Extractor], timeout: float | None) -> Execution:
    """Run the command once; an error is recorded, never raised. Output that is not UTF-8 is
    read with replacement characters (the figures are still parsed)."""
    start = time.perf_counter()
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except (FileNotFoundError, PermissionError, OSError) as err:
        raise BenchledgerError(Problem(file=command[0], message=f"cannot be started ({err.strerror or err})")) from None
    with process:
        try:
            out, errors = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()  # not communicate(): a child it started may hold the pipes open
            return Execution(time.perf_counter() - start, -1, {}, f"timed out after {timeout} s")
        except BaseException:  # Ctrl-C: the command is stopped and reaped, never left behind
            process.kill()
            process.wait()
            raise
    wall = time.perf_counter() - start
    stdout = out.decode("utf-8", errors="replace")
    stderr = errors.decode("utf-8", errors="replace")[-500:]
    if process.returncode != 0:
        return Execution(wall, process.returncode, {}, f"exit code {process.returncode}", stderr)
    values = {}
    for extractor in found:
        try:
            values[extractor.name] = extractor.read(stdout)
        except ValueError as err:
            return Execution(wall, 0, {}, str(err), stderr)
    return Execution(wall, 0, values)
