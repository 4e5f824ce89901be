"""`benchledger compare`: the verdict a claim would get, in the terminal or as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import BenchledgerError, Problem
from .common import Repo, fail, shown, verdict_settings

if TYPE_CHECKING:
    from ..analysis.comparison import Comparison, Settings


def _parse_at(items: list[str]) -> dict[str, Any]:
    from ..format.keys import parse_assignment

    at: dict[str, Any] = {}
    for item in items:
        parsed = parse_assignment(item)
        if parsed is None:
            fail(f"--at {item!r}: write KEY=VALUE, e.g. --at concurrency=8")
        at[parsed[0]] = parsed[1]
    return at


def compare(
    baseline: Annotated[str, typer.Argument(help="Run id of the baseline.")],
    candidate: Annotated[str, typer.Argument(help="Run id of the candidate.")],
    metric: Annotated[str, typer.Option(help="A metric or rate of both runs.")],
    at: Annotated[list[str] | None, typer.Option(help="Condition as KEY=VALUE; repeat for several.")] = None,
    varies: Annotated[
        list[str] | None, typer.Option(help="Dotted key the comparison varies on purpose; repeatable.")
    ] = None,
    repo: Repo = Path("."),
    min_effect: Annotated[float | None, typer.Option(help="Smallest change worth calling (0.01 = 1%).")] = None,
    noise: Annotated[float | None, typer.Option(help="Fixed noise band (0.06 = 6%); default: larger CV.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare two runs the way a claim is judged: ratio, interval, verdict, confounds.

    Exits 0 whatever the verdict, 1 on bad input.
    """
    import json

    from ..analysis.comparison import compare as compare_runs

    settings = verdict_settings(repo, min_effect, noise)
    conditions = _parse_at(at or [])
    ledger = _checked(repo, baseline, candidate, metric, conditions, varies or [])
    result = compare_runs(ledger.runs[baseline], ledger.runs[candidate], metric, conditions, varies or [], settings)
    if as_json:
        typer.echo(json.dumps(comparison_json(result), indent=2))
    else:
        _print(result, settings)


def _checked(repo: Path, baseline: str, candidate: str, metric: str, at: dict[str, Any], varies: list[str]) -> Any:
    """The ledger, once the comparison's references are known to be sound (else exit 1)."""
    from ..format.models import ReportMeta
    from ..ledger.load import load
    from ..ledger.records import Report
    from ..ledger.references import validate_claims
    from ..ledger.yamlio import validate

    claim = {
        "id": "compare",
        "statement": "compare",
        "metric": metric,
        "baseline": baseline,
        "candidate": candidate,
        "at": at,
        "varies": varies,
    }
    try:
        meta = validate(ReportMeta, {"title": "compare", "claims": [claim]}, "command line", {})
    except BenchledgerError as err:
        fail([Problem("command line", None, _option(p.field), p.message) for p in err.problems])
    ledger = load(repo)
    report = Report("compare", "command line", meta, "", "")
    problems = validate_claims(ledger.runs, [report], ledger.failed_runs)
    problems += [
        Problem(f"runs/{ref}", None, None, "has problems; run benchledger check")
        for ref in (baseline, candidate)
        if ref in ledger.failed_runs
    ]
    if problems:
        fail([Problem(p.file, None, _option(p.field), p.message) for p in problems])
    return ledger


def _option(field: str | None) -> str | None:
    """claims.0.metric -> --metric: the option the user typed."""
    return "--" + field.split(".")[-1] if field and not field.split(".")[-1].isdigit() else field


def comparison_json(r: Comparison) -> dict[str, Any]:
    """The 14 keys of `compare --json`."""
    return {
        "baseline": r.baseline.run,
        "candidate": r.candidate.run,
        "metric": r.metric,
        "at": dict(r.at),
        "n_baseline": r.baseline.n,
        "n_candidate": r.candidate.n,
        "ratio": r.ratio,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "noise": r.noise,
        "min_effect": r.min_effect,
        "verdict": r.verdict,
        "trials_needed": r.trials_needed if r.verdict == "inconclusive" else None,
        "confounds": [c.key for c in r.confounds],
    }


def _print(r: Comparison, settings: Settings) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..render import text as t

    def safe(value: object) -> str:
        return escape(shown(str(value)))

    level = t.level(settings.confidence)
    console = Console(highlight=False)
    table = Table(title=safe(f"{r.metric} at {r.baseline.label}"))
    for column in ("", "run", "n", "median", f"mean [{level} CI]"):
        table.add_column(column)
    for name, side in (("baseline", r.baseline), ("candidate", r.candidate)):
        s = side.summary
        if s is None:
            value = t.number(side.values[0]) if side.values else "–"
            table.add_row(name, safe(side.run), "not reported", value, "trials not reported")
        else:
            ci = f" [{t.number(s.ci_low)}, {t.number(s.ci_high)}]" if s.ci_low is not None else ""
            table.add_row(name, safe(side.run), str(s.n), t.number(s.median), f"{t.number(s.mean)}{ci}")
    console.print(table)
    if r.ratio is not None:
        interval = f" [{t.number(r.ci_low)}, {t.number(r.ci_high)}]" if r.ci_low is not None else ""
        console.print(f"ratio candidate/baseline: {t.number(r.ratio)}{interval}")
    if r.noise is not None:
        console.print(f"noise band: ±{r.noise:.1%}   smallest change worth calling: ±{r.min_effect:.1%}")
    console.print(f"verdict: [bold]{r.verdict}[/bold]")
    console.print(safe(r.reason))
    if r.trials_needed:
        console.print(f"trials needed per side: {r.trials_needed}")
    if r.confounds:
        console.print("unmatched conditions (differ, not in --varies):")
        for c in r.confounds:
            console.print(safe(f"  {c.key}: {c.baseline} -> {c.candidate}"))
