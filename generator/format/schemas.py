"""The JSON Schemas of the file kinds, exported from the pydantic models for editors."""

from __future__ import annotations

from typing import Any

from .models import ManifestFile, ReceiptFile, RunFile


def json_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas for editors, keyed by file kind (run, manifest, receipt)."""
    out = {}
    for kind, model in (("run", RunFile), ("manifest", ManifestFile), ("receipt", ReceiptFile)):
        schema = model.model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[kind] = schema
    return out
