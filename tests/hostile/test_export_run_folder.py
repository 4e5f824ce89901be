"""`benchledger export --out` inside a run folder wrote the tables into a folder whose files its
receipts hash (and `check` reads), so the run's receipt went stale. runs/ and every folder in it
are refused, naming the run, before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import tree_digest

from helpers import cli

RUN = "2026-09-01-measured"
FIX = "choose a folder outside runs/, e.g. --out ledger-export"


@pytest.mark.parametrize("inside", [RUN, f"{RUN}/tables", f"{RUN}/raw"])
def test_out_inside_a_run_folder_is_refused(repo: Path, inside: str) -> None:
    before = tree_digest(repo / "runs")
    code, out = cli("export", "--repo", str(repo), "--out", str(repo / "runs" / inside))
    assert code == 1
    assert out == (
        f"Error: --out: {(repo / 'runs' / inside).resolve()} lies in the run folder runs/{RUN}, whose files "
        f"its receipts hash: the tables would make them stale; {FIX}\n"
    )
    assert tree_digest(repo / "runs") == before


def test_out_at_runs_itself_is_refused(repo: Path) -> None:
    code, out = cli("export", "--repo", str(repo), "--out", str(repo / "runs"))
    assert code == 1
    assert out == f"Error: --out: {(repo / 'runs').resolve()} is runs/, which holds only run folders; {FIX}\n"


def test_out_through_a_link_into_a_run_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "tables").symlink_to(repo / "runs" / RUN)
    code, out = cli("export", "--repo", str(repo), "--out", str(tmp_path / "tables"))
    assert code == 1
    assert f"lies in the run folder runs/{RUN}, whose files its receipts hash" in out
    assert sorted(os.listdir(repo / "runs" / RUN)) == ["manifest.yaml", "requests.csv", "results.csv", "run.yaml"]


def test_out_beside_the_runs_is_fine(repo: Path) -> None:
    code, out = cli("export", "--repo", str(repo), "--out", str(repo / "ledger-export"))
    assert code == 0, out
    assert sorted(os.listdir(repo / "ledger-export")) == ["claims.csv", "runs.csv", "trials.csv"]
