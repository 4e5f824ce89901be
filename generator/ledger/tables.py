"""results.csv and requests.csv: parsed, validated, located problems.

Condition values are kept as the text the publisher wrote (they may be labels);
metric values must be finite numbers.
"""

from __future__ import annotations

import csv
import functools
import io
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace

from ..errors import BenchledgerError, Problem
from ..format.conditions import same_condition
from ..format.models import RunFile
from .records import Request, Results, Row
from .yamlio import line_for

REQUEST_NUMBERS = ("start_s", "ttft_s", "latency_s", "output_tokens")
REQUEST_OPTIONAL = ("draft_tokens", "draft_accepted")
PHASES = ("warmup", "measured", "cooldown")  # requests.csv `phase`: the tool's own warm-up and cool-down


Rows = Callable[[list[Problem]], Iterator[tuple[int, list[str]]]]


def _read(text: str, rel: str) -> tuple[list[str], Rows]:
    """The header, and the data rows (line, cells) of the right width: a row of another width,
    or a CSV syntax error, is recorded in the problems the caller passes."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise BenchledgerError(Problem(file=rel, line=1, message="is empty; write a header row")) from None
    except csv.Error as err:
        raise BenchledgerError(Problem(file=rel, line=1, message=f"CSV error: {err}")) from None
    header = [h.strip() for h in header]

    def rows(problems: list[Problem]) -> Iterator[tuple[int, list[str]]]:
        try:
            for cells in reader:
                if not cells or not any(c.strip() for c in cells):
                    continue
                if len(cells) == len(header):
                    yield reader.line_num, cells
                    continue
                shape = f"has {len(cells)} cells, the header has {len(header)}; give every row one cell per column"
                problems.append(Problem(file=rel, line=reader.line_num, message=shape))
        except csv.Error as err:
            raise BenchledgerError(Problem(file=rel, line=reader.line_num, message=f"CSV error: {err}")) from None

    return header, rows


def _number(cell: str, rel: str, line: int, column: str, problems: list[Problem]) -> float | None:
    text = cell.strip()
    try:
        value = float(text)
    except ValueError:
        what = "empty" if not text else f"{text!r} is not a number"
        problems.append(Problem(file=rel, line=line, field=column, message=f"{what}; write a finite number"))
        return None
    if not math.isfinite(value):
        problems.append(
            Problem(file=rel, line=line, field=column, message=f"{text[:40]!r} is not finite; write a finite number")
        )
        return None
    if value != 0 and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        problems.append(
            Problem(
                file=rel,
                line=line,
                field=column,
                message=f"{text[:40]!r} is out of range; write 0 or a magnitude from 1e-100 to 1e100",
            )
        )
        return None
    return value


def _trial(cell: str, reported: bool, rel: str, line: int, problems: list[Problem]) -> int | None:
    text = cell.strip()
    if reported:
        if text:
            problems.append(
                Problem(
                    file=rel,
                    line=line,
                    field="trial",
                    message=f"{text!r} in a reported run; leave trial "
                    "empty (the source gave no trials) or set source.kind: measured",
                )
            )
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 9 or int(text) < 1:
        problems.append(
            Problem(
                file=rel,
                line=line,
                field="trial",
                message=f"{text!r} is not a trial number; number trials 1, 2, 3, ...",
            )
        )
        return None
    return int(text)


def _check_header(
    header: Sequence[str], expected: Sequence[str], optional: Sequence[str], rel: str, declared_in: str
) -> list[Problem]:
    problems = []
    for i, name in enumerate(header):
        if name in header[:i]:
            problems.append(Problem(file=rel, line=1, field=name, message="column appears twice; keep one"))
        elif name not in expected and name not in optional:
            problems.append(
                Problem(
                    file=rel,
                    line=1,
                    field=name,
                    message=f"column is not declared in {declared_in}; declare it there or remove the column",
                )
            )
    for name in expected:
        if name not in header:
            problems.append(
                Problem(
                    file=rel,
                    line=1,
                    field=name,
                    message=f"declared but has no column; add the column or remove it from {declared_in}",
                )
            )
    return problems


MIN_MAGNITUDE, MAX_MAGNITUDE = 1e-100, 1e100  # beyond these, ratios and variances overflow floats
SUMMARY_SUFFIXES = (".sd", ".n")  # published summaries: M.sd and M.n beside the mean M
NONE_BELOW: frozenset[str] = frozenset()  # one for every row without a bound (150,000 rows at 10,000 runs)


def parse_results(text: str, rel: str, run: RunFile) -> Results:
    """Parse results.csv against the run's declared conditions and metrics. A reported run
    may give published summaries: `M.sd` and `M.n` beside a metric `M` (then its mean)."""
    header, rows = _read(text, rel)
    conditions, metrics = tuple(run.conditions), tuple(run.metrics)
    reported = run.source.kind == "reported"
    summaries = [f"{m}{suffix}" for m in metrics for suffix in SUMMARY_SUFFIXES] if reported else []
    problems = _check_header(
        header, ("trial", *conditions, *metrics), summaries, rel, "run.yaml (conditions or metrics)"
    )
    problems += _summary_pairs(header, metrics, rel)
    if problems:
        raise BenchledgerError(problems)
    col = {name: i for i, name in enumerate(header)}
    out: list[Row] = []
    seen: dict[tuple[int | None, tuple[str, ...]], int] = {}
    ats: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple per condition, shared by its trials' rows
    for line, cells in rows(problems):
        trial = _trial(cells[col["trial"]], reported, rel, line, problems)
        at = tuple(cells[col[c]].strip() for c in conditions)
        at = ats.setdefault(at, at)
        for c, v in zip(conditions, at, strict=True):
            if not v:
                problems.append(
                    Problem(file=rel, line=line, field=c, message="empty; every row needs its condition value")
                )
        values = {m: _number(cells[col[m]], rel, line, m, problems) for m in metrics}
        spread, below = _spread(cells, col, metrics, rel, line, problems)
        key = (trial, at)
        if key in seen:
            what = f"trial {trial}" if trial is not None else "the row"
            where = dict(zip(conditions, at, strict=True))
            message = f"{what} at {where} repeats line {seen[key]}; keep one row per trial and condition"
            problems.append(Problem(file=rel, line=line, message=message))
        seen.setdefault(key, line)
        out.append(Row(line, trial, at, {k: v for k, v in values.items() if v is not None}, spread, below))
    if not out and not problems:
        problems.append(Problem(file=rel, message="has no rows; add one row per trial and condition"))
    problems += _rate_problems(out, run, rel)
    if problems:
        raise BenchledgerError(problems)
    return Results(conditions, metrics, tuple(out))


def _rate_problems(rows: Sequence[Row], run: RunFile, rel: str) -> list[Problem]:
    """A rate counts successes among attempts: both counts >= 0, successes <= attempts."""
    out = []
    for name, rate in run.rates.items():
        for row in rows:
            num, den = row.values.get(rate.numerator), row.values.get(rate.denominator)
            if num is None or den is None:
                continue
            if num < 0 or den < 0:
                what = rate.numerator if num < 0 else rate.denominator
                out.append(
                    Problem(
                        file=rel,
                        line=row.line,
                        field=what,
                        message=f"{row.values[what]:g} is negative; the rate {name!r} needs counts",
                    )
                )
            elif num > den:
                message = (
                    f"{num:g} exceeds {rate.denominator} {den:g}; the rate {name!r} counts successes among "
                    "attempts, so it cannot pass 100%: fix the counts"
                )
                out.append(Problem(file=rel, line=row.line, field=rate.numerator, message=message))
    return out


def _summary_pairs(header: Sequence[str], metrics: Sequence[str], rel: str) -> list[Problem]:
    """M.sd and M.n come together."""
    out = []
    for m in metrics:
        present = [f"{m}{s}" in header for s in SUMMARY_SUFFIXES]
        if any(present) and not all(present):
            missing = next(f"{m}{s}" for s, p in zip(SUMMARY_SUFFIXES, present, strict=True) if not p)
            out.append(
                Problem(
                    file=rel,
                    line=1,
                    field=missing,
                    message=f"missing; a published summary of {m} needs both {m}.sd and {m}.n",
                )
            )
    return out


def _spread(
    cells: Sequence[str], col: Mapping[str, int], metrics: Sequence[str], rel: str, line: int, problems: list[Problem]
) -> tuple[dict[str, tuple[float, int]], frozenset[str]]:
    """The published (SD, n) of each metric that has them on this row (empty cells: none), and
    the metrics whose SD is an upper bound: `<0.005`, an SD the source printed as 0.00."""
    out, below = {}, set()
    for m in metrics:
        if f"{m}.sd" not in col or not (cells[col[f"{m}.sd"]].strip() or cells[col[f"{m}.n"]].strip()):
            continue
        text = cells[col[f"{m}.sd"]].strip()
        bound = text.startswith("<") and bool(text[1:].strip())
        sd = _number(text[1:] if bound else text, rel, line, f"{m}.sd", problems)
        if bound and sd is not None and sd <= 0:
            problems.append(Problem(file=rel, line=line, field=f"{m}.sd", message="a bound `<X` needs X > 0"))
            sd = None
        if bound:
            below.add(m)
        n_text = cells[col[f"{m}.n"]].strip()
        n = int(n_text) if n_text.isascii() and n_text.isdigit() and len(n_text) < 10 else None
        if n is None or n < 1:
            problems.append(
                Problem(
                    file=rel,
                    line=line,
                    field=f"{m}.n",
                    message=f"{n_text!r} is not a count of trials; write 1, 2, 3, ...",
                )
            )
        if sd is not None and sd < 0:
            problems.append(
                Problem(
                    file=rel, line=line, field=f"{m}.sd", message=f"{sd:g} is negative; a standard deviation is >= 0"
                )
            )
        if sd is not None and sd >= 0 and n is not None and n >= 1:
            out[m] = (sd, n)
    return out, frozenset(below) if below else NONE_BELOW


def mark_excluded(results: Results, run: RunFile, rel: str, lines: Mapping[tuple[str | int, ...], int]) -> Results:
    """The rows with `excluded:` applied (each matching row carries its reason); an exclusion
    that matches no row, or names no condition of the run, is a located problem in run.yaml."""
    problems = []
    reasons: dict[int, str] = {}
    for i, ex in enumerate(run.excluded):
        located = functools.partial(Problem, file=rel, line=line_for(("excluded", i), lines), field=f"excluded.{i}")
        unknown = [k for k in ex.at if k not in results.conditions]
        if unknown:
            known = ", ".join(results.conditions) or "none"
            problems.append(located(message=f"{', '.join(unknown)} is not a condition; the conditions are: {known}"))
            continue
        matched = [
            k
            for k, row in enumerate(results.rows)
            if row.trial == ex.trial
            and all(same_condition(v, row.at[results.conditions.index(c)]) for c, v in ex.at.items())
        ]
        if not matched:
            problems.append(located(message=f"trial {ex.trial} at {ex.at or 'any condition'} is not in results.csv"))
        for k in matched:
            reasons[k] = ex.reason
    if problems:
        raise BenchledgerError(problems)
    rows = tuple(replace(row, excluded=reasons[k]) if k in reasons else row for k, row in enumerate(results.rows))
    return replace(results, rows=rows)


def _optional_number(cell: str, rel: str, line: int, column: str, problems: list[Problem]) -> float | None:
    return None if not cell.strip() else _number(cell, rel, line, column, problems)


def _phase(cell: str, rel: str, line: int, problems: list[Problem]) -> str:
    """A request's phase: empty means measured; warmup and cooldown requests stay out of the statistics."""
    phase = cell.strip() or "measured"
    if phase not in PHASES:
        message = f"{cell.strip()[:40]!r} is not a phase; write warmup, measured or cooldown (empty means measured)"
        problems.append(Problem(file=rel, line=line, field="phase", message=message))
    return phase


