"""`benchledger import pytest-benchmark`: real exports (tests/fixtures/pytest-benchmark/SOURCES.md)
and a live benchmark become run folders that check and build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import csv_rows, import_into

FIXTURES = Path(__file__).parent / "fixtures" / "pytest-benchmark"


def imported(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    return import_into(tmp_path, "pytest-benchmark", *args)


def test_saved_rounds_become_trials_and_parameters_conditions(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "sort-rounds.json"), "--id", "2026-11-30-sort")
    assert code == 0, out
    run = root / "runs" / "2026-11-30-sort"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["size"] and meta["trial_unit"] == "repetition" and meta["date"] == "2026-11-30"
    source = json.loads((FIXTURES / "sort-rounds.json").read_text())["benchmarks"]
    table = csv_rows(run / "results.csv")
    assert [(r["trial"], r["size"]) for r in table] == [(str(t), s) for s in ("1000", "10000") for t in range(1, 6)]
    assert [float(r["seconds"]) for r in table[:5]] == pytest.approx(source[0]["stats"]["data"], rel=1e-5)
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["host"]["cores"] == 2 and manifest["software"]["python"] == "3.11.7"
    assert manifest["software"]["commit"] == "unversioned" and "flags" not in json.dumps(manifest)
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def test_a_summary_export_becomes_published_summaries(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "sort-summary.json"), "--id", "2026-11-30-sum")
    assert code == 1 and "holds no per-trial values, so it becomes a reported run" in out
    code, out, root = imported(
        tmp_path, str(FIXTURES / "sort-summary.json"), "--id", "2026-11-30-sum", "--citation", "CI"
    )
    assert code == 0, out
    source = json.loads((FIXTURES / "sort-summary.json").read_text())["benchmarks"]
    table = csv_rows(root / "runs" / "2026-11-30-sum" / "results.csv")
    assert [(r["trial"], r["size"], r["seconds.n"]) for r in table] == [("", "1000", "5"), ("", "10000", "5")]
    assert float(table[0]["seconds"]) == pytest.approx(source[0]["stats"]["mean"], rel=1e-5)
    assert float(table[0]["seconds.sd"]) == pytest.approx(source[0]["stats"]["stddev"], rel=1e-5)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("nope", "is not a pytest-benchmark export"),
        ('{"benchmarks": {}}', "$.benchmarks: expected the list --benchmark-json writes"),
        (
            '{"benchmarks": [{"name": "t", "stats": {"mean": 1, "stddev": 0, "rounds": 0}}]}',
            "$.benchmarks[0].stats.rounds",
        ),
        (
            '{"benchmarks": [{"name": "t", "stats": {"mean": -1, "stddev": 0, "rounds": 2}}]}',
            "$.benchmarks[0].stats.mean",
        ),
        (
            '{"benchmarks": [{"name": "t", "stats": {"mean": 1, "stddev": 0, "rounds": 2, "data": [1, -1]}}]}',
            "stats.data",
        ),
    ],
)
def test_malformed_exports_are_one_located_error(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, root = imported(tmp_path, str(bad), "--id", "2026-11-30-bad", "--citation", "x")
    assert code == 1 and message in out, out
    assert not (root / "runs" / "2026-11-30-bad").exists()


def test_a_live_benchmark_imports_and_builds(tmp_path: Path) -> None:
    pytest.importorskip("pytest_benchmark", reason="pip install pytest-benchmark")
    (tmp_path / "test_live.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('n', [10, 100])\n"
        "def test_sum(benchmark, n):\n    benchmark(sum, range(n))\n"
    )
    export = tmp_path / "live.json"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_live.py")]
    command += [
        f"--benchmark-json={export}",
        "--benchmark-save-data",
        "--benchmark-min-rounds=5",
        "--benchmark-max-time=0.00001",
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=300, cwd=tmp_path)
    code, out, root = imported(tmp_path, str(export), "--id", "2026-11-30-live")
    assert code == 0, out
    table = csv_rows(root / "runs" / "2026-11-30-live" / "results.csv")
    assert {r["n"] for r in table} == {"10", "100"} and len(table) >= 10
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


STORAGE = [f"storage-{n}.json" for n in ("0028", "0029", "0030")]
CITE = ("--citation", "pytest-benchmark's test data", "--url", "https://github.com/ionelmc/pytest-benchmark")


def test_a_summary_of_rounds_in_one_process_says_repetition(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "storage-0030.json"), "--id", "2015-08-15-one", *CITE)
    assert code == 0, out
    assert "mean, SD and rounds (9,710), not the rounds themselves" in out
    assert "n counts repetitions, not independent runs (trial_unit: repetition): intervals may be too narrow" in out
    run = root / "runs" / "2015-08-15-one"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["trial_unit"] == "repetition" and meta["source"]["kind"] == "reported"
    assert csv_rows(run / "results.csv") == [
        {
            "trial": "",
            "benchmark": "test_xfast_parametrized[0]",
            "seconds": "2.61205074138546e-07",
            "seconds.sd": "2.639842188231226e-07",
            "seconds.n": "9710",
        }
    ]
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["machine_info"] == {"processor": "x86_64", "python_compiler": "GCC 4.6.3"}
    assert manifest["software"]["commit"] == "5b78858eb718649a31fb93d8dc96ca2cee41a4cd"
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0


def test_several_summary_exports_are_one_process_each(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in STORAGE), "--id", "2015-08-15-three")
    assert code == 0, out
    assert "Each of the 3 exports is one pytest process: its mean is one trial (trial_unit: process)" in out
    run = root / "runs" / "2015-08-15-three"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["trial_unit"] == "process" and meta["source"] == {"kind": "measured"}
    assert meta["date"] == "2015-08-15"
    assert [(r["trial"], r["seconds"]) for r in csv_rows(run / "results.csv")] == [
        ("1", "2.5225501594359257e-07"),
        ("2", "2.5172336199924715e-07"),
        ("3", "2.61205074138546e-07"),
    ]
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0


JENKINS = FIXTURES / "storage-jenkins-0002.json"


def test_exports_from_two_machines_are_refused_naming_both(tmp_path: Path) -> None:
    """pytest-benchmark's own saved runs come from two machines (minibox, jenkins): never one run."""
    files = [str(FIXTURES / "storage-0028.json"), str(JENKINS)]
    code, out, root = imported(tmp_path, *files, "--id", "2015-08-15-two", *CITE)
    assert code == 1 and out == (
        "Error: storage-jenkins-0002.json: comes from another machine than storage-0028.json: jenkins (Linux "
        "3.13.0-53-generic), not minibox (Linux 3.13.0-55-generic); a run is measured on one machine, so import each "
        "machine's results as its own run, or give --split-by machine to write one run per machine\n"
    )
    assert not (root / "runs" / "2015-08-15-two").exists()


