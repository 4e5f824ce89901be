"""`benchledger compare`: the verdict a claim would get, in the terminal or as JSON."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import BenchledgerError, Problem
from .common import Repo, fail, shown, verdict_settings

if TYPE_CHECKING:
    from ..analysis.comparison import ClaimComparison, Comparison


def parse_at(items: list[str]) -> list[dict[str, Any]] | None:
    """--at options as conditions; `all` (None) every shared condition.

    One condition tuple per --at when any --at names several keys
    (`--at n_prompt=512,n_gen=0 --at n_prompt=0,n_gen=128`: two conditions). Otherwise each
    --at is one KEY=VALUE: different keys make one condition, a key given twice several
    conditions (each combined with the other keys)."""
    import itertools

    from ..format.keys import parse_assignment

    if items == ["all"]:
        return None
    tuples: list[list[tuple[str, Any]]] = []
    for item in items:
        parts = [parse_assignment(part) for part in item.split(",")]
        if any(p is None for p in parts) or item.strip() == "all":
            fail(
                f"--at {item!r}: write KEY=VALUE (e.g. --at concurrency=8), one condition's keys joined by commas "
                "(--at n_prompt=512,n_gen=0), or --at all alone"
            )
        tuples.append([p for p in parts if p is not None])
    if any(len(t) > 1 for t in tuples):
        out: list[dict[str, Any]] = []
        for t in tuples:
            if len({k for k, _ in t}) != len(t):
                fail(f"--at {','.join(f'{k}={v}' for k, v in t)!r}: a key appears twice in one condition; give it once")
            if dict(t) not in out:
                out.append(dict(t))
        return out
    values: dict[str, list[Any]] = {}
    for ((key, value),) in tuples:
        if value not in values.setdefault(key, []):
            values[key].append(value)
    keys = list(values)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values.values())]


def compare(
    *,
    baseline: Annotated[str, typer.Argument(help="Run id of the baseline.")],
    candidate: Annotated[
        str | None,
        typer.Argument(help="Run id of the candidate; leave it out to compare two conditions of the baseline's run."),
    ] = None,
    metric: Annotated[str, typer.Option(help="A metric or rate of both runs.")],
    at: Annotated[
        list[str] | None,
        typer.Option(
            help="Condition as KEY=VALUE; a key repeated means several conditions (judged together). "
            "One condition per --at with its keys joined by commas: --at n_prompt=512,n_gen=0 "
            "--at n_prompt=0,n_gen=128. --at all: every condition both runs share. With --versus, "
            "the baseline's condition."
        ),
    ] = None,
    versus: Annotated[
        list[str] | None,
        typer.Option(
            help="The candidate's condition, KEY=VALUE (repeatable, or keys joined by commas): the candidate is "
            "at --at with these keys changed, every other --at key is shared. Two conditions of one run: "
            "compare RUN --metric seconds --at command=A --versus command=B (a claim with "
            "baseline: {run: RUN, at: {command: A}} and candidate: {run: RUN, at: {command: B}})."
        ),
    ] = None,
    claimed: Annotated[
        str | None,
        typer.Option(help='What is claimed: "+", "-", "+20%", "1.2x", "±2%", "within 2%" or "0%".'),
    ] = None,
    varies: Annotated[
        list[str] | None, typer.Option(help="Dotted key the comparison varies on purpose; repeatable.")
    ] = None,
    repo: Repo = Path("."),
    min_effect: Annotated[float | None, typer.Option(help="Smallest change worth calling (0.01 = 1%).")] = None,
    noise: Annotated[float | None, typer.Option(help="Fixed noise band (0.06 = 6%); default: larger CV.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare two runs, or two conditions of one run (--at and --versus), the way a claim is
    judged: ratio, interval, verdict, confounds.

    Exits 0 whatever the verdict, 1 on bad input.
    """
    import json

    from ..analysis.claims import evaluate

    settings = verdict_settings(repo, min_effect, noise)
    conditions = parse_at(at or [])
    sides = _sides(baseline, candidate, conditions, parse_versus(versus or []))
    claim = _claim(sides, metric=metric, varies=varies or [], claimed=claimed)
    ledger, report = _checked(repo, claim, sides)
    found = evaluate(report, report.meta.claims[0], ledger, settings).comparison
    assert found is not None  # a comparison claim
    if as_json:
        typer.echo(json.dumps(comparison_json(found, own=bool(versus)), indent=2))
    else:
        _print(found)


