"""The JSON Schemas shipped for editors match the models, and the CLI prints them."""

from __future__ import annotations

import json
from importlib import resources

from typer.testing import CliRunner

from generator.cli import app
from generator.format.schemas import json_schemas


def test_committed_schemas_match_the_models() -> None:
    folder = resources.files("generator.format") / "schemas"
    for kind, schema in json_schemas().items():
        committed = json.loads((folder / f"{kind}-1.json").read_text())
        assert committed == schema, (
            f"regenerate generator/format/schemas/{kind}-1.json (python scripts/reference_pages.py)"
        )


def test_schema_command_prints_run_schema() -> None:
    result = CliRunner().invoke(app, ["schema", "run"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert "metrics" in schema["required"] and schema["properties"]["schema"]["const"] == "benchledger.run/1"


def test_schema_command_refuses_unknown_kind() -> None:
    result = CliRunner().invoke(app, ["schema", "bogus"])
    assert result.exit_code == 1
    assert "unknown kind 'bogus'; use one of: run, manifest, receipt, report" in result.output
