"""`benchledger diff A B`: any two runs side by side, without writing a claim: every manifest
and setup key that differs, and the ratio B / A with its interval for every metric and rate
both runs have, at every condition both measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .common import Repo, fail, shown


def diff(
    baseline: Annotated[str, typer.Argument(help="Run id of the first run (A).")],
    candidate: Annotated[str, typer.Argument(help="Run id of the second run (B).")],
    repo: Repo = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Put two runs side by side: what differs in their environment, and B / A for every figure.

    Each ratio is of geometric means with its 95% interval (Welch on the log scale), one
    condition at a time; no verdict is given (write a claim or use compare for that). Exits 0
    whatever the differences, 1 on bad input.
    """
    import json

    from ..analysis.pairs import side_by_side
    from ..ledger.load import load

    ledger = load(repo)
    for ref in (baseline, candidate):
        if ref in ledger.failed_runs:
            fail(f"runs/{ref} has problems; run benchledger check")
        if ref not in ledger.runs:
            fail(f"run {ref!r} does not exist; give a run id (the folder name under runs/)")
    found = side_by_side(ledger.runs[baseline], ledger.runs[candidate])
    if as_json:
        typer.echo(json.dumps(_in_range(found), indent=2, default=str))
    else:
        _print(found)


RATIOS = ("ratio", "ci_low", "ci_high", "point_ratio")


def _in_range(found: dict[str, Any]) -> dict[str, Any]:
    """The JSON's ratios, a ratio or bound out of range (past 1e300 or below 1e-300) as null."""
    from ..format.signed import in_range

    def kept(value: Any) -> Any:
        return value if value is None or in_range(value) else None

    return found | {"figures": [f | {k: kept(f[k]) for k in RATIOS} for f in found["figures"]]}


def _print(found: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..analysis.pairs import n_shown, no_interval
    from ..analysis.stats import IDENTICAL_SIDES
    from ..analysis.wording import pct
    from ..format.conditions import condition_label

    console = Console(highlight=False)
    a, b = found["baseline"], found["candidate"]
    if found["differences"]:
        table = Table(title=escape(shown(f"Environment: what differs between {a} (A) and {b} (B)")))
        for column in ("key", "A", "B"):
            table.add_column(column)
        for d in found["differences"]:
            table.add_row(*(escape(shown(str(d[k]))) for k in ("key", "baseline", "candidate")))
        console.print(table)
    else:
        console.print(escape(shown(f"Environment: the recorded manifests and setups of {a} and {b} match.")))
    if not found["figures"]:
        console.print("No figure in common: the runs share no metric at a shared condition.")
        return
    table = Table(title="B / A for every figure both runs have (95% intervals, one condition at a time)")
    for column in ("metric", "condition", "n (A / B)", "B / A", "interval"):
        table.add_column(column)
    for f in found["figures"]:
        ratio = pct(f["ratio"]) if f["ratio"] is not None else "–"
        if f["point_ratio"] is not None:
            ratio = f"{pct(f['point_ratio'])} (as reported)"
        reported = (f["reported_baseline"], f["reported_candidate"])
        interval = f"[{pct(f['ci_low'])}, {pct(f['ci_high'])}]" if f["ci_low"] is not None else no_interval(*reported)
        interval = IDENTICAL_SIDES if f["ci_low"] is not None and f["ci_low"] == f["ci_high"] else interval
        label = condition_label(f["at"].items())
        count = f"{n_shown(f['n_baseline'], reported[0])} / {n_shown(f['n_candidate'], reported[1])}"
        count = "trials not reported" if all(reported) else count  # as the pages write it (text.n_pair)
        cells = (f["metric"], label, count, ratio, interval)
        table.add_row(*(escape(shown(str(c))) for c in cells))
    console.print(table)