@dataclass(frozen=True)
class Sides:
    """What `compare` was asked: each side's run and own condition, and the shared conditions
    (None: every condition both runs share)."""

    baseline: str
    candidate: str
    at: list[dict[str, Any]] | None
    baseline_at: dict[str, Any]
    candidate_at: dict[str, Any]


def parse_versus(items: list[str]) -> dict[str, Any]:
    """--versus options as one mapping: the candidate's own values."""
    from ..format.keys import parse_assignment

    out: dict[str, Any] = {}
    for item in items:
        for part in item.split(","):
            found = parse_assignment(part)
            if found is None:
                fail(
                    f"--versus {item!r}: write KEY=VALUE, the candidate's value "
                    "(e.g. --at command=A --versus command=B)"
                )
            key, value = found
            if key in out:
                fail(f"--versus gives {key} twice; the candidate is at one value of it")
            out[key] = value
    return out


def _sides(baseline: str, candidate: str | None, at: list[dict[str, Any]] | None, versus: dict[str, Any]) -> Sides:
    """The two sides, with --versus split out of --at: its keys are each side's own condition
    (the baseline's from --at), every other --at key is shared; refused with the fix, in options."""
    if not versus:
        if candidate is None:
            fail(f"give a candidate run, or compare two conditions of {baseline!r}: {_two(baseline)}")
        return Sides(baseline, candidate, at, {}, {})
    if at is None:
        fail("--at all cannot be combined with --versus: give the baseline's condition with --at (--at KEY=A)")
    own: dict[str, Any] = {}
    for key in versus:
        values = list(dict.fromkeys(repr(c[key]) for c in at if key in c))
        if len(values) != 1 or any(key not in c for c in at):
            given = "gives no" if not values else "gives more than one"
            fail(f"--versus {key}={versus[key]}: --at {given} baseline {key}; give one (--at {key}=A --versus {key}=B)")
        own[key] = next(c[key] for c in at)
    shared: list[dict[str, Any]] = []
    for c in at:
        rest = {k: v for k, v in c.items() if k not in versus}
        if rest not in shared:
            shared.append(rest)
    cand = baseline if candidate is None else candidate
    if cand == baseline and own == versus:
        said = ",".join(f"{k}={v}" for k, v in versus.items())
        fail(f"--versus {said} is the baseline's own condition; give the candidate another value")
    return Sides(baseline, cand, shared, own, dict(versus))


def _claim(sides: Sides, *, metric: str, varies: list[str], claimed: str | None) -> dict[str, Any]:
    """The claim `compare` judges, as a report would write it."""
    at = sides.at
    claim: dict[str, Any] = {
        "id": "compare",
        "statement": "compare",
        "metric": metric,
        "baseline": {"run": sides.baseline, "at": sides.baseline_at} if sides.baseline_at else sides.baseline,
        "candidate": {"run": sides.candidate, "at": sides.candidate_at} if sides.candidate_at else sides.candidate,
        "at": "all" if at is None else at if len(at) != 1 else at[0],
        "varies": varies,
    }
    if claimed is not None:
        claim["claimed"] = claimed
    return claim


