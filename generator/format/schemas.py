"""The JSON Schemas of the file kinds, exported from the pydantic models for editors."""

from __future__ import annotations

from typing import Any

from .front_matter import ReportMeta
from .history import HistoryFile
from .models import ManifestFile, ReceiptFile, RunFile


def json_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas for editors, keyed by file kind (run, manifest, receipt, report: a report's
    front matter, and history: a history/<name>.yaml)."""
    out = {}
    kinds = (
        ("run", RunFile),
        ("manifest", ManifestFile),
        ("receipt", ReceiptFile),
        ("report", ReportMeta),
        ("history", HistoryFile),
    )
    for kind, model in kinds:
        schema = model.model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[kind] = schema
    return out
