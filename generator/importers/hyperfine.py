"""hyperfine `--export-json` as a run: each command's `times` are its trials.

A parameter scan (`-P`, `-L`) makes each parameter a condition; several commands without
parameters make the command itself the condition. Every timing is a separate process
(`trial_unit: process`). A timing whose exit code is not 0 (kept by hyperfine's `-i`)
stays in results.csv and is excluded from the statistics with that reason. hyperfine
records neither its version nor the machine, so the manifest says only what the file
says; each run's peak memory (`memory_usage_byte`, hyperfine 1.19+) becomes a metric beside
`seconds`; user and system times are means only and stay in the original file under raw/.
Shapes follow hyperfine 1.15's own exports (tests/fixtures/hyperfine/).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.commands import HIDDEN, MAX_ARGUMENT_BYTES, describe
from ..format.models import NAME_PATTERN
from .common import Imported, load_json, positive

METRICS = {"seconds": {"unit": "s", "better": "lower"}}
MEMORY = {"memory_usage_byte": {"unit": "bytes", "better": "lower"}}  # hyperfine 1.19+: peak memory per run


def parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    """Read one or more hyperfine JSON exports into one run."""
    results: list[tuple[str, str, dict[str, Any]]] = []
    for name, data in files:
        found = load_json(name, data, "a hyperfine JSON export")
        items = found.get("results") if isinstance(found, dict) else None
        if not isinstance(items, list) or not items:
            raise BenchledgerError(
                Problem(file=name, field="$.results", message="expected the list hyperfine --export-json writes")
            )
        results += [(name, f"$.results[{i}]", item) for i, item in enumerate(items)]
    tests = [_result(name, path, item) for name, path, item in results]
    conditions = _conditions(tests)
    memory = [_memory(name, path, item) for name, path, item in results]
    with_memory = all(m is not None for m in memory)
    rows, excluded = [], []
    for (command, params, times, codes), peaks in zip(tests, memory, strict=True):
        at = {c: (params.get(c, "") if c != "command" else command) for c in conditions}
        for trial, (seconds, code) in enumerate(zip(times, codes, strict=True), start=1):
            peak = {"memory_usage_byte": peaks[trial - 1]} if with_memory and peaks else {}
            rows.append({"trial": trial, **at, "seconds": seconds, **peak})
            if code not in (0, None):
                excluded.append({"trial": trial, "at": dict(at), "reason": f"the command exited with code {code}"})
    commands = sorted({command for command, *_ in tests})
    notes = ["Commands timed:\n\n" + "\n".join(f"- {code_span(c)}" for c in commands)]
    metrics = dict(METRICS) | (dict(MEMORY) if with_memory else {})
    imported = Imported(
        tool="hyperfine",
        format="json",
        conditions=conditions,
        metrics=metrics,
        rows=rows,
        manifest={},
        date=None,
        trial_unit="process",
        per_trial=True,
        notes=notes,
    )
    imported.excluded = excluded
    return imported


def _result(name: str, path: str, item: Any) -> tuple[str, dict[str, str], list[float], list[int | None]]:
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.command", message="expected the command that was timed")
        )
    times = item.get("times")
    if not isinstance(times, list) or not times or not all(positive(t) for t in times):
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.times", message="expected one positive number of seconds per run")
        )
    codes = item.get("exit_codes")
    if codes is None:
        codes = [None] * len(times)
    if (
        not isinstance(codes, list)
        or len(codes) != len(times)
        or not all(c is None or isinstance(c, int) for c in codes)
    ):
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.exit_codes", message="expected one exit code per time")
        )
    params = item.get("parameters") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str | int | float) for v in params.values()):
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.parameters", message="expected a mapping of parameter values")
        )
    for key in params:
        if not re.match(NAME_PATTERN, str(key)) or key in ("trial", "seconds", "command"):
            message = f"parameter {str(key)[:40]!r} cannot name a column; rename it (letters, digits, _)"
            raise BenchledgerError(Problem(file=name, field=f"{path}.parameters", message=message))
    command = item["command"]
    size = len(command.encode("utf-8", "surrogatepass"))
    if size >= MAX_ARGUMENT_BYTES:  # hyperfine hands it to a shell as one argument
        message = (
            f"is {size:,} bytes; hyperfine runs a command as one argument of a shell, which holds at most "
            f"{MAX_ARGUMENT_BYTES - 1:,} bytes ({MAX_ARGUMENT_BYTES:,} with its terminating NUL: Linux's "
            "MAX_ARG_STRLEN), so no shell ran it; check the file"
        )
        raise BenchledgerError(Problem(file=name, field=f"{path}.command", message=message))
    hidden = HIDDEN.search(command)
    if hidden is not None:  # the notes and the pages would show another command than the one timed
        message = (
            f"holds {describe(hidden.group())} at character {hidden.start() + 1}, which a terminal or a page does "
            "not show as itself, so no reader could read the command that was timed; check the file"
        )
        raise BenchledgerError(Problem(file=name, field=f"{path}.command", message=message))
    return command, {str(k): str(v) for k, v in params.items()}, [float(t) for t in times], codes


def code_span(text: str) -> str:
    """`text` as one Markdown code span: line breaks and control characters shown as symbols,
    fenced by more backticks than any run inside it, so it adds no Markdown structure."""
    flat = re.sub(r"[\x00-\x1f\x7f]", lambda m: "↵" if m.group() in "\r\n" else "�", text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    return f"{fence} {flat} {fence}"


def _memory(name: str, path: str, item: dict[str, Any]) -> list[int] | None:
    """Each run's peak memory, when this hyperfine records it."""
    peaks, times = item.get("memory_usage_byte"), item.get("times")
    if peaks is None:
        return None
    if not isinstance(peaks, list) or not isinstance(times, list) or len(peaks) != len(times):
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.memory_usage_byte", message="expected one byte count per time")
        )
    if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in peaks):
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.memory_usage_byte", message="expected whole numbers of bytes")
        )
    return peaks


def _conditions(tests: list[tuple[str, dict[str, str], list[float], list[int | None]]]) -> list[str]:
    names = list(dict.fromkeys(k for _, params, _, _ in tests for k in params))
    keys = {tuple(params.get(n, "") for n in names) for _, params, _, _ in tests}
    if len(keys) == len(tests):
        return names
    if len({command for command, *_ in tests}) == len(tests):
        return [*names, "command"]
    raise BenchledgerError(
        Problem(file="hyperfine", message="two results share a command and parameters; import them as two runs")
    )
