"""The command line: fast help, clear errors, no tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
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


def test_compare_with_a_malformed_metric_name_is_a_located_error(repo: Path) -> None:
    run = "2026-09-01-measured"
    result = CliRunner().invoke(app, ["compare", run, run, "--metric", "tok/s", "--repo", str(repo)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.output.startswith("Error: command line: --metric: String should match pattern")
    assert "(found 'tok/s')" in result.output


def test_builders_are_found_beside_the_running_interpreter_first(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    from generator.cli import site_builders

    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    tool = venv_bin / "zensical"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(sys, "executable", str(venv_bin / "python"))
        patch.setenv("PATH", str(tmp_path / "empty"))
        assert site_builders.builder_executable("zensical") == str(tool)
        assert site_builders.builder_executable("properdocs") is None
    finally:
        patch.undo()


def test_confidence_option_sets_every_interval_and_its_words(repo: Path) -> None:
    from generator.analysis import stats

    config = repo / "mkdocs.yml"
    config.write_text(config.read_text().replace("  - benchledger\n", "  - benchledger:\n      confidence: 0.9\n"))
    result = CliRunner().invoke(app, ["generate", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    page = (repo / "site_src" / "runs" / "2026-09-01-measured" / "index.md").read_text()
    low, high = stats.t_interval([31.2, 30.8, 31.0, 30.9, 31.4], 0.90)
    assert "Mean [90% CI]" in page and "95%" not in page
    assert f"[{low:.2f}, {high:.2f}]" in page
    methods = (repo / "site_src" / "methods.md").read_text()
    assert "| Confidence level | 90% (α = 0.1; equivalence at 80%) |" in methods


def test_a_bad_confidence_in_mkdocs_yml_is_a_clear_error(repo: Path) -> None:
    config = repo / "mkdocs.yml"
    config.write_text(config.read_text().replace("  - benchledger\n", "  - benchledger:\n      confidence: lots\n"))
    result = CliRunner().invoke(app, ["generate", "--repo", str(repo)])
    assert result.exit_code == 1
    assert "plugins.benchledger.confidence: 'lots' is not a number in [0.5, 1); e.g. 0.95" in result.output


@pytest.mark.parametrize("command", ["generate", "build", "check"])
def test_the_cli_and_the_plugin_read_the_settings_alike(repo: Path, command: str) -> None:
    """One parser: a min_effect of 1.5 (150%) is refused by `generate` (the CLI's reading) and by
    `build` (MkDocs running the plugin) with the same words; it once passed the plugin."""
    config = repo / "mkdocs.yml"
    config.write_text(config.read_text().replace("  - benchledger\n", "  - benchledger:\n      min_effect: 1.5\n"))
    result = CliRunner().invoke(app, [command, "--repo", str(repo)])
    assert result.exit_code == 1
    assert "plugins.benchledger.min_effect: 1.5 is not a number in [0, 1); e.g. 0.01" in result.output


def test_a_bad_command_line_setting_names_the_option(repo: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "compare",
            "2026-09-01-measured",
            "2026-09-01-measured",
            "--metric",
            "tokens_per_second",
            "--min-effect",
            "2",
            "--repo",
            str(repo),
        ],
    )
    assert result.exit_code == 1
    assert "command line: --min-effect: 2.0 is not a number in [0, 1); e.g. 0.01" in result.output


def test_diff_shows_what_differs_and_every_shared_figure(tmp_path: Path) -> None:
    import json as json_

    from helpers import MANIFEST, RESULTS, measured_run, publication, write_tree

    b = measured_run("2026-09-01-b")
    b["runs/2026-09-01-b/manifest.yaml"] = MANIFEST.replace("draft_head_gemm: stock", "draft_head_gemm: lowm")
    b["runs/2026-09-01-b/results.csv"] = RESULTS.replace("104.", "114.").replace("103.", "113.").replace("102.", "112.")
    root = write_tree(tmp_path, publication(measured_run("2026-09-01-a"), b))
    result = CliRunner().invoke(app, ["diff", "2026-09-01-a", "2026-09-01-b", "--repo", str(root), "--json"])
    assert result.exit_code == 0, result.output
    found = json_.loads(result.output)
    assert found["differences"] == [{"key": "kernels.draft_head_gemm", "baseline": "stock", "candidate": "lowm"}]
    figures = {(f["metric"], f["at"]["concurrency"]): f for f in found["figures"]}
    assert len(figures) == 8  # tokens_per_second, draft_tokens, draft_accepted, acceptance at 1 and 8
    assert figures[("tokens_per_second", 1)]["ratio"] == pytest.approx(1.0)
    assert figures[("tokens_per_second", 8)]["ratio"] == pytest.approx(1.0962, abs=1e-4)
    text = CliRunner().invoke(app, ["diff", "2026-09-01-a", "2026-09-01-b", "--repo", str(root)]).output
    assert "kernels.draft_head_gemm" in text and "+9.6%" in text
    bad = CliRunner().invoke(app, ["diff", "2026-09-01-a", "nope", "--repo", str(root)])
    assert bad.exit_code == 1 and "run 'nope' does not exist" in bad.output