def _checked(repo: Path, claim: dict[str, Any], sides: Sides) -> tuple[Any, Any]:
    """The ledger and the one-claim report, once the comparison's references are known to be
    sound (else exit 1)."""
    from ..format.front_matter import ReportMeta
    from ..ledger.load import load
    from ..ledger.records import Report
    from ..ledger.references import validate_claims
    from ..ledger.yamlio import validate

    try:
        meta = validate(ReportMeta, {"title": "compare", "claims": [claim]}, "command line", {})
    except BenchledgerError as err:
        fail(
            [
                Problem(file="command line", field=_option(p.field), message=_in_options(p.message, sides))
                for p in err.problems
            ]
        )
    ledger = load(repo)
    report = Report(slug="compare", path="command line", meta=meta, body="", digest="")
    problems = validate_claims(ledger.runs, [report], ledger.failed_runs)
    problems += [
        Problem(file=f"runs/{ref}", message="has problems; run benchledger check")
        for ref in dict.fromkeys((sides.baseline, sides.candidate))
        if ref in ledger.failed_runs
    ]
    if problems:
        fail([Problem(file=p.file, field=_option(p.field), message=_in_options(p.message, sides)) for p in problems])
    return ledger, report


def _two(run: str) -> str:
    return f"compare {run} --metric M --at KEY=A --versus KEY=B"


def _in_options(message: str, sides: Sides) -> str:
    """A claim's message in the words of the command line: `at` is --at (and --versus), and a
    run compared with itself is told how to compare two of its conditions."""
    if message.startswith("baseline and candidate are both run"):
        return (
            f"{sides.baseline!r} is compared with itself; to compare two of its conditions write {_two(sides.baseline)}"
        )
    return message.replace("with `at`", "with --at and --versus")


SIDE_OPTIONS = {"baseline.at": "--at", "candidate.at": "--versus", "baseline": "baseline", "candidate": "candidate"}


def _option(field: str | None) -> str | None:
    """claims.0.metric -> --metric, claims.0.varies.1 -> --varies, claims.0.candidate.at ->
    --versus: the option (or argument) the user typed."""
    names = [part for part in (field or "").split(".")[1:] if not part.isdigit()]
    if not names:  # the claim as a whole: the command line as a whole
        return None if (field or "").startswith("claims.") else field
    joined = ".".join(names[:2])
    return SIDE_OPTIONS.get(joined) or SIDE_OPTIONS.get(names[0]) or "--" + names[0]


def comparison_json(r: ClaimComparison, own: bool = False) -> dict[str, Any]:
    """The 14 keys of `compare --json`, then `claimed`, `claimed_kind`, with --versus (`own`)
    `baseline_condition` and `candidate_condition` (each side's condition, as claims.json
    writes them), and `conditions` (one object per condition) when there are several; the 14
    keys then describe the claim as a whole (its verdict), and the per-condition figures are null."""
    one = r.only
    first = r.conditions[0]
    out: dict[str, Any] = {
        "baseline": first.baseline.run,
        "candidate": first.candidate.run,
        "metric": r.metric,
        "at": dict(first.at) if one else [dict(c.at) for c in r.conditions],
        "n_baseline": one.baseline.n if one else None,
        "n_candidate": one.candidate.n if one else None,
        "ratio": _in_range(one.ratio) if one else None,
        "ci_low": _in_range(one.ci_low) if one else None,
        "ci_high": _in_range(one.ci_high) if one else None,
        "noise": one.noise if one else None,
        "min_effect": r.min_effect,
        "verdict": r.verdict,
        "trials_needed": one.trials_needed if one and one.verdict == "inconclusive" else None,
        "confounds": [c.key for c in r.confounds],
        "claimed": r.claimed.text if r.claimed else None,
        "claimed_kind": r.claimed.kind if r.claimed else "direction",
    }
    if own:
        out["baseline_condition"] = one.baseline.label if one else None
        out["candidate_condition"] = one.candidate.label if one else None
    if not one:
        out["conditions"] = [_condition_json(c, own) for c in r.conditions]
    return out


def _in_range(ratio: float | None) -> float | None:
    """A ratio or bound for JSON: null when out of range (past 1e300 or below 1e-300), as the
    terminal prints "out of range"."""
    from ..format.signed import in_range

    return ratio if ratio is not None and in_range(ratio) else None


