"""`benchledger import vllm-bench`: saved results of `vllm bench serve` (and the older
benchmark_serving.py) become run folders that check and build. Fixture shapes:
tests/fixtures/vllm-bench/SOURCES.md. vLLM is not run live (it needs a GPU server)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import csv_rows, import_into

FIXTURES = Path(__file__).parent / "fixtures" / "vllm-bench"
PASSES = ["serve-c1-pass1.json", "serve-c1-pass2.json", "serve-c4-pass1.json", "serve-c4-summary.json"]


def imported(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    return import_into(tmp_path, "vllm-bench", *args)


def source(name: str) -> dict[str, object]:
    found = json.loads((FIXTURES / name).read_text())
    assert isinstance(found, dict)
    return found


def test_each_saved_result_is_one_trial_at_its_traffic(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in PASSES), "--id", "2026-11-30-vllm")
    assert code == 0, out
    run = root / "runs" / "2026-11-30-vllm"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate", "max_concurrency"]
    assert meta["trial_unit"] == "session" and meta["date"] == "2026-11-30" and meta["source"] == {"kind": "measured"}
    assert list(meta["metrics"])[:4] == [
        "request_throughput",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
    ]
    assert meta["metrics"]["p99_ttft_ms"] == {"unit": "ms", "better": "lower"}
    assert "std_ttft_ms" not in meta["metrics"]
    assert meta["metrics"]["completed"] == {"unit": "requests", "better": "higher"}  # counts of work are metrics
    assert meta["metrics"]["failed"] == {"unit": "requests", "better": "lower"}
    table = csv_rows(run / "results.csv")
    assert [(r["trial"], r["request_rate"], r["max_concurrency"]) for r in table] == [
        ("1", "inf", "1"),
        ("2", "inf", "1"),
        ("1", "inf", "4"),
        ("2", "inf", "4"),
    ]
    expected = [source(n)["request_throughput"] for n in PASSES]
    assert [float(r["request_throughput"]) for r in table] == pytest.approx(expected, rel=1e-5)
    assert float(table[2]["p99_ttft_ms"]) == pytest.approx(source(PASSES[2])["p99_ttft_ms"], rel=1e-5)
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["model"] == {"name": "Qwen/Qwen3-0.6B"}
    assert manifest["software"] == {"client": "vllm bench serve", "backend": "openai", "endpoint_type": "openai"}
    assert manifest["load"] == {"burstiness": 1.0, "num_prompts": 6, "tokenizer_id": "Qwen/Qwen3-0.6B"}
    assert "Trial 2 at request_rate=inf, max_concurrency=1: 1 of 6 requests failed (serve-c1-pass2.json)." in out
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def test_save_detailed_requests_become_requests_csv(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in PASSES), "--id", "2026-11-30-vllm")
    assert code == 0, out
    requests = csv_rows(root / "runs" / "2026-11-30-vllm" / "requests.csv")
    assert list(requests[0]) == [
        "trial",
        "request_rate",
        "max_concurrency",
        "request",
        "start_s",
        "ttft_s",
        "latency_s",
        "output_tokens",
        "error",
    ]
    assert len(requests) == 18  # 6 per detailed pass; the summary-only pass has none
    first = source(PASSES[0])
    assert float(requests[0]["ttft_s"]) == pytest.approx(first["ttfts"][0], rel=1e-5)  # type: ignore[index]
    assert float(requests[0]["latency_s"]) == pytest.approx(first["latencies"][0], rel=1e-5)  # type: ignore[index]
    assert requests[0]["start_s"] == "0" and requests[0]["output_tokens"] == "32"
    failed = requests[10]
    assert (failed["trial"], failed["request"], failed["ttft_s"], failed["latency_s"]) == ("2", "5", "", "")
    assert failed["error"].endswith("ServerDisconnectedError: Server disconnected")


def test_the_older_benchmark_serving_script_and_its_missing_latencies(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "benchmark-serving-legacy.json"), "--id", "2024-06-10-old")
    assert code == 0, out
    run = root / "runs" / "2024-06-10-old"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate"] and meta["date"] == "2024-06-10"
    assert "mean_e2el_ms" not in meta["metrics"] and "total_token_throughput" not in meta["metrics"]
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["software"] == {"client": "vllm bench serve", "backend": "vllm", "backend_version": "N/A"}
    assert manifest["load"] == {
        "num_prompts": 6,
        "tokenizer_id": "Qwen/Qwen3-0.6B",
        "best_of": 1,
        "use_beam_search": False,
    }
    assert "metadata" not in manifest
    old = source("benchmark-serving-legacy.json")
    requests = csv_rows(run / "requests.csv")
    expected = old["ttfts"][0] + sum(old["itls"][0])  # type: ignore[index]
    assert float(requests[0]["latency_s"]) == pytest.approx(expected, rel=1e-5)
    assert requests[0]["start_s"] == "" and requests[0]["request_rate"] == "2"
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0


def test_append_result_lines_are_passes_and_differing_metadata_is_a_condition(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "append-draft.jsonl"), "--id", "2026-11-30-draft")
    assert code == 0, out
    run = root / "runs" / "2026-11-30-draft"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate", "max_concurrency", "draft"]
    table = csv_rows(run / "results.csv")
    assert [(r["trial"], r["draft"]) for r in table] == [("1", "none"), ("1", "ngram")]
    assert not (run / "requests.csv").exists()
    assert "no per-request data (vLLM writes it with --save-detailed)" in meta["notes"]


def test_a_pretty_printed_result_is_one_pass_not_lines(tmp_path: Path) -> None:
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(source(PASSES[0]), indent=2))
    code, out, root = imported(tmp_path, str(pretty), "--id", "2026-11-30-pretty")
    assert code == 0, out
    table = csv_rows(root / "runs" / "2026-11-30-pretty" / "results.csv")
    assert len(table) == 1 and float(table[0]["request_throughput"]) == pytest.approx(
        source(PASSES[0])["request_throughput"], rel=1e-5
    )


def test_republished_results_carry_their_citation_to_the_page(tmp_path: Path) -> None:
    code, out, root = imported(
        tmp_path,
        str(FIXTURES / PASSES[0]),
        "--id",
        "2026-11-30-theirs",
        "--citation",
        "A. Lab, serving sweep",
        "--url",
        "https://example.org/sweep",
    )
    assert code == 0, out
    meta = yaml.safe_load((root / "runs" / "2026-11-30-theirs" / "run.yaml").read_text())
    assert meta["source"] == {
        "kind": "republished",
        "citation": "A. Lab, serving sweep",
        "url": "https://example.org/sweep",
    }
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0
    page = html.unescape(
        re.sub("<[^>]+>", "", (root / "site" / "runs" / "2026-11-30-theirs" / "index.html").read_text())
    )
    assert "measured by A. Lab, serving sweep (source: https://example.org/sweep) and copied here" in page


def test_speculative_decoding_counts_become_an_acceptance_rate(tmp_path: Path) -> None:
    spec = {
        "spec_decode_acceptance_rate": 72.2,
        "spec_decode_acceptance_length": 3.1,
        "spec_decode_num_drafts": 50,
        "spec_decode_draft_tokens": 200,
        "spec_decode_accepted_tokens": 144,
    }
    passes = []
    for i, name in enumerate(PASSES[:2]):
        path = tmp_path / name
        path.write_text(json.dumps(source(name) | spec | {"spec_decode_accepted_tokens": 144 - 10 * i}))
        passes.append(str(path))
    code, out, root = imported(tmp_path, *passes, "--id", "2026-11-30-spec")
    assert code == 0, out
    meta = yaml.safe_load((root / "runs" / "2026-11-30-spec" / "run.yaml").read_text())
    assert meta["rates"] == {
        "acceptance": {"numerator": "spec_decode_accepted_tokens", "denominator": "spec_decode_draft_tokens"}
    }
    assert "spec_decode_acceptance_rate" not in meta["metrics"]
    assert meta["metrics"]["spec_decode_acceptance_length"] == {"unit": "tokens", "better": "higher"}
    assert meta["metrics"]["spec_decode_draft_tokens"] == {"unit": "tokens"}
    table = csv_rows(root / "runs" / "2026-11-30-spec" / "results.csv")
    assert [r["spec_decode_accepted_tokens"] for r in table] == ["144", "134"]
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


DETAILED = json.loads((FIXTURES / "serve-c1-pass1.json").read_text())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not a vLLM serving-benchmark result (JSON)"),
        ('{"model_id": "x"}', "$.request_throughput: has no request_throughput (nor duration, nor ttfts)"),
        ('{"duration": 3, "completed": 2}', "no throughput or latency figure in any file"),
        ('{"request_throughput": -1}', "$.request_throughput: '-1' is not a number >= 0"),
        (json.dumps(DETAILED | {"itls": DETAILED["itls"][:2]}), "$.itls: expected a list of 6 per-request values"),
        (json.dumps(DETAILED | {"ttfts": [0.1, -2, 0.1, 0.1, 0.1, 0.1]}), "$.ttfts[1]: expected a number >= 0"),
        ('{"request_throughput": 1}\n[1, 2]', "line 2: is a JSON list; expected the object"),
    ],
)
def test_malformed_results_are_one_located_error(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, root = imported(tmp_path, str(bad), "--id", "2026-11-30-bad")
    assert code == 1 and message in out, out
    assert not (root / "runs" / "2026-11-30-bad").exists()


def test_metadata_that_cannot_name_a_column_is_refused_when_it_differs(tmp_path: Path) -> None:
    one, two = tmp_path / "a.json", tmp_path / "b.json"
    one.write_text(json.dumps({"request_throughput": 1.0, "gpu type": "A"}))
    two.write_text(json.dumps({"request_throughput": 2.0, "gpu type": "B"}))
    code, out, _ = imported(tmp_path, str(one), str(two), "--id", "2026-11-30-bad")
    assert code == 1 and "'gpu type' differs between files but cannot name a column" in out, out


SWEEP = [f"er0080-sweep-seqs{s}-run{r}.json" for s in (4, 8) for r in (0, 1)]


def test_a_real_sweep_keeps_its_server_setting_as_a_condition(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in SWEEP), "--id", "2026-08-18-sweep")
    assert code == 0, out
    run = root / "runs" / "2026-08-18-sweep"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate", "max_concurrency", "max_num_seqs"]
    assert meta["date"] == "2026-08-18" and "p99_e2el_ms" in meta["metrics"]
    table = csv_rows(run / "results.csv")
    assert [(r["trial"], r["max_num_seqs"], r["request_throughput"], r["max_output_tokens_per_s"]) for r in table] == [
        ("1", "4", "5.859229976904171", "75"),
        ("2", "4", "12.460566958863927", "128"),
        ("1", "8", "11.950037467159987", "128"),
        ("2", "8", "11.655203989668882", "128"),
    ]
    assert table[0]["p99_e2el_ms"] == "876.8009717071254"  # every digit vLLM wrote
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["model"] == {"name": "facebook/opt-125m"}
    assert manifest["load"] == {"burstiness": 1.0, "num_prompts": 8, "tokenizer_id": "facebook/opt-125m"}
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 0, result.output


def test_a_pass_where_every_request_failed_is_refused_never_zeros(tmp_path: Path) -> None:
    files = [str(FIXTURES / "er0080-all-failed.json"), str(FIXTURES / "er0080-serve-c2.json")]
    code, out, root = imported(tmp_path, *files, "--id", "2026-08-18-failed")
    assert code == 1 and out.startswith("Error: er0080-all-failed.json: $.completed: all 8 of its requests failed")
    assert "its latencies and throughputs (written as 0) measured nothing" in out
    assert "import the other files without this one" in out
    assert not (root / "runs" / "2026-08-18-failed").exists()


def test_passes_with_different_metric_sets_are_refused_with_the_difference(tmp_path: Path) -> None:
    files = [str(FIXTURES / "er0080-serve-c2.json"), str(FIXTURES / "er0080-sweep-seqs4-run0.json")]
    code, out, root = imported(tmp_path, *files, "--id", "2026-08-18-mixed")
    assert code == 1
    assert out.startswith(
        "Error: er0080-serve-c2.json: $.mean_e2el_ms: lacks mean_e2el_ms, median_e2el_ms, p99_e2el_ms, which "
        "er0080-sweep-seqs4-run0.json reports"
    )
    assert "--percentile-metrics" in out and not (root / "runs" / "2026-08-18-mixed").exists()
    code, out, _ = imported(tmp_path, str(FIXTURES / "er0080-serve-c2.json"), "--id", "2026-08-16-alone")
    assert code == 0, out


def test_a_local_model_path_is_reduced_to_its_name(tmp_path: Path) -> None:
    local = tmp_path / "local.json"
    text = (FIXTURES / "er0080-serve-c2.json").read_text()
    local.write_text(text.replace('"model_id": "facebook/opt-125m"', '"model_id": "/mnt/llm-models/opt-125m"'))
    code, out, root = imported(tmp_path, str(local), "--id", "2026-08-16-local")
    assert code == 0 and "Local paths were reduced to their file names (`opt-125m`)" in out, out
    manifest = yaml.safe_load((root / "runs" / "2026-08-16-local" / "manifest.yaml").read_text())
    assert manifest["model"] == {"name": "opt-125m"}
    assert '"/mnt/llm-models/opt-125m"' in (root / "runs" / "2026-08-16-local" / "raw" / "local.json").read_text()


LAMBDA = ["lambda-a100-llama3-8b-len2000.json", "lambda-a100-llama3-8b-len2048.json"]


def test_older_latency_names_are_end_to_end_latency_never_conditions(tmp_path: Path) -> None:
    """LambdaLabsML/vllm-benchmark (SOURCES.md): benchmark_serving.py of September 2024 wrote
    mean_latency_ms ... p99_latency_ms and input_throughput; they were conditions and lost."""
    code, out, root = imported(tmp_path, *(str(FIXTURES / n) for n in LAMBDA), "--id", "2024-09-07-lambda")
    assert code == 0, out
    run = root / "runs" / "2024-09-07-lambda"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate"]
    for name in ("mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms"):
        assert meta["metrics"][name] == {"unit": "ms", "better": "lower"}
    assert not {"mean_latency_ms", "std_latency_ms", "std_e2el_ms"} & set(meta["metrics"])
    assert meta["metrics"]["input_throughput"] == {"unit": "tok/s", "better": "higher"}
    table = csv_rows(run / "results.csv")
    assert [(r["trial"], r["mean_e2el_ms"], r["median_e2el_ms"], r["p99_e2el_ms"]) for r in table] == [
        ("1", "2407.0737529546022", "1420.5735865980387", "8329.030026607215"),
        ("2", "2403.991685435176", "1414.7179182618856", "8346.701536141338"),
    ]
    assert [(r["input_throughput"], r["completed"], r["failed"], r["duration"]) for r in table] == [
        ("159.80232932470813", "10", "0", "8.566833823919296"),
        ("159.4563488499396", "10", "0", "8.585421714931726"),
    ]
    assert (
        "mean_latency_ms, median_latency_ms, p99_latency_ms (the older benchmark_serving.py's end-to-end latency) "
        "are kept as mean_e2el_ms, median_e2el_ms, p99_e2el_ms, today's names for the same figures." in meta["notes"]
    )
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert "metadata" not in manifest and meta["date"] == "2024-09-07"
    requests = csv_rows(run / "requests.csv")
    assert len(requests) == 20 and not [r for r in requests if r["error"]]
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def test_an_unfinished_pass_of_an_older_writer_is_noted_and_counted_as_failed(tmp_path: Path) -> None:
    """nerdalert/vllm-benchmark-graphs (SOURCES.md): a pass completed 1,015 of 2,000 prompts; the
    writer has no `failed` key, and the pass read as complete."""
    code, out, root = imported(tmp_path, str(FIXTURES / "nerdalert-results.json"), "--id", "2025-04-14-graphs")
    assert code == 0, out
    run = root / "runs" / "2025-04-14-graphs"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate", "max_concurrency", "num_prompts", "framework"]
    assert meta["metrics"]["failed"] == {"unit": "requests", "better": "lower"}
    table = csv_rows(run / "results.csv")
    assert [(r["request_rate"], r["framework"], r["completed"], r["failed"]) for r in table if r["failed"] != "0"] == [
        ("inf", "vllm", "1015", "985"),
        ("inf", "sgl", "1015", "985"),
    ]
    assert len(table) == 12
    for line, framework in ((6, "vllm"), (12, "sgl")):
        assert (
            f"Trial 1 at request_rate=inf, max_concurrency=none, num_prompts=2000, framework={framework}: 985 of "
            f"2,000 prompts not completed (nerdalert-results.json line {line}); the file records no failures, so "
            "they are counted as failed, and its figures describe the 1,015 that completed."
        ) in meta["notes"]
    assert "request_goodput:" not in yaml.safe_load((run / "manifest.yaml").read_text()).get("metadata", {})
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 0 and "warning" not in result.output.lower(), result.output


def test_speculative_decoding_draft_count_is_kept(tmp_path: Path) -> None:
    """er0080/vllm-benchmarking (SOURCES.md): spec_decode_num_drafts was dropped."""
    code, out, root = imported(tmp_path, str(FIXTURES / "er0080-speculative.json"), "--id", "2026-08-23-spec")
    assert code == 0, out
    run = root / "runs" / "2026-08-23-spec"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["metrics"]["spec_decode_num_drafts"] == {"unit": "drafts"}
    assert meta["metrics"]["max_concurrent_requests"] == {"unit": "requests"}
    assert meta["rates"] == {
        "acceptance": {"numerator": "spec_decode_accepted_tokens", "denominator": "spec_decode_draft_tokens"}
    }
    (row,) = csv_rows(run / "results.csv")
    assert (row["spec_decode_num_drafts"], row["spec_decode_draft_tokens"], row["spec_decode_accepted_tokens"]) == (
        "1260",
        "3780",
        "2723",
    )
    assert (row["completed"], row["failed"], row["total_output_tokens"]) == ("8", "0", "3983")
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def _edited(tmp_path: Path, name: str, **changes: object) -> str:
    """A real fixture with some fields changed as the shapes below write them (the change is the test's)."""
    path = tmp_path / name
    path.write_text(json.dumps(source(name) | changes))
    return str(path)


def test_a_request_that_returned_no_token_is_an_error_not_a_measured_zero(tmp_path: Path) -> None:
    """vLLM keeps a request whose stream carried no token with TTFT 0 and output length 0 (and, before
    it marked them failed, no error text): such a request entered the latency distribution as 0 s."""
    old = source(LAMBDA[0])
    ttfts, lens, itls = list(old["ttfts"]), list(old["output_lens"]), list(old["itls"])  # type: ignore[call-overload]
    ttfts[7], lens[7], itls[7] = 0.0, 0, []
    edited = _edited(tmp_path, LAMBDA[0], ttfts=ttfts, output_lens=lens, itls=itls)
    code, out, root = imported(tmp_path, edited, "--id", "2024-09-07-empty")
    assert code == 0, out
    requests = csv_rows(root / "runs" / "2024-09-07-empty" / "requests.csv")
    row = requests[7]
    assert (row["request"], row["ttft_s"], row["latency_s"], row["output_tokens"], row["error"]) == (
        "8",
        "",
        "",
        "0",
        "no token returned (vLLM wrote TTFT 0 s)",
    )
    assert [r["error"] for r in requests].count("") == 9
    assert (
        "Trial 1 at request_rate=inf: 1 request returned no token (lambda-a100-llama3-8b-len2000.json); vLLM "
        "writes TTFT 0 for such a request, so requests.csv keeps it as an error, out of the latency statistics."
    ) in out


def test_an_iso_date_is_the_run_date(tmp_path: Path) -> None:
    """Forks and wrappers of vLLM's writer record `date` in ISO 8601; it was ignored, and the notes said
    the file records no date."""
    edited = _edited(tmp_path, LAMBDA[0], date="2024-09-07T08:29:00+00:00")
    code, out, root = imported(tmp_path, edited, "--id", "2024-09-07-iso")
    assert code == 0, out
    meta = yaml.safe_load((root / "runs" / "2024-09-07-iso" / "run.yaml").read_text())
    assert meta["date"] == "2024-09-07" and "records no date" not in out


def test_an_infinite_figure_is_named_never_dropped_silently(tmp_path: Path) -> None:
    """Python's json writes Infinity for an unbounded figure (a goodput with no SLO met over no time):
    it was left out without a word."""
    edited = _edited(tmp_path, "er0080-speculative.json", request_goodput=float("inf"))
    code, out, root = imported(tmp_path, edited, "--id", "2026-08-23-inf")
    assert code == 0, out
    meta = yaml.safe_load((root / "runs" / "2026-08-23-inf" / "run.yaml").read_text())
    assert "request_goodput" not in meta["metrics"]
    assert (
        "er0080-speculative.json: request_goodput is inf (infinite), so it is not kept as a figure; the original "
        "under raw/ keeps it."
    ) in meta["notes"]


def test_a_forks_outcome_counters_are_metrics_never_settings(tmp_path: Path) -> None:
    """A multi-turn fork of the writer counts conversations beside requests; the counters were filed
    as settings in the manifest's metadata."""
    passes = [
        _edited(tmp_path, LAMBDA[0], conversations_completed=9, conversations_failed=1, mean_e2e_turn_ms=812.5),
        _edited(tmp_path, LAMBDA[1], conversations_completed=10, conversations_failed=0, mean_e2e_turn_ms=790.25),
    ]
    code, out, root = imported(tmp_path, *passes, "--id", "2024-09-07-fork")
    assert code == 0, out
    run = root / "runs" / "2024-09-07-fork"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["request_rate"]
    assert meta["metrics"]["conversations_completed"] == {"unit": "count", "better": "higher"}
    assert meta["metrics"]["conversations_failed"] == {"unit": "count", "better": "lower"}
    assert meta["metrics"]["mean_e2e_turn_ms"] == {"unit": "ms", "better": "lower"}
    table = csv_rows(run / "results.csv")
    assert [(r["conversations_completed"], r["conversations_failed"], r["mean_e2e_turn_ms"]) for r in table] == [
        ("9", "1", "812.5"),
        ("10", "0", "790.25"),
    ]
    assert "metadata" not in yaml.safe_load((run / "manifest.yaml").read_text())
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 0 and "Warning" not in result.output, result.output
