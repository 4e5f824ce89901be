"""A number no float holds (JSON allows an integer of 400 digits) or a figure that is no number
at all is never a traceback and never dropped silently: vllm-bench names it in the notes and
keeps the rest of the pass, and GuideLLM's request_totals past any real count are not read."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from helpers import import_into

FIXTURES = Path(__file__).parents[1] / "fixtures"
RUN = "2026-11-30-numbers"


def _notes(root: Path) -> str:
    return str(yaml.safe_load((root / "runs" / RUN / "run.yaml").read_text())["notes"])


def test_a_vllm_count_past_any_float_is_named_not_a_traceback(tmp_path: Path) -> None:
    record = json.loads((FIXTURES / "vllm-bench" / "er0080-serve-c2.json").read_text())
    record["completed"] = 10**400
    given = tmp_path / "pass.json"
    given.write_text(json.dumps(record))
    code, out, root = import_into(tmp_path, "vllm-bench", str(given), "--id", RUN)
    assert code == 0, out
    assert (
        "pass.json: completed is an integer of 401 digits, more than a number of a run file holds, so it is not "
        "kept as a figure; raw/ keeps it."
    ) in _notes(root)
    assert "output_throughput" in (root / "runs" / RUN / "results.csv").read_text().splitlines()[0]


def test_a_vllm_figure_that_is_no_number_is_named(tmp_path: Path) -> None:
    record = json.loads((FIXTURES / "vllm-bench" / "er0080-serve-c2.json").read_text())
    record["completed"], record["failed"] = "8", True
    given = tmp_path / "pass.json"
    given.write_text(json.dumps(record))
    code, out, root = import_into(tmp_path, "vllm-bench", str(given), "--id", RUN)
    assert code == 0, out
    notes = _notes(root)
    assert 'pass.json: completed is "8", not a number, so it is not kept as a figure; raw/ keeps it.' in notes
    assert "pass.json: failed is true, not a number, so it is not kept as a figure; raw/ keeps it." in notes


def test_guidellm_request_totals_past_any_float_are_not_a_traceback(tmp_path: Path) -> None:
    report = json.loads((FIXTURES / "guidellm" / "gpt-oss-20b-sync.json").read_text())
    report["benchmarks"][0]["metrics"]["request_totals"]["successful"] = 10**400
    given = tmp_path / "benchmarks.json"
    given.write_text(json.dumps(report))
    code, out, root = import_into(tmp_path, "guidellm", str(given), "--id", RUN)
    assert code == 0, out
    assert (root / "runs" / RUN / "results.csv").is_file()


def test_a_vllm_date_that_cannot_be_read_is_named_not_called_missing(tmp_path: Path) -> None:
    record = json.loads((FIXTURES / "vllm-bench" / "er0080-serve-c2.json").read_text())
    record["date"] = "9999-99-99"
    given = tmp_path / "pass.json"
    given.write_text(json.dumps(record))
    code, out, root = import_into(tmp_path, "vllm-bench", str(given), "--id", RUN)
    assert code == 0, out
    notes = _notes(root)
    assert (
        "pass.json: its date '9999-99-99' cannot be read (vLLM writes YYYYMMDD-HHMMSS; ISO 8601 is read too): this "
        "is the day of the import; use --date to set it."
    ) in notes
    assert "records no date" not in notes
