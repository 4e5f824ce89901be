"""`benchledger import guidellm`: GuideLLM reports (JSON and YAML) become run folders that
check and build. Fixture shapes: tests/fixtures/guidellm/SOURCES.md. GuideLLM is not run
live: it pulls torch and wants a tokenizer from a model hub, which CI cannot reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import csv_rows, import_into

FIXTURES = Path(__file__).parent / "fixtures" / "guidellm"
REPORTS = ["concurrent-pass1.json", "concurrent-pass2.json"]


def imported(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    return import_into(tmp_path, "guidellm", *args)


def report(name: str) -> dict[str, object]:
    found = json.loads((FIXTURES / name).read_text())
    assert isinstance(found, dict)
    return found


def test_each_benchmark_is_one_pass_at_its_concurrency(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in REPORTS), "--id", "2026-11-30-guide")
    assert code == 0, out
    run = root / "runs" / "2026-11-30-guide"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["concurrency"] and meta["trial_unit"] == "session" and meta["date"] == "2026-11-30"
    assert list(meta["metrics"]) == [
        "requests_per_second_mean",
        "output_tokens_per_second_mean",
        "tokens_per_second_mean",
        "time_to_first_token_ms_mean",
        "time_to_first_token_ms_median",
        "time_to_first_token_ms_p99",
        "inter_token_latency_ms_mean",
        "inter_token_latency_ms_median",
        "inter_token_latency_ms_p99",
        "time_per_output_token_ms_mean",
        "time_per_output_token_ms_median",
        "time_per_output_token_ms_p99",
        "request_latency_mean",
        "request_latency_median",
        "request_latency_p99",
    ]
    assert meta["metrics"]["request_latency_p99"] == {"unit": "s", "better": "lower"}
    table = csv_rows(run / "results.csv")
    assert [(r["trial"], r["concurrency"]) for r in table] == [("1", "1"), ("1", "4"), ("2", "1"), ("2", "4")]
    benches = [b for n in REPORTS for b in report(n)["benchmarks"]]  # type: ignore[attr-defined]
    expected = [b["metrics"]["output_tokens_per_second"]["successful"]["mean"] for b in benches]
    assert [float(r["output_tokens_per_second_mean"]) for r in table] == pytest.approx(expected, rel=1e-5)
    p99 = benches[1]["metrics"]["time_to_first_token_ms"]["successful"]["percentiles"]["p99"]
    assert float(table[1]["time_to_first_token_ms_p99"]) == pytest.approx(p99, rel=1e-5)
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["software"] == {"client": "guidellm", "guidellm": "0.6.0", "python": "3.12.3", "platform": "Linux"}
    assert manifest["model"] == {"name": "Qwen/Qwen3-0.6B"} and manifest["load"] == {"target": "http://localhost:8000"}
    assert "Trial 1 at concurrency=4: of 7 requests, 1 errored" in out
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def test_kept_requests_become_requests_csv_in_start_order_with_errors(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in REPORTS), "--id", "2026-11-30-guide")
    assert code == 0, out
    requests = csv_rows(root / "runs" / "2026-11-30-guide" / "requests.csv")
    assert len(requests) == 25  # 6 + (6 + 1 errored) + 6 + 6
    first = report(REPORTS[0])["benchmarks"][0]["requests"]["successful"][0]  # type: ignore[index]
    assert requests[0]["start_s"] == "0" and requests[0]["output_tokens"] == "64"
    assert float(requests[0]["ttft_s"]) == pytest.approx(first["time_to_first_token_ms"] / 1000, rel=1e-5)
    assert float(requests[0]["latency_s"]) == pytest.approx(first["request_latency"], rel=1e-5)
    errored = [r for r in requests if r["error"]]
    assert [(r["trial"], r["concurrency"], r["request"], r["latency_s"]) for r in errored] == [("1", "4", "5", "")]
    assert errored[0]["error"].startswith("HTTPStatusError: Server error '503 Service Unavailable'")
    assert "a sample; see --sample-requests" in out


def test_a_yaml_sweep_names_each_strategy_and_its_load(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "sweep.yaml"), "--id", "2026-11-30-sweep")
    assert code == 0, out
    run = root / "runs" / "2026-11-30-sweep"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["strategy", "load"]
    table = csv_rows(run / "results.csv")
    assert [(r["strategy"], r["load"]) for r in table] == [
        ("synchronous", "1 stream"),
        ("throughput", "max"),
        ("constant", "2.375 req/s"),
        ("constant", "4.1875 req/s"),
    ]
    assert "streams for concurrent and synchronous runs, requests per second" in meta["notes"]
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0


def test_a_report_holding_an_api_key_is_refused_and_a_redacted_one_accepted(tmp_path: Path) -> None:
    leaked = report(REPORTS[0])
    leaked["args"]["backend_kwargs"]["api_key"] = "sk-live-1234"  # type: ignore[index]
    bad = tmp_path / "leaked.json"
    bad.write_text(json.dumps(leaked))
    code, out, root = imported(tmp_path, str(bad), "--id", "2026-11-30-leak")
    assert code == 1 and "$.args.backend_kwargs.api_key: holds a credential" in out, out
    assert "sk-live-1234" not in out and not (root / "runs" / "2026-11-30-leak").exists()
    leaked["args"]["backend_kwargs"]["api_key"] = "***REDACTED***"  # type: ignore[index]
    bad.write_text(json.dumps(leaked))
    code, out, _ = imported(tmp_path, str(bad), "--id", "2026-11-30-leak")
    assert code == 0, out


ONE = report(REPORTS[0])
BENCH = ONE["benchmarks"][0]  # type: ignore[index]


def with_bench(**changes: object) -> str:
    return json.dumps(ONE | {"benchmarks": [BENCH | changes]})


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", "{", "is not a GuideLLM JSON report"),
        ("bad.json", '{"benchmarks": []}', "$.benchmarks: expected the list of benchmarks GuideLLM writes"),
        ("bad.json", with_bench(config={}), "$.benchmarks[0].config.strategy.type_: expected the load strategy"),
        (
            "bad.json",
            with_bench(config={"strategy": {"type_": "concurrent"}}),
            "$.benchmarks[0].config.strategy: a concurrent strategy without its streams",
        ),
        (
            "bad.json",
            with_bench(metrics={"tokens_per_second": {"successful": {"mean": -3}}}),
            "$.benchmarks[0].metrics.tokens_per_second.successful.mean: '-3' is not a number >= 0",
        ),
        ("bad.json", with_bench(metrics={}), "no summary GuideLLM writes"),
        (
            "bad.json",
            with_bench(requests={"successful": [{"request_latency": "slow"}]}),
            "$.benchmarks[0].requests.successful[0].request_latency: expected a number >= 0",
        ),
        ("bad.yaml", "a: &a [*a]\n", "bad.yaml:1: nested more than 32 levels deep"),
        ("bad.yaml", "benchmarks: !!python/object:os.system {}\n", "only plain YAML is read"),
    ],
)
def test_malformed_reports_are_one_located_error(tmp_path: Path, name: str, content: str, message: str) -> None:
    bad = tmp_path / name
    bad.write_text(content)
    code, out, root = imported(tmp_path, str(bad), "--id", "2026-11-30-bad")
    assert code == 1 and message in out, out
    assert not (root / "runs" / "2026-11-30-bad").exists()
