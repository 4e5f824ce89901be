"""`benchledger compare`: the verdict a claim would get, in the terminal or as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .cli_common import Repo, fail, verdict_settings
from .errors import Problem


def _parse_at(items: list[str]) -> dict[str, Any]:
    import yaml

    at: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(f"--at {item!r}: write KEY=VALUE, e.g. --at concurrency=8")
        try:
            parsed = yaml.safe_load(value.strip())
        except yaml.YAMLError:
            parsed = value.strip()
        at[key.strip()] = parsed if isinstance(parsed, str | int | float | bool) else value.strip()
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

    from .claimcheck import validate_claims
    from .claims import compare as compare_runs
    from .load import Report, load
    from .model import Claim, ReportMeta

    ledger = load(repo)
    settings = verdict_settings(repo, min_effect, noise)
    conditions = _parse_at(at or [])
    claim = Claim.model_validate(
        {
            "id": "compare",
            "statement": "compare",
            "metric": metric,
            "baseline": baseline,
            "candidate": candidate,
            "at": conditions,
            "varies": varies or [],
        }
    )
    meta = ReportMeta.model_validate({"title": "compare", "claims": [claim]})
    report = Report("compare", "command line", meta, "", "")
    failed = {p.file.split("/")[1] for p in ledger.errors if p.file.startswith("runs/") and "/" in p.file}
    problems = validate_claims(ledger.runs, [report], failed)
    for ref in (baseline, candidate):
        if ref in failed:
            problems.append(Problem(f"runs/{ref}", None, None, "has problems; run benchledger check"))
    if problems:
        fail([Problem(p.file, None, p.field.split(".")[-1] if p.field else None, p.message) for p in problems])
    result = compare_runs(ledger.runs[baseline], ledger.runs[candidate], metric, conditions, varies or [], settings)
    if as_json:
        typer.echo(json.dumps(_compare_json(baseline, candidate, metric, conditions, result), indent=2))
    else:
        _print_comparison(baseline, candidate, metric, result)


def _compare_json(baseline: str, candidate: str, metric: str, at: dict[str, Any], r: dict[str, Any]) -> dict:
    return {
        "baseline": baseline,
        "candidate": candidate,
        "metric": metric,
        "at": at,
        "n_baseline": r["baseline"].n,
        "n_candidate": r["candidate"].n,
        "ratio": r.get("ratio"),
        "ci_low": r.get("ci_low"),
        "ci_high": r.get("ci_high"),
        "noise": r.get("noise"),
        "min_effect": r["min_effect"],
        "verdict": r["verdict"],
        "trials_needed": r.get("trials_needed") if r["verdict"] == "inconclusive" else None,
        "confounds": [c.key for c in r["confounds"]],
    }


def _print_comparison(baseline: str, candidate: str, metric: str, r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from . import text as t

    console = Console(highlight=False)
    table = Table(title=f"{metric} at {r['baseline'].label}")
    for column in ("", "run", "n", "median", "mean [95% CI]"):
        table.add_column(column)
    for name, side in (("baseline", r["baseline"]), ("candidate", r["candidate"])):
        s = side.summary
        if s is None:
            shown = t.number(side.values[0]) if side.values else "–"
            table.add_row(name, side.run, "not reported", shown, "trials not reported")
        else:
            ci = f" [{t.number(s.ci_low)}, {t.number(s.ci_high)}]" if s.ci_low is not None else ""
            table.add_row(name, side.run, str(s.n), t.number(s.median), f"{t.number(s.mean)}{ci}")
    console.print(table)
    if r.get("ratio") is not None:
        interval = ""
        if r.get("ci_low") is not None:
            interval = f" [{t.number(r['ci_low'])}, {t.number(r['ci_high'])}]"
        console.print(f"ratio candidate/baseline: {t.number(r['ratio'])}{interval}")
    if r.get("noise") is not None:
        console.print(f"noise band: ±{r['noise']:.1%}   smallest change worth calling: ±{r['min_effect']:.1%}")
    console.print(f"verdict: [bold]{r['verdict']}[/bold]")
    console.print(r["reason"])
    if r.get("trials_needed"):
        console.print(f"trials needed per side: {r['trials_needed']}")
    if r["confounds"]:
        console.print("unmatched conditions (differ, not in --varies):")
        for c in r["confounds"]:
            console.print(f"  {c.key}: {c.baseline} -> {c.candidate}")
