"""`benchledger check`: every bad input gives exit 1, names the file and the field, no traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from builders import check
from generator.cli import app
from helpers import MANIFEST, RESULTS, import_into, measured_run, publication, run_yaml, write_tree

RUN = "runs/2026-09-01-measured"


def broken(tmp_path: Path, **changes: str | bytes) -> Path:
    files: dict[str, str | bytes] = dict(publication(measured_run()))
    for rel, content in changes.items():
        files[f"{RUN}/{rel}"] = content
    return write_tree(tmp_path / "pub", files)


def test_valid_publication_passes_with_summary(repo: Path) -> None:
    code, out = check(repo)
    assert code == 0
    assert "1 runs, 0 reports, 0 claims: no problems" in out


def test_empty_runs_folder_is_valid(tmp_path: Path) -> None:
    root = write_tree(tmp_path, publication())
    (root / "runs").mkdir()
    code, out = check(root)
    assert code == 0, out
    assert "0 runs" in out


@pytest.mark.parametrize(
    ("file", "content", "expected"),
    [
        (
            "run.yaml",
            "schema: benchledger.run/1\nid: [unclosed\n",
            ["run.yaml:3", "YAML syntax error", "started on line 2"],
        ),
        (
            "run.yaml",
            "schema: benchledger.run/1\nid: !!python/object/apply:os.system ['echo hi']\n",
            ["run.yaml:2", "only plain YAML"],
        ),
        ("run.yaml", run_yaml("2026-09-01-measured").replace("title: ", "titel: "), ["title", "missing"]),
        (
            "run.yaml",
            run_yaml("2026-09-01-measured").replace("date: '2026-09-01'", "date: soon"),
            ["run.yaml:4", "date", "found 'soon'"],
        ),
        ("run.yaml", run_yaml("2026-09-01-measured", warmup_trials="one"), ["warmup_trials"]),
        (
            "run.yaml",
            run_yaml("2026-09-01-measured").replace("benchledger.run/1", "benchledger.run/7"),
            ["run.yaml:1", "schema", "unknown schema version 'benchledger.run/7'"],
        ),
        ("run.yaml", run_yaml("2026-09-01-other"), ["run.yaml:2", "id", "differs from its folder"]),
        ("manifest.yaml", "schema: benchledger.manifest/2\n", ["manifest.yaml", "benchledger.manifest/2"]),
        (
            "results.csv",
            RESULTS.replace("draft_accepted\n", "draft_accepted,gpu_temp\n", 1),
            ["results.csv:1", "gpu_temp", "not declared"],
        ),
        (
            "results.csv",
            RESULTS.replace(",draft_accepted\n", "\n", 1),
            ["results.csv", "draft_accepted", "declared but has no column"],
        ),
        ("results.csv", RESULTS.replace("31.2", "fast"), ["results.csv:2", "tokens_per_second", "'fast'"]),
        ("results.csv", RESULTS.replace("31.2", "nan"), ["results.csv:2", "tokens_per_second", "not finite"]),
        ("results.csv", RESULTS.replace("104.1", "inf"), ["results.csv:3", "not finite"]),
        ("results.csv", RESULTS + "1,8,99.0,1,1\n", ["results.csv:12", "trial 1", "repeats line 3"]),
        ("results.csv", RESULTS.replace("\n2,1,", "\nzwei,1,"), ["results.csv:4", "trial"]),
        (
            "receipts/r.yaml",
            "schema: benchledger.receipt/1\nverifier: Zak\nmethod: rerun\n"
            "date: 2026-09-25\nfiles: {/etc/passwd: 'sha256:" + "0" * 64 + "'}\n",
            ["r.yaml", "absolute"],
        ),
        (
            "receipts/r.yaml",
            "schema: benchledger.receipt/1\nverifier: Zak\nmethod: rerun\n"
            "date: 2026-09-25\nfiles: {../x/run.yaml: 'sha256:" + "0" * 64 + "'}\n",
            ["r.yaml", "'..'"],
        ),
    ],
)
def test_bad_input_names_file_and_field(tmp_path: Path, file: str, content: str, expected: list[str]) -> None:
    code, out = check(broken(tmp_path, **{file: content}))
    assert code == 1, out
    assert out.startswith("0 runs, 0 reports, 0 claims: ")  # a run with an error is left out
    line = next(line for line in out.splitlines() if line.startswith("Error:"))
    for text in expected:
        assert text in out, (text, out)
    assert f"{RUN}/" in line


def test_missing_results_file(tmp_path: Path) -> None:
    root = broken(tmp_path)
    (root / RUN / "results.csv").unlink()
    code, out = check(root)
    assert code == 1
    assert f"{RUN}/results.csv: is missing" in out


def test_bad_run_id_pattern(tmp_path: Path) -> None:
    files = publication(measured_run("Bad Run!"))
    code, out = check(write_tree(tmp_path, files))
    assert code == 1
    assert "runs/Bad Run!" in out and "not a run id" in out


def test_symlinked_file_under_runs_is_refused(tmp_path: Path) -> None:
    root = broken(tmp_path)
    (tmp_path / "elsewhere.log").write_text("secret")
    os.symlink(tmp_path / "elsewhere.log", root / RUN / "server.log")
    code, out = check(root)
    assert code == 1
    assert f"{RUN}/server.log: is a symlink" in out


def test_symlinked_run_folder_is_refused(tmp_path: Path) -> None:
    root = broken(tmp_path)
    os.rename(root / RUN, tmp_path / "real-run")
    os.symlink(tmp_path / "real-run", root / RUN)
    code, out = check(root)
    assert code == 1
    assert f"{RUN}: is a symlink" in out


def test_reported_run_must_leave_trial_empty(tmp_path: Path) -> None:
    yaml_text = run_yaml("2026-09-01-measured", source={"kind": "reported", "citation": "Somebody's blog"}, rates={})
    code, out = check(broken(tmp_path, **{"run.yaml": yaml_text}))
    assert code == 1
    assert "reported run; leave trial empty" in out


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    text = run_yaml("2026-09-01-measured") + "title: again\n"
    code, out = check(broken(tmp_path, **{"run.yaml": text}))
    assert code == 1
    assert "key appears twice" in out


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    text = RESULTS.replace("31.2", "x").replace("104.1", "y")
    code, out = check(broken(tmp_path, **{"results.csv": text}))
    assert code == 1
    assert out.count("Error:") == 2


def test_javascript_url_in_source_is_refused(tmp_path: Path) -> None:
    text = run_yaml(
        "2026-09-01-measured",
        source={"kind": "reported", "citation": "x", "url": "javascript:alert(1)"},
    )
    code, out = check(broken(tmp_path, **{"run.yaml": text}))
    assert code == 1
    assert "source.url" in out


@pytest.mark.parametrize(
    ("config", "warning"),
    [
        (None, "Warning: mkdocs.yml: is missing; benchledger init writes one (MkDocs needs it to build)"),
        (
            "site_name: x\ndocs_dir: site_src\nplugins: [search]\n",
            "Warning: mkdocs.yml: plugins: benchledger is not listed, so the build generates no ledger pages",
        ),
        (
            "site_name: x\nplugins: [search, benchledger]\n",
            "Warning: mkdocs.yml: docs_dir: not set: MkDocs builds docs/ while benchledger reads site_src/",
        ),
    ],
)
def test_check_warns_when_the_build_would_publish_something_else(repo: Path, config: str | None, warning: str) -> None:
    if config is None:
        (repo / "mkdocs.yml").unlink()
    else:
        (repo / "mkdocs.yml").write_text(config)
    result = CliRunner().invoke(app, ["check", "--repo", str(repo)])
    assert result.exit_code == 0 and warning in result.output


def test_a_manifest_or_setup_key_that_looks_like_a_measurement_is_a_warning(tmp_path: Path) -> None:
    """A measured figure filed as a setting is compared as a condition and never judged: check names
    it (a name ending in _ms, _s, _per_second, _throughput or _latency, with a number)."""
    metadata = (
        "metadata: {mean_latency_ms: 2407.07, timeout_s: '30 s', slo_ttft_ms: '200', tokens_per_second: 31.2, "
        "ms_mode: 1, p99_latency: 4, _s: 2, cached: true}\n"
    )
    setup = {"draft_vocab": 16000, "kv_throughput": 12, "warmup_s": True}
    root = broken(
        tmp_path, **{"manifest.yaml": MANIFEST + metadata, "run.yaml": run_yaml("2026-09-01-measured", setup=setup)}
    )
    code, out = check(root)
    assert code == 0, out
    fix = "never judged as a figure; if the tool measured it, make it a metric (declared under metrics: in run.yaml "
    assert [line.split(": looks like a measurement ")[0] for line in out.splitlines() if "looks like" in line] == [
        f"Warning: {RUN}/manifest.yaml: metadata.mean_latency_ms",
        f"Warning: {RUN}/manifest.yaml: metadata.tokens_per_second",
        f"Warning: {RUN}/manifest.yaml: metadata.p99_latency",
        f"Warning: {RUN}/run.yaml: setup.kv_throughput",
    ]
    assert (
        f"Warning: {RUN}/manifest.yaml: metadata.mean_latency_ms: looks like a measurement (2407.07, a name ending "
        "in _ms): a setting or environment key is compared between runs as a condition, " + fix + "with its unit, "
        "its value in results.csv); if it is a setting, write its unit into the value as text (mean_latency_ms: "
        '"2407.07 ms")'
    ) in out


IMPORTERS = ("llama-bench", "vllm-bench", "guidellm", "hyperfine", "pytest-benchmark")
REFUSED = {"readme-rtx4080-ragged.csv", "er0080-all-failed.json"}  # refused on purpose by their importers


def test_what_the_importers_write_never_looks_like_a_measurement(tmp_path: Path) -> None:
    """Every fixture of every importer, imported as committed: check finds nothing, warnings included,
    so `build --strict` of an imported publication is not failed by benchledger's own output."""
    fixtures = Path(__file__).parent / "fixtures"
    count = 0
    for tool in IMPORTERS:
        for path in sorted((fixtures / tool).iterdir()):
            if path.name == "SOURCES.md" or path.name in REFUSED:
                continue
            count += 1
            options = [
                "--date",
                "2026-01-01",
                "--repetitions",
                "5",
                "--citation",
                "A. Lab",
                "--url",
                "https://a.example",
            ]
            code, out, root = import_into(tmp_path, tool, str(path), "--id", f"2026-01-01-fixture-{count}", *options)
            assert code == 0, (path.name, out)
    code, out = check(root)
    assert code == 0 and out.strip() == f"{count} runs, 0 reports, 0 claims: no problems", out  # not a warning
