"""Ids that collide with the index pages benchledger generates (runs/index.md, claims/index.md)
are refused by check and by import --id, never a traceback in build."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from generator.cli import app
from helpers import import_into, measured_run, publication, write_tree

FIXTURE = Path(__file__).parents[1] / "fixtures" / "hyperfine" / "gzip-sizes.json"


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


@pytest.mark.parametrize("rid", ["index.md", "index.html"])
def test_a_run_named_like_the_runs_index_is_refused(tmp_path: Path, rid: str) -> None:
    repo = write_tree(tmp_path / "pub", publication(measured_run(rid)))
    message = (
        f"Error: runs/{rid}: folder name {rid!r} is the name of the runs index page benchledger generates; "
        "choose another id, e.g. index-1, and rename the folder\n"
    )
    for command in ("check", "build"):
        code, out = cli(command, "--repo", str(repo))
        assert code == 1 and message in out, out


def test_import_refuses_an_id_named_like_the_runs_index(tmp_path: Path) -> None:
    code, out, root = import_into(tmp_path, "hyperfine", str(FIXTURE), "--id", "index.md")
    assert code == 1
    assert (
        "Error: --id: 'index.md' is the name of the runs index page benchledger generates; choose another id, "
        "e.g. index-1\n"
    ) in out
    assert not (root / "runs" / "index.md").exists()


def test_a_claim_named_like_the_claims_index_is_refused(tmp_path: Path) -> None:
    report = """\
---
title: R
claims:
  - id: index.html
    date: 2026-09-02
    statement: A statement.
    source: {citation: somebody}
---
Body.
"""
    repo = write_tree(tmp_path / "pub", publication(measured_run(), extra={"site_src/reports/r.md": report}))
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert (
        "Error: site_src/reports/r.md:4: claims.0.id: 'index.html' is the name of the claims index page "
        "benchledger generates; choose another id, e.g. index-1\n"
    ) in out, out
