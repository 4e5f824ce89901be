"""Validate the claims of every report against the runs they name.

One located problem per mistake: a missing run (with the closest ids), a path
given for a run id, a metric missing from a run, an `at` that selects no rows
(with the values that exist), runs of different benchmarks, duplicate ids,
`corrects:` naming nothing, correction cycles, a malformed `claimed`; and the sweep
directives of report bodies (`<!-- sweep METRIC: RUN, RUN -->`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

from ..errors import Problem
from ..format.claimed import parse_claimed
from ..format.conditions import condition_key, condition_value
from ..format.front_matter import Claim
from .publication import reserved_id_problems
from .records import Ledger, Report, Run, SweepDirective
from .yamlio import line_for


def _where(report: Report, index: int, field: str | None = None) -> tuple[int | None, str]:
    loc: tuple[str | int, ...] = ("claims", index) + ((field,) if field else ())
    return line_for(loc, report.lines), ".".join(str(p) for p in loc)


def _problem(report: Report, message: str, index: int, field: str | None = None) -> Problem:
    """A problem with claim `index` of `report`, at `field` of it, located in its front matter."""
    line, name = _where(report, index, field)
    return Problem(file=report.path, line=line, field=name, message=message)


def _run_problems(
    report: Report, i: int, claim: Claim, field: str, runs: Mapping[str, Run], failed: frozenset[str]
) -> Iterable[Problem]:
    ref = getattr(claim, field)
    if ref is None:
        return
    line, name = _where(report, i, field)
    problem = run_reference_problem(ref, runs, failed)
    if problem is not None:
        yield Problem(file=report.path, line=line, field=name, message=problem)
    if problem is not None or ref in failed:
        return
    run = runs[ref]
    metric = claim.metric
    if metric is not None and metric not in run.meta.metrics and metric not in run.meta.rates:
        known = ", ".join(run.figures)
        yield Problem(
            file=report.path,
            line=_where(report, i, "metric")[0],
            field=f"claims.{i}.metric",
            message=f"{metric!r} is neither a metric nor a rate of run {ref!r}; it has: {known}",
        )
    own: dict[str, object] = dict(getattr(claim, f"{field}_at", None) or {})
    unknown = [k for k in own if k not in run.meta.conditions]
    if unknown:
        side_loc = ("claims", i, field, "at")
        known = ", ".join(run.meta.conditions) or "none"
        message = f"{', '.join(unknown)} is not a condition of run {ref!r}; its conditions are: {known}"
        yield Problem(
            file=report.path, line=line_for(side_loc, report.lines), field=".".join(map(str, side_loc)), message=message
        )
        return
    for index, at in enumerate(claim.at_list or []):
        where: tuple[str | int, ...] = ("at", index) if isinstance(claim.at, list) else ("at",)
        where = (field, "at") if own else where  # the side's own condition is where the fix goes
        problem = condition_problem(run, ref, {**{str(k): v for k, v in at.items()}, **own})
        if problem is not None:
            loc: tuple[str | int, ...] = ("claims", i, *where)
            yield Problem(
                file=report.path, line=line_for(loc, report.lines), field=".".join(map(str, loc)), message=problem
            )


def run_reference_problem(ref: str, runs: Mapping[str, Run], failed: frozenset[str]) -> str | None:
    """Why `ref` names no usable run (a path, or no such id, with the closest ids), or None.
    A run that failed to load is reported on its own files, not here."""
    if "/" in ref or "\\" in ref or ".." in ref:
        return f"{ref!r} is a path; give the run id only (the folder name under runs/)"
    if ref in failed or ref in runs:
        return None
    close = difflib.get_close_matches(ref, list(runs), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "; no run has that id"
    return f"run {ref!r} does not exist{hint}"


def condition_problem(run: Run, ref: str, at: dict[str, object]) -> str | None:
    """Why `at` does not select exactly one condition of the run, or None."""
    unknown = [k for k in at if k not in run.meta.conditions]
    if unknown:
        known = ", ".join(run.meta.conditions) or "none"
        return f"{', '.join(unknown)} is not a condition of run {ref!r}; its conditions are: {known}"
    matches = run.results.matching(at)
    if len(matches) == 1:
        return None
    values = {
        name: sorted({v[k] for v in run.results.condition_values()}, key=condition_key)
        for k, name in enumerate(run.results.conditions)
    }
    shown = "; ".join(f"{n}: {', '.join(v)}" for n, v in values.items())
    what = "selects no rows" if not matches else f"selects {len(matches)} conditions, not one"
    return f"{at} {what} of run {ref!r}; values that exist: {shown}"


def shared_conditions(baseline: Run, candidate: Run) -> list[dict[str, object]]:
    """`at: all`: every condition tuple both runs have, as mappings (one empty mapping for
    runs without conditions)."""
    if baseline.results.conditions != candidate.results.conditions:
        return []
    theirs = set(candidate.results.condition_values())
    return [baseline.results.mapping(at) for at in baseline.results.condition_values() if at in theirs]


MAX_SWEEP_RUNS = 12


def swept_condition(runs: Sequence[Run]) -> str | None:
    """The first condition every run has (in the same order), numeric in each, taking two
    values or more among them: the x axis of their sweep chart."""
    conditions = runs[0].results.conditions if runs else ()
    if any(run.results.conditions != conditions for run in runs):
        return None
    for k, name in enumerate(conditions):
        values = {at[k] for run in runs for at in run.results.condition_values()}
        if len(values) >= 2 and all(isinstance(condition_value(v), int | float) for v in values):
            return name
    return None


def check_references(ledger: Ledger) -> list[Problem]:
    """Every problem with the claims and the sweep directives of the ledger's reports."""
    problems = validate_claims(ledger.runs, ledger.reports, ledger.failed_runs)
    problems += reserved_id_problems(ledger.reports)
    for report in ledger.reports:
        for directive in report.sweeps:
            problems += _sweep_problems(report, directive, ledger.runs, ledger.failed_runs)
    return problems