def parse_requests(text: str, rel: str, run: RunFile) -> tuple[Request, ...]:
    """Parse requests.csv: one row per request, used for latency distributions."""
    header, rows = _read(text, rel)
    conditions = tuple(run.conditions)
    expected = ("trial", *conditions, "request", *REQUEST_NUMBERS, "error")
    problems = _check_header(header, expected, (*REQUEST_OPTIONAL, "phase"), rel, "FORMAT.md for requests.csv")
    if problems:
        raise BenchledgerError(problems)
    col = {name: i for i, name in enumerate(header)}
    out = []
    for line, cells in rows(problems):
        trial = _trial(cells[col["trial"]], False, rel, line, problems)
        request = _trial(cells[col["request"]], False, rel, line, [])
        if request is None:
            problems.append(
                Problem(
                    file=rel,
                    line=line,
                    field="request",
                    message="not a request number; number requests 1, 2, 3, ... within a trial",
                )
            )
        error = cells[col["error"]].strip()
        nums = {
            name: _optional_number(cells[col[name]], rel, line, name, problems)
            for name in (*REQUEST_NUMBERS, *REQUEST_OPTIONAL)
            if name in col
        }
        if not error and nums.get("latency_s") is None:
            problems.append(
                Problem(
                    file=rel,
                    line=line,
                    field="latency_s",
                    message="empty for a request without error; give its latency or its error text",
                )
            )
        phase = _phase(cells[col["phase"]] if "phase" in col else "", rel, line, problems)
        if trial is None or request is None:
            continue
        out.append(
            Request(
                trial=trial,
                at=tuple(cells[col[c]].strip() for c in conditions),
                request=request,
                start_s=nums.get("start_s"),
                ttft_s=nums.get("ttft_s"),
                latency_s=nums.get("latency_s"),
                output_tokens=nums.get("output_tokens"),
                draft_tokens=nums.get("draft_tokens"),
                draft_accepted=nums.get("draft_accepted"),
                error=error,
                phase=phase,
            )
        )
    if problems:
        raise BenchledgerError(problems)
    return tuple(out)
