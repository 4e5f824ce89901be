"""A report's attribution grids checked against the ledger before anything is fitted: runs
that exist and are cells of one benchmark, the metric and condition in every run, two levels
per factor and every combination once, and base levels the claims and `base:` agree on.
Every problem is located in the report's front matter."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..errors import Problem
from ..format.front_matter import Attribution
from ..ledger.records import Ledger, Report, Run
from ..ledger.references import condition_problem, run_reference_problem
from ..ledger.yamlio import line_for
from .orientation import levels_of, orientation


def _problem(report: Report, message: str, i: int, *field: str | int) -> Problem:
    """A problem with attribution `i` of `report`, at `field` of it, located in its front matter."""
    loc: tuple[str | int, ...] = ("attributions", i, *field)
    return Problem(file=report.path, line=line_for(loc, report.lines), field=".".join(map(str, loc)), message=message)


def grid_problems(ledger: Ledger) -> list[Problem]:
    """Every problem with the attributions of all reports, located in their front matter."""
    problems: list[Problem] = []
    used = {c.id: r.path for r in ledger.reports for c in r.meta.claims}
    for report in ledger.reports:
        for i, attribution in enumerate(report.meta.attributions):
            if attribution.id in used:
                message = f"id {attribution.id!r} is already used in {used[attribution.id]}; ids are unique"
                problems.append(_problem(report, message, i, "id"))
                continue
            used[attribution.id] = report.path
            problems += _problems(ledger, report, i, attribution)
    return problems


def _problems(ledger: Ledger, report: Report, i: int, a: Attribution) -> list[Problem]:
    found: list[Problem] = []
    for j, ref in enumerate(a.runs):
        problem = run_reference_problem(ref, ledger.runs, ledger.failed_runs)
        if problem:
            found.append(_problem(report, problem, i, "runs", j))
    if found or any(ref in ledger.failed_runs for ref in a.runs):
        return found
    runs = [ledger.runs[ref] for ref in a.runs]
    if len(set(a.runs)) != len(a.runs):
        twice = sorted({r for r in a.runs if a.runs.count(r) > 1})
        return [_problem(report, f"lists {', '.join(twice)} twice; one run per cell", i, "runs")]
    benchmarks = sorted({r.meta.benchmark for r in runs})
    if len(benchmarks) > 1:
        message = f"mixes benchmarks {', '.join(map(repr, benchmarks))}; a grid compares runs of one benchmark"
        return [_problem(report, message, i, "runs")]
    for run in runs:
        if a.metric not in run.meta.metrics and a.metric not in run.meta.rates:
            message = f"{a.metric!r} is neither a metric nor a rate of run {run.id!r}"
            found.append(_problem(report, message, i, "metric"))
        elif (problem := condition_problem(run, run.id, {str(k): v for k, v in a.at.items()})) is not None:
            found.append(_problem(report, problem, i, "at"))
    return found or _level_problems(report, i, a, runs) or _orientation_problems(ledger, report, i, a)


def _level_problems(report: Report, i: int, a: Attribution, runs: Sequence[Run]) -> list[Problem]:
    """Two levels per factor, and every combination of levels exactly once."""
    found = []
    table = {run.id: levels_of(run, a) for run in runs}
    for f, (name, key) in enumerate(a.factors.items()):
        seen = sorted({levels[f] for levels in table.values()})
        if len(seen) != 2:
            what = "does not vary" if len(seen) == 1 else f"has {len(seen)} levels"
            message = f"{key} {what} across the grid's runs ({', '.join(seen)}); a factor has exactly two levels"
            found.append(_problem(report, message, i, "factors", name))
    if found:
        return found
    cells: dict[tuple[str, ...], str] = {}
    for run_id, levels in table.items():
        if levels in cells:
            combo = _shown(a, levels)
            message = f"{cells[levels]!r} and {run_id!r} are the same cell ({combo}); each combination once"
            found.append(_problem(report, message, i, "runs"))
        cells.setdefault(levels, run_id)
    values = [sorted({levels[f] for levels in table.values()}) for f in range(len(a.factors))]
    for missing in itertools.product(*values):
        if missing not in cells:
            message = f"no run for {_shown(a, missing)}; measure that cell and list it under runs"
            found.append(_problem(report, message, i, "runs"))
    return found


def _orientation_problems(ledger: Ledger, report: Report, i: int, a: Attribution) -> list[Problem]:
    found = orientation(ledger, a)
    out = [_problem(report, m, i, *where.split(".")) for where, m in found.conflicts]
    levels = [levels_of(ledger.runs[ref], a) for ref in a.runs]
    for k, f in enumerate(a.factors):
        if f in a.base and str(a.base[f]) not in {lv[k] for lv in levels}:
            seen = ", ".join(sorted({lv[k] for lv in levels}))
            message = f"{a.base[f]!r} is not a level of {f} ({a.factors[f]}); give one of its levels: {seen}"
            out.append(_problem(report, message, i, "base", f))
    return out


def _shown(a: Attribution, levels: Sequence[str]) -> str:
    return ", ".join(f"{name}={level}" for name, level in zip(a.factors, levels, strict=True))