def _sweep_problems(
    report: Report, directive: SweepDirective, runs: Mapping[str, Run], failed: frozenset[str]
) -> list[Problem]:
    def problem(message: str) -> Problem:
        return Problem(file=report.path, line=directive.line, field="sweep", message=message)

    example = "write <!-- sweep tokens_per_second: RUN_A, RUN_B --> (a metric or rate, then run ids)"
    if not directive.figure or not directive.runs:
        return [problem(f"{directive.text!r} names no metric or no run; {example}")]
    if len(directive.runs) > MAX_SWEEP_RUNS:
        return [problem(f"names {len(directive.runs)} runs; a sweep chart reads with at most {MAX_SWEEP_RUNS}")]
    out = [
        problem(f"run {ref!r} does not exist; give the folder name under runs/")
        for ref in directive.runs
        if ref not in runs and ref not in failed
    ]
    found = [runs[ref] for ref in directive.runs if ref in runs]
    out += [
        problem(f"run {run.id!r} has no metric or rate {directive.figure!r}; it has {', '.join(run.figures)}")
        for run in found
        if directive.figure not in run.figures
    ]
    measured = [run for run in found if not run.reported]
    if not out and len(found) == len(directive.runs):
        if not measured:
            out.append(problem("every run it names is reported (no trials, no interval); name measured runs"))
        elif swept_condition(measured) is None:
            message = (
                "the runs share no numeric condition (concurrency, request rate...) taking two values or more, "
                "or their conditions differ; name runs measured over the same sweep"
            )
            out.append(problem(message))
    return out


Located = tuple[Report, int, Claim]  # a claim, its report and its index in the front matter


def validate_claims(runs: Mapping[str, Run], reports: Iterable[Report], failed: frozenset[str]) -> list[Problem]:
    """Every problem with the claims of all reports, located in their front matter."""
    problems: list[Problem] = []
    claims: dict[str, Located] = {}
    for report in reports:
        for i, claim in enumerate(report.meta.claims):
            if claim.id in claims:
                line, name = _where(report, i, "id")
                used = claims[claim.id][0].path
                message = (
                    f"claim id {claim.id!r} is already used in {used}; claim ids are unique across the publication"
                )
                problems.append(Problem(file=report.path, line=line, field=name, message=message))
                continue
            claims[claim.id] = (report, i, claim)
            problems += _claim_problems(report, i, claim, runs, failed)
    for cid, located in claims.items():
        problems += _correction_problems(cid, located, claims)
    return problems