def test_split_by_machine_writes_one_run_per_machine_with_its_own_machine_info(tmp_path: Path) -> None:
    files = [str(FIXTURES / n) for n in (*STORAGE, JENKINS.name)]
    code, out, root = imported(tmp_path, *files, "--id", "2015-08-15-split", "--split-by", "machine", *CITE)
    assert code == 0, out
    assert "Machine: minibox (Linux 3.13.0-55-generic) (storage-0028.json, storage-0029.json, storage-0030.json)" in out
    assert "Machine: jenkins (Linux 3.13.0-53-generic) (storage-jenkins-0002.json)" in out
    runs = root / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["2015-08-15-split-1", "2015-08-15-split-2"]
    minibox = yaml.safe_load((runs / "2015-08-15-split-1" / "manifest.yaml").read_text())
    jenkins = yaml.safe_load((runs / "2015-08-15-split-2" / "manifest.yaml").read_text())
    assert minibox["host"]["name"] == "minibox" and jenkins["host"] == {
        "name": "jenkins",
        "os": "Linux 3.13.0-53-generic",
        "arch": "x86_64",
    }
    assert yaml.safe_load((runs / "2015-08-15-split-1" / "run.yaml").read_text())["trial_unit"] == "process"
    assert [r["seconds"] for r in csv_rows(runs / "2015-08-15-split-2" / "results.csv")] == ["20.1440749168396"]
    assert sorted(p.name for p in (runs / "2015-08-15-split-2" / "raw").iterdir()) == ["storage-jenkins-0002.json"]
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0
    result = CliRunner().invoke(app, ["import", "pytest-benchmark", *files, "--id", "x", "--split-by", "host"])
    assert result.exit_code == 1 and "--split-by 'host': the one way to split an import is --split-by machine" in (
        result.output
    )


def test_errors_cite_the_line_of_the_export_the_user_gave(tmp_path: Path) -> None:
    """pytest-benchmark's own saved run with its mean blanked: the error names line 32, once."""
    text = (FIXTURES / "storage-0028.json").read_text()
    bad = tmp_path / "0028.json"
    bad.write_text(text.replace('"mean": 2.5225501594359257e-07', '"mean": null', 1))
    code, out, root = imported(tmp_path, str(bad), "--id", "2015-08-15-bad", *CITE)
    assert code == 1 and out == "Error: 0028.json:32: $.benchmarks[0].stats.mean: expected a number of seconds\n"
    assert not (root / "runs" / "2015-08-15-bad").exists()


def test_two_benchmarks_of_one_name_are_refused_naming_the_file_and_both_places(tmp_path: Path) -> None:
    first = tmp_path / "a" / "sort-rounds.json"
    first.parent.mkdir()
    first.write_text((FIXTURES / "sort-rounds.json").read_text().replace("09:30:55", "09:31:55"))  # a second export
    code, out, _ = imported(tmp_path, str(FIXTURES / "sort-rounds.json"), str(first), "--id", "2026-11-30-twice")
    assert code == 1 and out == (
        "Error: sort-rounds-2.json:180: $.benchmarks[0].name: 'test_sort[1000]' is named twice (first at "
        "sort-rounds.json $.benchmarks[0]); import the two as separate runs\n"
    )
