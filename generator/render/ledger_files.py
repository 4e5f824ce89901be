"""The ledger export as published files: ledger/trials.csv and ledger/claims.json (and the
same bytes `benchledger export` writes)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from typing import Any

from ..analysis.claims import Evaluation
from ..analysis.export import CLAIM_COLUMNS, TRIAL_COLUMNS, claim_rows, trial_rows
from ..ledger.records import Ledger

LEDGER = "ledger"
TRIALS_CSV = f"{LEDGER}/trials.csv"
CLAIMS_JSON = f"{LEDGER}/claims.json"


def table_csv(rows: list[dict[str, Any]], first: tuple[str, ...]) -> bytes:
    """CSV with the fixed columns first, then every other column in sorted order."""
    extra = sorted({k for row in rows for k in row} - set(first))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, [*first, *extra], lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def table_json(rows: list[dict[str, Any]]) -> bytes:
    return (json.dumps(rows, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode()


def ledger_outputs(ledger: Ledger, evaluations: Mapping[str, Evaluation]) -> dict[str, bytes]:
    return {
        TRIALS_CSV: table_csv(trial_rows(ledger), TRIAL_COLUMNS),
        CLAIMS_JSON: table_json(claim_rows(evaluations)),
    }


def export_files(ledger: Ledger, evaluations: Mapping[str, Evaluation], kind: str) -> dict[str, bytes]:
    """`benchledger export`: trials and claims, both as csv or both as json."""
    trials, claims = trial_rows(ledger), claim_rows(evaluations)
    if kind == "csv":
        return {"trials.csv": table_csv(trials, TRIAL_COLUMNS), "claims.csv": table_csv(claims, CLAIM_COLUMNS)}
    return {"trials.json": table_json(trials), "claims.json": table_json(claims)}