def _condition_json(c: Comparison, own: bool = False) -> dict[str, Any]:
    sides = {"baseline_condition": c.baseline.label, "candidate_condition": c.candidate.label} if own else {}
    return {
        "at": dict(c.at),
        **sides,
        "n_baseline": c.baseline.n,
        "n_candidate": c.candidate.n,
        "ratio": _in_range(c.ratio),
        "ci_low": _in_range(c.ci_low),
        "ci_high": _in_range(c.ci_high),
        "confidence": c.confidence,
        "noise": c.noise,
        "verdict": c.verdict,
        "trials_needed": c.trials_needed,
    }


def _print(r: ClaimComparison) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False)

    def say(text: str) -> None:
        console.print(escape(shown(text)))

    for c in r.conditions:
        _print_condition(console, r, c)
    if r.claimed is not None:
        say(f"claimed: {r.claimed.text} ({r.claimed.kind})")
    console.print(f"verdict: [bold]{r.verdict}[/bold]")
    say(r.reason)
    if r.confounds:
        say("unmatched conditions (differ, not in --varies):")
        for conf in r.confounds:
            say(f"  {conf.key}: {conf.baseline} -> {conf.candidate}")


def _print_condition(console: Any, r: ClaimComparison, c: Comparison) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ..analysis.stats import IDENTICAL, IDENTICAL_SIDES
    from ..render import rate_text
    from ..render import text as t
    from ..render.verdict_text import interval_text, no_interval, proportions

    def safe(value: object) -> str:
        return escape(shown(str(value)))

    level = t.level(c.confidence)
    table = Table(title=safe(f"{r.metric} at {c.label}"))
    own = c.baseline.label != c.candidate.label  # each side at its own condition: say which
    for column in ("", "run", *["condition"] * own, "n", "median", f"mean [{level} CI]"):
        table.add_column(column)
    for name, side in (("baseline", c.baseline), ("candidate", c.candidate)):
        where = [safe(side.label)] * own
        s = side.summary
        if s is None:
            value = t.number(side.values[0]) if side.values else "–"
            n = str(side.n) if side.published else "not reported"
            table.add_row(name, safe(side.run), *where, n, "–", f"{value} (reported)")
        elif side.rate is not None:  # a rate: in percent, its interval over the trials
            mean = rate_text.mean_interval(side.rate)
            table.add_row(name, safe(side.run), *where, str(side.rate.n), t.percent(s.median), safe(mean))
        else:
            ci = f" [{t.number(s.ci_low)}, {t.number(s.ci_high)}]" if s.ci_low is not None else ""
            ci = f" ({IDENTICAL})" if s.constant else ci
            table.add_row(name, safe(side.run), *where, str(s.n), t.number(s.median), safe(f"{t.number(s.mean)}{ci}"))
    console.print(table)
    if c.ratio is not None and proportions(c, r.unit) is not None:  # percentage points first, the ratio labelled
        console.print(safe(f"candidate vs baseline: {interval_text(c, unit=r.unit)}"))
    elif c.ratio is not None:
        interval = f" [{t.number(c.ci_low)}, {t.number(c.ci_high)}]" if c.ci_low is not None else f" ({no_interval(c)})"
        interval = f" ({IDENTICAL_SIDES})" if c.ci_low is not None and c.ci_low == c.ci_high else interval
        console.print(safe(f"ratio candidate/baseline: {t.number(c.ratio)}{interval}"))  # "[out of range" is no tag
    if c.band is not None:
        console.print(f"within-noise band: ±{c.band:.1%}   smallest change worth calling: ±{r.min_effect:.1%}")
    if len(r.conditions) > 1:
        console.print(f"verdict here: {c.verdict}")
    if c.trials_needed:
        likely = f" (most likely {c.settles_as})" if c.settles_as else ""
        console.print(f"trials needed per side: {c.trials_needed}{likely}")
    elif c.unsettled:
        console.print(escape(shown(c.unsettled)))
