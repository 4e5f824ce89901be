"""The ledger export as published files: ledger/trials.csv, ledger/runs.csv and
ledger/claims.json (and the same bytes `benchledger export` writes)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, MutableMapping
from typing import Any

from ..analysis.claims import Evaluation
from ..analysis.export import (
    CLAIM_COLUMNS,
    RUN_COLUMNS,
    TRIAL_COLUMNS,
    claim_rows,
    run_rows,
    run_trial_rows,
    trial_columns,
    trial_rows,
)
from ..ledger.records import Ledger

Fragments = MutableMapping[str, tuple[str, tuple[str, ...], str]]  # run id -> (digest, columns, its CSV lines)

LEDGER = "ledger"
TRIALS_CSV = f"{LEDGER}/trials.csv"
RUNS_CSV = f"{LEDGER}/runs.csv"
CLAIMS_JSON = f"{LEDGER}/claims.json"


def table_csv(rows: list[dict[str, Any]], first: tuple[str, ...]) -> bytes:
    """CSV with the fixed columns first, then every other column in sorted order."""
    columns = (*first, *sorted({k for row in rows for k in row} - set(first)))
    return (_csv_lines([columns]) + _csv_lines([row.get(k, "") for k in columns] for row in rows)).encode()


def _csv_lines(rows: Any) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([_inert(cell) for cell in row] for row in rows)
    return buffer.getvalue()


FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def _inert(cell: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (a claim statement `=HYPERLINK(...)`) is
    written with a leading apostrophe, OWASP's advice for CSV exports; numbers and signed
    figures ("-5%", "+1.5") are written as they are."""
    if not isinstance(cell, str) or not cell.startswith(FORMULA):
        return cell
    signed_figure = cell[0] in "+-" and cell[1:2].isdigit()  # "-5%", "+20%": a claimed change, not code
    return cell if signed_figure else "'" + cell


def trials_csv(ledger: Ledger, fragments: Fragments | None = None) -> bytes:
    """ledger/trials.csv: the same bytes as `table_csv(trial_rows(ledger), TRIAL_COLUMNS)`. With
    `fragments`, a run's lines are reused while its digest and the columns are unchanged."""
    fragments = {} if fragments is None else fragments
    runs = sorted(ledger.runs.values(), key=lambda r: r.id)
    columns = (*TRIAL_COLUMNS, *sorted(set().union(*(trial_columns(run) for run in runs)) - set(TRIAL_COLUMNS)))
    parts = [_csv_lines([columns])]
    for run in runs:
        known = fragments.get(run.id)
        if known is None or known[:2] != (run.digest, columns):
            lines = _csv_lines([row.get(k, "") for k in columns] for row in run_trial_rows(run))
            known = fragments[run.id] = (run.digest, columns, lines)
        parts.append(known[2])
    for gone in set(fragments) - set(ledger.runs):
        del fragments[gone]
    return "".join(parts).encode()


def table_json(rows: list[dict[str, Any]]) -> bytes:
    return (json.dumps(rows, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode()


def ledger_outputs(
    ledger: Ledger, evaluations: Mapping[str, Evaluation], fragments: Fragments | None = None
) -> dict[str, bytes]:
    return {
        TRIALS_CSV: trials_csv(ledger, fragments),
        RUNS_CSV: table_csv(run_rows(ledger), RUN_COLUMNS),
        CLAIMS_JSON: table_json(claim_rows(evaluations)),
    }


def export_files(ledger: Ledger, evaluations: Mapping[str, Evaluation], kind: str) -> dict[str, bytes]:
    """`benchledger export`: trials, runs and claims, all as csv or all as json."""
    trials, runs, claims = trial_rows(ledger), run_rows(ledger), claim_rows(evaluations)
    if kind == "csv":
        return {
            "trials.csv": table_csv(trials, TRIAL_COLUMNS),
            "runs.csv": table_csv(runs, RUN_COLUMNS),
            "claims.csv": table_csv(claims, CLAIM_COLUMNS),
        }
    return {"trials.json": table_json(trials), "runs.json": table_json(runs), "claims.json": table_json(claims)}
