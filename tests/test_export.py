"""The ledger as one table: `benchledger export` and the site's ledger/ files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import generate, measured_run, publication, write_tree

ROOT = Path(__file__).parents[1]


def test_export_of_the_example_publication(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", "--repo", str(ROOT), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    trials = list(csv.DictReader(io.StringIO((tmp_path / "trials.csv").read_text())))
    runs = {r["run"]: r for r in csv.DictReader(io.StringIO((tmp_path / "runs.csv").read_text()))}
    claims = list(csv.DictReader(io.StringIO((tmp_path / "claims.csv").read_text())))
    header = (tmp_path / "trials.csv").read_text().splitlines()[0].split(",")
    assert header[:4] == ["run", "trial", "condition", "excluded"]
    assert "at.concurrency" in header and "metric.tokens_per_second" in header and "rate.acceptance" in header
    expected = figures = rates = 0
    for run in (ROOT / "runs").iterdir():
        table = list(csv.DictReader(io.StringIO((run / "results.csv").read_text())))
        expected += len(table)  # one row per trial and condition
        figures += sum(1 for row in table for k, v in row.items() if k not in ("trial", "concurrency") and v != "")
        declared = (yaml.safe_load((run / "run.yaml").read_text()).get("rates") or {}).values()
        rates += sum(1 for row in table for r in declared if float(row[r["denominator"]]) > 0)  # one per trial
    assert len(trials) == expected == 108
    assert sum(1 for t in trials for k, v in t.items() if k.startswith("metric.") and v != "") == figures == 750
    assert sum(1 for t in trials for k, v in t.items() if k.startswith("rate.") and v != "") == rates == 70
    (trial,) = [
        t
        for t in trials
        if (t["run"], t["trial"], t["condition"]) == ("2026-11-29-testbed-nmax12", "1", "concurrency=1")
    ]
    assert (float(trial["rate.acceptance"]), trial["metric.draft_tokens"], trial["metric.draft_accepted"]) == (
        385 / 1367,
        "1367",  # a whole number as results.csv writes it
        "385",
    )
    assert trial["metric.tokens_per_second"] == "535.598" and trial["at.concurrency"] == "1"
    assert set(runs) == {p.name for p in (ROOT / "runs").iterdir()}
    nmax12 = runs["2026-11-29-testbed-nmax12"]
    assert (nmax12["benchmark"], nmax12["source"], nmax12["date"]) == (
        "testbed-spec-decode",
        "measured here",
        "2026-11-29",
    )
    assert (nmax12["unit.tokens_per_second"], nmax12["rate_of.acceptance"]) == (
        "tok/s",
        "draft_accepted / draft_tokens",
    )
    assert nmax12["setup.draft_n_max"] == "12"
    assert len(claims) == 16  # 15 claims, one of them judged at two conditions
    every_load = [c for c in claims if c["claim"] == "testbed-throughput-nmax2-vs-nmax12-every-load"]
    assert [c["condition"] for c in every_load] == ["concurrency=1", "concurrency=4"]
    assert all(c["verdict"] == "supported" and c["level"] == "0.975" for c in every_load)
    (rated,) = [c for c in claims if c["claim"] == "testbed-acceptance-nmax2-vs-nmax12"]
    assert float(rated["difference_pp"]) == pytest.approx((289 / 430 - 385 / 1367) * 100)  # +39.0 pp, the card's
    assert {c["difference_pp"] for c in claims if c["metric"] != "acceptance"} == {""}
    again = CliRunner().invoke(app, ["export", "--repo", str(ROOT), "--out", str(tmp_path)])
    assert again.exit_code == 1 and "trials.csv: already exists; pass --force" in again.output


def test_the_site_publishes_the_tables_with_excluded_trials_marked(tmp_path: Path) -> None:
    run = measured_run(excluded=[{"trial": 2, "reason": "a backup ran"}])
    out = generate(write_tree(tmp_path / "pub", publication(run)))
    trials = list(csv.DictReader(io.StringIO(out["ledger/trials.csv"].decode())))
    assert len(trials) == 5 * 2 and {t["excluded"] for t in trials if t["trial"] == "2"} == {"a backup ran"}
    assert {t["excluded"] for t in trials if t["trial"] != "2"} == {""}
    assert json.loads(out["ledger/claims.json"]) == []
    assert "[trials.csv](../ledger/trials.csv)" in out["runs/index.md"].decode()


def test_a_statement_a_spreadsheet_would_run_is_exported_inert() -> None:
    from generator.render.ledger_files import table_csv

    rows = [
        {"claim": "a", "statement": '=HYPERLINK("http://evil.example","x")', "claimed": "-5%"},
        {"claim": "b", "statement": "@SUM(1+1)", "claimed": "+20%"},
        {"claim": "c", "statement": "-cmd|' /C calc'!A0", "claimed": "0%"},
    ]
    lines = table_csv(rows, ("claim", "statement", "claimed")).decode().splitlines()
    assert lines[1:] == [
        'a,"\'=HYPERLINK(""http://evil.example"",""x"")",-5%',
        "b,'@SUM(1+1),+20%",
        "c,'-cmd|' /C calc'!A0,0%",
    ]
