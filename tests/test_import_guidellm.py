"""`benchledger import guidellm`: GuideLLM reports (JSON and YAML) become run folders that
check and build. Fixture shapes: tests/fixtures/guidellm/SOURCES.md. GuideLLM is not run
live: it pulls torch and wants a tokenizer from a model hub, which CI cannot reach."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import csv_rows, generate, import_into

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
        "requests_successful",
        "requests_errored",
        "requests_incomplete",
    ]
    assert meta["metrics"]["request_latency_p99"] == {"unit": "s", "better": "lower"}
    assert meta["metrics"]["requests_errored"] == {"unit": "requests", "better": "lower"}
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


STRIPPED = FIXTURES / "guidellm-stripped.yaml"  # GuideLLM's own 0.2/0.3 report (tests/fixtures/guidellm/SOURCES.md)
GPT_OSS = FIXTURES / "gpt-oss-20b-sync.json"  # 0.5: 2 warm-up, 25 measured, 3 cool-down requests kept
QWEN = FIXTURES / "qwen3-30b-sync.json"  # 0.5: a cancelled request in the cool-down, 5 cancelled in all


def test_an_older_report_notes_its_incomplete_request_and_names_its_model_and_target(tmp_path: Path) -> None:
    """0.2 and 0.3 keep request_totals on the benchmark and the model under worker: both were lost."""
    code, out, root = imported(tmp_path, str(STRIPPED), "--id", "2025-06-05-stripped")
    assert code == 0, out
    assert (
        "Note: Trial 1 at strategy=synchronous, load=1 stream: of 47 requests, 1 incomplete "
        "(guidellm-stripped.yaml $.benchmarks[0]).\n"
    ) in out
    run = root / "runs" / "2025-06-05-stripped"
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["model"] == {"name": "example_model"} and manifest["load"] == {"target": "example_target"}
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["metrics"]["requests_incomplete"] == {"unit": "requests", "better": "lower"}
    assert meta["metrics"]["requests_successful"] == {"unit": "requests"}
    [row] = csv_rows(run / "results.csv")
    assert (row["requests_successful"], row["requests_errored"], row["requests_incomplete"]) == ("46", "0", "1")
    assert row["time_to_first_token_ms_mean"] == "16.792535781860348" and row["request_latency_p99"] == (
        "0.6891846656799316"
    )
    assert "of 47 requests, 1 incomplete" in meta["notes"]
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def test_warm_up_and_cool_down_requests_are_marked_and_left_out_of_the_statistics(tmp_path: Path) -> None:
    """GuideLLM 0.4+ keeps every request; its statistics cover those inside its measurement window."""
    from generator.render.text import number

    code, out, root = imported(tmp_path, str(GPT_OSS), "--id", "2026-03-02-gpt-oss")
    assert code == 0, out
    run = root / "runs" / "2026-03-02-gpt-oss"
    requests = csv_rows(run / "requests.csv")
    assert [r["phase"] for r in requests] == ["warmup"] * 2 + ["measured"] * 25 + ["cooldown"] * 3
    assert [r["request"] for r in requests] == [str(i) for i in range(1, 31)]
    [row] = csv_rows(run / "results.csv")
    assert (row["requests_successful"], row["requests_errored"], row["requests_incomplete"]) == ("25", "0", "0")
    assert (
        "Note: Trial 1 at strategy=synchronous, load=1 stream: of 30 requests made in the whole pass, GuideLLM's "
        "statistics cover 25: the others ran in its warm-up or cool-down (gpt-oss-20b-sync.json $.benchmarks[0]).\n"
    ) in out
    measured = [float(r["latency_s"]) for r in requests if r["phase"] == "measured"]
    every = [float(r["latency_s"]) for r in requests]
    shown = " / ".join(number(float(v), 3) for v in np.percentile(measured, [50, 90, 99]))
    assert shown != " / ".join(number(float(v), 3) for v in np.percentile(every, [50, 90, 99]))
    page = html.unescape(re.sub(r"<td[^>]*>", "<td>", generate(root)["runs/2026-03-02-gpt-oss/index.md"].decode()))
    assert "<td>25 measured (5 warm-up/cool-down left out)</td><td>0</td>" in page
    assert f"<td>{shown}</td></tr>" in page
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def test_a_cancelled_request_keeps_the_error_guidellm_recorded_and_every_cancellation_is_counted(
    tmp_path: Path,
) -> None:
    code, out, root = imported(tmp_path, str(QWEN), "--id", "2026-03-02-qwen")
    assert code == 0, out
    requests = csv_rows(root / "runs" / "2026-03-02-qwen" / "requests.csv")
    assert len(requests) == 24
    last = requests[-1]
    assert (last["request"], last["error"], last["phase"], last["latency_s"]) == (
        "24",
        "incomplete: Request was cancelled",
        "cooldown",
        "",
    )
    assert [r["phase"] for r in requests].count("measured") == 19
    assert (
        "of 25 requests made in the whole pass (2 incomplete), GuideLLM's statistics cover 19: the others ran in "
        "its warm-up or cool-down; 5 cancelled by GuideLLM's scheduler when the pass ended "
        "(qwen3-30b-sync.json $.benchmarks[0])."
    ) in out


def test_reports_of_two_models_become_a_model_condition_never_pooled_trials(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(QWEN), str(GPT_OSS), "--id", "2026-03-02-models")
    assert code == 0, out
    run = root / "runs" / "2026-03-02-models"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["model", "strategy", "load"]
    rows = csv_rows(run / "results.csv")
    assert [(r["trial"], r["model"], r["requests_successful"]) for r in rows] == [
        ("1", "Qwen/Qwen3-30B-A3B", "19"),
        ("1", "openai/gpt-oss-20b", "25"),
    ]
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert "model" not in manifest and manifest["load"] == {"target": "http://0.0.0.0:8000"}
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0


def test_reports_against_two_servers_are_refused_naming_both_or_split(tmp_path: Path) -> None:
    files = [str(GPT_OSS), str(STRIPPED)]
    code, out, root = imported(tmp_path, *files, "--id", "2026-03-02-two")
    assert code == 1 and out == (
        "Error: guidellm-stripped.yaml: comes from another machine than gpt-oss-20b-sync.json: example_target, not "
        "localhost (Linux-6.14.0-1011-intel-x86_64-with-glibc2.39); a run is measured on one machine, so import each "
        "machine's results as its own run, or give --split-by machine to write one run per machine\n"
    )
    assert not (root / "runs" / "2026-03-02-two").exists()
    code, out, root = imported(tmp_path, *files, "--id", "2026-03-02-two", "--split-by", "machine")
    assert code == 0, out
    assert "Machine: localhost (Linux-6.14.0-1011-intel-x86_64-with-glibc2.39) (gpt-oss-20b-sync.json)" in out
    assert "Machine: example_target (guidellm-stripped.yaml)" in out
    second = yaml.safe_load((root / "runs" / "2026-03-02-two-2" / "manifest.yaml").read_text())
    assert second["model"] == {"name": "example_model"}


def test_errors_cite_the_line_of_the_report_the_user_gave(tmp_path: Path) -> None:
    """A YAML report's error names its line, and the layout it read (0.2/0.3: args.strategy)."""
    old = STRIPPED.read_text().replace("    strategy:\n      type_: synchronous\n", "    strategy: {}\n", 1)
    (tmp_path / "old.yaml").write_text(old)
    code, out, _ = imported(tmp_path, str(tmp_path / "old.yaml"), "--id", "2026-03-02-bad")
    assert code == 1 and out == (
        "Error: old.yaml:24: $.benchmarks[0].args.strategy.type_: expected the load strategy GuideLLM records "
        "(synchronous, concurrent, throughput, constant, poisson)\n"
    )
    report = json.loads(GPT_OSS.read_text())  # GuideLLM writes JSON on one line: the path alone locates a value
    report["benchmarks"][0]["requests"]["successful"][0]["request_latency"] = "slow"
    (tmp_path / "gpt-oss.json").write_text(json.dumps(report))
    code, out, _ = imported(tmp_path, str(tmp_path / "gpt-oss.json"), "--id", "2026-03-02-bad")
    assert code == 1 and out == (
        "Error: gpt-oss.json: $.benchmarks[0].requests.successful[0].request_latency: expected a number >= 0\n"
    )


def test_check_refuses_a_phase_it_does_not_know_naming_the_line(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(GPT_OSS), "--id", "2026-03-02-phase")
    assert code == 0, out
    path = root / "runs" / "2026-03-02-phase" / "requests.csv"
    path.write_text(path.read_text().replace(",warmup\n", ",warm-up\n", 1))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert (
        result.exit_code == 1
        and (
            "runs/2026-03-02-phase/requests.csv:2: phase: 'warm-up' is not a phase; write warmup, measured or cooldown "
            "(empty means measured)"
        )
        in result.output
    ), result.output
