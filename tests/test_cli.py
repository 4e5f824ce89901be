"""The command line: fast help, clear errors, no tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from generator.cli import app


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; sys.argv = ['benchledger', '--help']\n"
        "from generator import cli\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('pandas', 'altair', 'scipy', 'mkdocs', 'numpy') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    assert "check" in out and "build" in out and "serve" in out


def test_build_outside_a_publication_says_where_to_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["build", "--repo", str(tmp_path)])
    assert result.exit_code == 1
    assert "mkdocs.yml: not found; run benchledger in a publication repository or pass --repo DIR" in result.output


def test_build_refuses_a_broken_publication_before_mkdocs_runs(repo: Path) -> None:
    (repo / "runs" / "2026-09-01-measured" / "results.csv").write_text("trial,concurrency\n")
    result = CliRunner().invoke(app, ["build", "--repo", str(repo)])
    assert result.exit_code == 1
    assert (
        "Error: runs/2026-09-01-measured/results.csv:1: tokens_per_second: declared but has no column" in result.output
    )
    assert not (repo / "site").exists()