def _claim_problems(
    report: Report, i: int, claim: Claim, runs: Mapping[str, Run], failed: frozenset[str]
) -> list[Problem]:
    problems = [
        p for field in ("baseline", "candidate", "run") for p in _run_problems(report, i, claim, field, runs, failed)
    ]
    if claim.baseline is not None and claim.candidate is not None and {claim.baseline, claim.candidate} <= set(runs):
        base, cand = runs[claim.baseline], runs[claim.candidate]
        b, c = base.meta.benchmark, cand.meta.benchmark
        if b != c:
            message = f"baseline runs benchmark {b!r} but candidate runs {c!r}; only runs of one benchmark are compared"
            problems.append(
                Problem(file=report.path, line=_where(report, i, "candidate")[0], field=f"claims.{i}", message=message)
            )
        problems += _varies_problems(report, i, claim, base, cand)
        if claim.at == "all" and not shared_conditions(base, cand):
            message = (
                f"`all`: {claim.baseline!r} and {claim.candidate!r} share no condition "
                f"(conditions {list(base.results.conditions)} vs {list(cand.results.conditions)}); list them instead"
            )
            problems.append(_problem(report, message, i, "at"))
    if claim.claimed is not None:
        try:
            parse_claimed(claim.claimed)
        except ValueError as err:
            problems.append(_problem(report, str(err), i, "claimed"))
    return problems


def _varies_problems(report: Report, i: int, claim: Claim, baseline: Run, candidate: Run) -> list[Problem]:
    """A `varies:` key found in neither run's manifest or setup (as a key or a section above
    keys) varies nothing: usually a renamed or misspelled key, which leaves the real difference
    an unmatched condition."""
    keys = set(baseline.environment()) | set(candidate.environment())
    out = []
    for j, key in enumerate(claim.varies):
        if key in keys or any(k.startswith(key + ".") for k in keys):
            continue
        loc: tuple[str | int, ...] = ("claims", i, "varies", j)
        message = _varies_message(key, keys, baseline, candidate)
        out.append(
            Problem(file=report.path, line=line_for(loc, report.lines), field=".".join(map(str, loc)), message=message)
        )
    return out


def _varies_message(key: str, keys: set[str], baseline: Run, candidate: Run) -> str:
    """Why a `varies:` key varies nothing, and the fix: a condition column is named as one (the
    claim's `at:`, or each side's own, selects conditions); any other key gets the closest one."""
    of = list(dict.fromkeys(run.id for run in (baseline, candidate) if key in run.results.conditions))
    if of:
        runs = " and ".join(repr(r) for r in of)
        return (
            f"{key} is a condition of {'run' if len(of) == 1 else 'runs'} {runs} (a column of results.csv); "
            f"`varies` lists manifest and setup keys: remove it, and choose each side's {key} with `at`"
        )
    one = baseline.id == candidate.id  # a claim inside one run
    close = difflib.get_close_matches(key, sorted(keys), n=1, cutoff=0.0)
    hint = f"; the closest key {'it has' if one else 'they have'} is {close[0]!r}" if close else ""
    where = f"not in run {baseline.id!r}" if one else f"in neither {baseline.id!r} nor {candidate.id!r}"
    return f"{key!r} is {where} (manifest or setup){hint}: correct the key, or remove it"


def _correction_problems(cid: str, located: Located, claims: Mapping[str, Located]) -> list[Problem]:
    """`corrects:` must name a claim, and following corrections must never come back."""
    report, i, claim = located
    if claim.corrects is None:
        return []
    line, name = _where(report, i, "corrects")
    if claim.corrects not in claims:
        close = difflib.get_close_matches(claim.corrects, list(claims), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return [
            Problem(file=report.path, line=line, field=name, message=f"claim {claim.corrects!r} does not exist{hint}")
        ]
    chain: list[str] = [cid]
    current: str | None = claim.corrects
    while current is not None and current in claims:
        if current in chain:
            cycle = " -> ".join([*chain, current])
            message = f"corrections form a cycle: {cycle}; a correction must correct an earlier claim"
            return [Problem(file=report.path, line=line, field=name, message=message)]
        chain.append(current)
        current = claims[current][2].corrects
    return []
