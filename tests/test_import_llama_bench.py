"""`benchledger import llama-bench`: real published and locally measured outputs (see
tests/fixtures/llama-bench/SOURCES.md) become run folders that check and build."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.analysis import ratios
from generator.cli import app
from helpers import csv_rows, generate, import_into

FIXTURES = Path(__file__).parent / "fixtures" / "llama-bench"


def imported(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    return import_into(tmp_path, "llama-bench", *args)


rows = csv_rows


def check(root: Path) -> None:
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name", ["readme-rtx4080.json", "readme-rtx4080.jsonl"])
def test_json_repetitions_become_trials(tmp_path: Path, name: str) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / name), "--id", "2025-04-24-qwen-4080")
    assert code == 0, out
    run = root / "runs" / "2025-04-24-qwen-4080"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["n_prompt", "n_gen", "n_depth"]
    assert meta["trial_unit"] == "repetition" and meta["date"] == "2025-04-24"
    assert meta["source"] == {"kind": "measured"}
    assert meta["imported"]["format"] == ("json" if name.endswith(".json") else "jsonl")
    table = rows(run / "results.csv")
    assert [(r["trial"], r["n_prompt"], r["n_gen"], r["tokens_per_second"]) for r in table[:2]] == [
        ("1", "512", "0", "6863.1"),
        ("2", "512", "0", "7147.55"),
    ]
    assert len(table) == 10 and table[5]["tokens_per_second"] == "119.03" and table[5]["seconds"] == "1.0753613"
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["software"] == {
        "engine": "llama.cpp",
        "engine_version": "8cf427ff",
        "build_number": 5163,
        "backends": "CUDA",
    }
    assert manifest["host"] == {"cpu": "AMD Ryzen 7 7800X3D 8-Core Processor"}
    assert manifest["accelerators"] == [{"name": "NVIDIA GeForce RTX 4080"}]
    assert manifest["model"]["type"] == "qwen2 7B Q4_K - Medium" and manifest["model"]["n_params"] == 7615616512
    assert manifest["engine"]["llama_bench"]["n_threads"] == 8 and "test_time" not in manifest["engine"]["llama_bench"]
    assert (run / "raw" / name).read_bytes() == (FIXTURES / name).read_bytes()
    check(root)


def test_settings_that_vary_between_tests_become_conditions(tmp_path: Path) -> None:
    code, out, root = imported(
        tmp_path,
        str(FIXTURES / "readme-threads.md"),
        "--id",
        "2023-08-18-threads",
        "--date",
        "2023-08-18",
        "--citation",
        "llama.cpp llama-bench README",
        "--url",
        "https://github.com/ggml-org/llama.cpp",
        "--repetitions",
        "5",
    )
    assert code == 0, out
    run = root / "runs" / "2023-08-18-threads"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["n_prompt", "n_gen", "n_depth", "n_threads"]
    assert meta["source"]["kind"] == "reported" and meta["trial_unit"] == "repetition"
    table = rows(run / "results.csv")
    assert [
        (
            r["n_threads"],
            r["n_prompt"],
            r["n_gen"],
            r["tokens_per_second"],
            r["tokens_per_second.sd"],
            r["tokens_per_second.n"],
        )
        for r in table[:2]
    ] == [
        ("1", "64", "0", "6.17", "0.07", "5"),
        ("1", "0", "16", "4.05", "0.02", "5"),
    ]
    assert all(r["trial"] == "" for r in table)
    check(root)


def test_a_summary_without_repetitions_is_refused_naming_the_option(tmp_path: Path) -> None:
    csv_file = FIXTURES / "testbed-tiny-threads.csv"
    code, out, root = imported(tmp_path, str(csv_file), "--id", "2026-11-30-csv", "--citation", "test bed")
    assert code == 1 and out.startswith("Error: --repetitions: llama-bench's csv output gives each test's mean and SD")
    assert "give --repetitions N (the -r it ran with; 5 when -r was not given)" in out
    assert not (root / "runs" / "2026-11-30-csv").exists()
    code, out, root = imported(
        tmp_path, str(csv_file), "--id", "2026-11-30-csv", "--citation", "test bed", "--repetitions", "3"
    )
    assert code == 0, out
    run = root / "runs" / "2026-11-30-csv"
    assert yaml.safe_load((run / "run.yaml").read_text())["conditions"] == ["n_prompt", "n_gen", "n_depth", "n_threads"]
    table = rows(run / "results.csv")
    source = rows(csv_file)
    assert [(r["tokens_per_second"], r["tokens_per_second.sd"]) for r in table] == [
        (r["avg_ts"], r["stddev_ts"]) for r in source
    ]
    assert {r["tokens_per_second.n"] for r in table} == {"3"} and len(table) == 4
    check(root)


def test_published_summaries_from_two_csv_imports_get_a_welch_verdict(tmp_path: Path) -> None:
    source = (FIXTURES / "testbed-tiny-threads.csv").read_text()
    table = list(csv.reader(io.StringIO(source)))
    at = table[0].index("avg_ts")
    for row in table[1:]:
        row[at] = str(float(row[at]) * 1.3)
    faster = tmp_path / "faster.csv"
    with faster.open("w", newline="") as fh:
        csv.writer(fh).writerows(table)
    args = ["--citation", "test bed", "--repetitions", "3"]
    assert imported(tmp_path, str(FIXTURES / "testbed-tiny-threads.csv"), "--id", "2026-11-30-a", *args)[0] == 0
    code, out, root = imported(tmp_path, str(faster), "--id", "2026-11-30-b", *args)
    assert code == 0, out
    compare = ["compare", "2026-11-30-a", "2026-11-30-b", "--metric", "tokens_per_second", "--at", "n_gen=16"]
    result = CliRunner().invoke(app, [*compare, "--at", "n_threads=1", "--repo", str(root), "--json"])
    found = json.loads(result.output)
    assert found["n_baseline"] == 3 and found["ratio"] == pytest.approx(1.3, rel=1e-3)
    row = next(r for r in rows(FIXTURES / "testbed-tiny-threads.csv") if r["n_gen"] == "16" and r["n_threads"] == "1")
    mean, sd = float(row["avg_ts"]), float(row["stddev_ts"])
    expected = ratios.ratio_from_summaries((mean, sd, 3), (mean * 1.3, sd, 3)).bounds(0.95)
    assert (found["ci_low"], found["ci_high"]) == pytest.approx(expected, rel=1e-4)


def test_someone_elses_trials_are_republished_and_every_page_says_who(tmp_path: Path) -> None:
    cite = (
        "--citation",
        "A llama.cpp discussion thread",
        "--url",
        "https://github.com/ggml-org/llama.cpp/discussions/1",
    )
    code, out, root = imported(tmp_path, str(FIXTURES / "readme-rtx4080.json"), "--id", "2025-04-24-theirs", *cite)
    assert code == 0, out
    meta = yaml.safe_load((root / "runs" / "2025-04-24-theirs" / "run.yaml").read_text())
    assert meta["source"]["kind"] == "republished"
    assert CliRunner().invoke(app, ["generate", "--repo", str(root)]).exit_code == 0
    page = (root / "site_src" / "runs" / "2025-04-24-theirs" / "index.md").read_text()
    assert '<td data-label="Field">Source</td><td data-label="Value">republished from <a href=' in page
    assert "Measured by someone else" in page
    assert "republished from" in (root / "site_src" / "runs" / "index.md").read_text()


def test_a_changed_raw_file_is_caught_by_check(tmp_path: Path) -> None:
    code, _, root = imported(tmp_path, str(FIXTURES / "testbed-tiny.json"), "--id", "2026-11-30-tiny")
    assert code == 0
    raw = root / "runs" / "2026-11-30-tiny" / "raw" / "testbed-tiny.json"
    raw.write_text(raw.read_text().replace("34642.6", "99999.9"))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert "runs/2026-11-30-tiny/raw/testbed-tiny.json: changed since it was imported" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[not json at all", "is not llama-bench json"),
        ('{"n_prompt": 1}\n', "bad.txt:1: samples_ts: expected a list of positive numbers"),
        (
            '[{"samples_ts": [1, 2], "samples_ns": [1], "n_prompt": 1, "n_gen": 0, "n_depth": 0}]',
            "$[0].samples_ns: expected one positive number",
        ),
        (
            '[{"samples_ts": [1], "samples_ns": [1], "n_prompt": -1, "n_gen": 0, "n_depth": 0}]',
            "$[0].n_prompt: expected a whole number",
        ),
        ("[]", "holds no llama-bench test"),
        (
            "| model | test |\n| --- | --- |\n| x | pp 5 |\n",
            "bad.txt:1: holds a Markdown table, but none with llama-bench's `test` and `t/s` columns",
        ),
        ("| test | t/s |\n| --- | --- |\n| pp 5 | fast |\n", "t/s: 'fast' is not `mean ± sd`"),
    ],
)
def test_malformed_input_is_one_located_error(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(content)
    code, out, root = imported(tmp_path, str(bad), "--id", "2026-11-30-bad", "--date", "2026-11-30", "--citation", "x")
    assert code == 1 and out.startswith("Error: bad.txt") and message in out, out
    assert not (root / "runs" / "2026-11-30-bad").exists()


def test_careless_options_are_refused(tmp_path: Path) -> None:
    code, out, _ = imported(
        tmp_path, str(FIXTURES / "testbed-tiny-threads.csv"), "--id", "2025-04-24-x", "--repetitions", "3"
    )
    assert code == 1 and "becomes a reported run: say who published it with --citation" in out
    code, out, _ = imported(
        tmp_path, str(FIXTURES / "readme-rtx4080-ragged.csv"), "--id", "2025-04-24-z", "--citation", "x"
    )
    assert code == 1 and "readme-rtx4080-ragged.csv:2: has 41 cells, the header 42" in out
    code, out, _ = imported(tmp_path, str(FIXTURES / "readme-rtx4080.json"), "--id", "Bad Id")
    assert code == 1 and "'Bad Id' is not a run id" in out
    code, out, _ = imported(tmp_path, str(tmp_path / "missing.json"), "--id", "2025-04-24-y")
    assert code == 1 and "missing.json: no such file" in out
    result = CliRunner().invoke(app, ["import", "locust", "x.json", "--id", "a"])
    assert (
        result.exit_code == 1
        and "unknown tool 'locust'; this benchledger imports: llama-bench, vllm-bench, guidellm, hyperfine, pytest-benchmark"
        in result.output
    )


def test_a_live_llama_bench_run_imports_checks_and_builds(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "bench" / "engines"))
    import llama_cpp as engine

    bin_dir = engine.cache_root() / "build" / "bin"
    if not (bin_dir / "llama-bench").is_file():
        pytest.skip("llama-bench is not built: python bench/engines/llama_cpp.py build")
    target, _ = engine.models(tmp_path / "models", None)
    env = {**os.environ, "LD_LIBRARY_PATH": str(bin_dir)}
    command = [
        str(bin_dir / "llama-bench"),
        "-m",
        str(target),
        "-p",
        "16",
        "-n",
        "8",
        "-r",
        "3",
        "-t",
        "1,2",
        "-o",
        "json",
    ]
    done = subprocess.run(command, capture_output=True, env=env, timeout=300, check=True)
    (tmp_path / "live.json").write_bytes(done.stdout)
    code, out, root = imported(tmp_path, str(tmp_path / "live.json"), "--id", "2026-11-30-live")
    assert code == 0, out
    meta = yaml.safe_load((root / "runs" / "2026-11-30-live" / "run.yaml").read_text())
    assert meta["conditions"] == ["n_prompt", "n_gen", "n_depth", "n_threads"]
    assert len(rows(root / "runs" / "2026-11-30-live" / "results.csv")) == 2 * 2 * 3  # tests x threads x repetitions
    result = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)])
    assert result.exit_code == 0, result.output


IK_MODEL = "opensourcerelease_DeepSeek-R1-Bf16-256x21B-IQ4_K_R4.gguf"


def test_ik_llama_json_without_n_depth_keeps_every_fork_setting(tmp_path: Path) -> None:
    files = [str(FIXTURES / "ik-flashmla3-fa-off.json"), str(FIXTURES / "ik-flashmla3-fa-on.json")]
    code, out, root = imported(tmp_path, *files, "--id", "2025-03-21-ik-mla3")
    assert code == 0, out
    assert f"Local paths were reduced to their file names (`{IK_MODEL}`)" in out
    run = root / "runs" / "2025-03-21-ik-mla3"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["n_prompt", "n_gen", "flash_attn"]
    assert meta["trial_unit"] == "repetition" and meta["date"] == "2025-03-21"
    table = rows(run / "results.csv")
    assert len(table) == 20
    assert table[0] == {
        "trial": "1",
        "n_prompt": "512",
        "n_gen": "0",
        "flash_attn": "false",
        "tokens_per_second": "8.08873",
        "seconds": "63.297959014",
    }
    assert (table[-1]["flash_attn"], table[-1]["tokens_per_second"], table[-1]["seconds"]) == (
        "true",
        "2.75163",
        "46.517856647",
    )
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["model"] == {
        "filename": IK_MODEL,
        "type": "deepseek2 671B IQ4_K_R4 - 4.5 bpw",
        "size": 379595751424,
        "n_params": 672049829376,
    }
    settings = manifest["engine"]["llama_bench"]
    assert {k: settings[k] for k in ("mla_attn", "fused_moe", "ser", "attn_max_batch", "cuda", "gpu_blas")} == {
        "mla_attn": 3,
        "fused_moe": True,
        "ser": "-1,0",
        "attn_max_batch": 0,
        "cuda": False,
        "gpu_blas": False,
    }
    assert settings["n_threads"] == 48 and "flash_attn" not in settings and "test" not in settings
    assert manifest["software"] == {"engine": "llama.cpp", "engine_version": "ddc8eee1", "build_number": 3599}
    assert "accelerators" not in manifest  # gpu_info is empty: a CPU run
    check(root)


def test_kept_paths_are_refused_by_check_with_the_file_name_as_fix(tmp_path: Path) -> None:
    code, out, root = imported(
        tmp_path, str(FIXTURES / "ik-flashmla3-fa-off.json"), "--id", "2025-03-21-paths", "--keep-paths"
    )
    assert code == 0, out
    manifest = yaml.safe_load((root / "runs" / "2025-03-21-paths" / "manifest.yaml").read_text())
    assert manifest["model"]["filename"] == f"/mnt/sda/opensourcerelease_DeepSeek-R1-bf16/{IK_MODEL}"
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert (
        "runs/2025-03-21-paths/manifest.yaml:12: model.filename: is an absolute local path "
        "('/mnt/sda/opensourcerelease_DeepSeek-R1-bf16/" in result.output
    )
    assert f"write the file name '{IK_MODEL}' instead" in result.output


def test_every_varying_markdown_column_is_a_condition(tmp_path: Path) -> None:
    cite = ("--citation", "ik_llama.cpp discussion 258", "--url", "https://github.com/ikawrakow/ik_llama.cpp")
    code, out, root = imported(
        tmp_path, str(FIXTURES / "ik-quickstart-kv-types.md"), "--id", "2025-03-30-kv", *cite, "--repetitions", "5"
    )
    assert code == 0, out
    run = root / "runs" / "2025-03-30-kv"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == [
        "n_prompt",
        "n_gen",
        "n_depth",
        "model_type",
        "model_size",
        "model_n_params",
        "type_k",
        "type_v",
        "repack",
    ]
    table = rows(run / "results.csv")
    assert len(table) == 12
    rtr = [
        (r["type_k"], r["repack"], r["tokens_per_second"], r["tokens_per_second.sd"], r["tokens_per_second.n"])
        for r in table[:6]
        if r["n_prompt"] == "512"
    ]
    assert rtr == [
        ("q8_0", "0", "69.85", "1.67", "5"),
        ("q8_0", "1", "110.79", "5.60", "5"),
        ("f16", "1", "114.56", "1.75", "5"),
    ]
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["engine"]["llama_bench"] == {
        "n_gpu_layers": 63,
        "flash_attn": 1,
        "mla_attn": 2,
        "attn_max_batch": 2048,
        "fused_moe": 1,
    }
    assert manifest["software"]["backends"] == "CUDA"
    check(root)


def test_ik_generation_after_prompt_tests_and_fork_columns(tmp_path: Path) -> None:
    cite = ("--citation", "ik_llama.cpp PR 273", "--url", "https://github.com/ikawrakow/ik_llama.cpp/pull/273")
    code, out, root = imported(
        tmp_path, str(FIXTURES / "ik-flashmla3-mla-fa.md"), "--id", "2025-03-21-gp", *cite, "--repetitions", "2"
    )
    assert code == 0, out
    run = root / "runs" / "2025-03-21-gp"
    assert yaml.safe_load((run / "run.yaml").read_text())["conditions"] == [
        "n_prompt",
        "n_gen",
        "n_depth",
        "flash_attn",
        "mla_attn",
    ]
    table = rows(run / "results.csv")
    assert len(table) == 42
    last = table[-1]
    assert (last["n_prompt"], last["n_gen"], last["flash_attn"], last["mla_attn"]) == ("8192", "64", "1", "3")
    assert (last["tokens_per_second"], last["tokens_per_second.sd"], last["tokens_per_second.n"]) == (
        "26.12",
        "0.03",
        "2",
    )
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["engine"]["llama_bench"] == {"n_threads": 32, "type_k": "q8_0", "fused_moe": 1}
    assert manifest["model"] == {"type": "deepseek2 16B IQ4_NL_R4", "n_params": "15.76 B"}
    code, out, root = imported(
        tmp_path, str(FIXTURES / "ik-flashmla3-threads.md"), "--id", "2025-03-21-threads", *cite, "--repetitions", "5"
    )
    assert code == 0, out
    run = root / "runs" / "2025-03-21-threads"
    assert yaml.safe_load((run / "run.yaml").read_text())["conditions"] == ["n_prompt", "n_gen", "n_depth", "n_threads"]
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["engine"]["llama_bench"] == {"flash_attn": 1, "mla_attn": 3, "fused_moe": 1}
    assert rows(run / "results.csv")[6]["tokens_per_second"] == "10.27"
    check(root)


def test_a_pp_plus_tg_and_a_tg_after_pp_test_stay_apart(tmp_path: Path) -> None:
    lines = (FIXTURES / "ik-flashmla3-mla-fa.md").read_text().splitlines()[:3]
    mixed = tmp_path / "mixed.md"
    mixed.write_text("\n".join([*lines, lines[2].replace("tg64@pp128", "pp128+tg64")]) + "\n")
    code, out, root = imported(
        tmp_path, str(mixed), "--id", "2025-03-21-mixed", "--citation", "x", "--repetitions", "2"
    )
    assert code == 0, out
    run = root / "runs" / "2025-03-21-mixed"
    assert yaml.safe_load((run / "run.yaml").read_text())["conditions"][-1] == "test"
    assert [r["test"] for r in rows(run / "results.csv")] == ["tg64@pp128", "pp128+tg64"]
    check(root)


def test_a_measured_run_cannot_carry_someone_elses_citation(tmp_path: Path) -> None:
    cite = ("--citation", "A llama.cpp README", "--url", "https://github.com/ggml-org/llama.cpp")
    code, out, root = imported(tmp_path, str(FIXTURES / "readme-rtx4080.json"), "--id", "2025-04-24-cited", *cite)
    assert code == 0, out
    meta = root / "runs" / "2025-04-24-cited" / "run.yaml"
    meta.write_text(meta.read_text().replace("kind: republished", "kind: measured"))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert "a measured run carries no source.citation or source.url: if someone else measured it, write " in (
        result.output
    )


def test_a_claim_on_republished_runs_is_flagged_with_the_source_url(tmp_path: Path) -> None:
    url = "https://github.com/ikawrakow/ik_llama.cpp/pull/273"
    cite = ("--citation", "ik_llama.cpp PR 273", "--url", url)
    files = [str(FIXTURES / "ik-flashmla3-fa-off.json"), str(FIXTURES / "ik-flashmla3-fa-on.json")]
    code, out, root = imported(tmp_path, *files, "--id", "2025-03-21-theirs", *cite)
    assert code == 0, out
    front = {
        "title": "FA on the CPU",
        "claims": [
            {
                "id": "fa-on-slower-tg",
                "statement": "With FlashMLA-3 on this Xeon, flash attention slows generation.",
                "metric": "tokens_per_second",
                "baseline": {"run": "2025-03-21-theirs", "at": {"flash_attn": "false"}},
                "candidate": {"run": "2025-03-21-theirs", "at": {"flash_attn": "true"}},
                "at": {"n_prompt": 0, "n_gen": 128},
                "claimed": "-",
            }
        ],
    }
    (root / "site_src" / "reports").mkdir(parents=True)
    (root / "site_src" / "reports" / "fa.md").write_text("---\n" + yaml.safe_dump(front) + "---\n")
    check(root)
    (row,) = json.loads(generate(root)["ledger/claims.json"])
    assert row["verdict"] == "supported" and "republished run" in row["flags"]
    page = html.unescape(generate(root)["claims/fa-on-slower-tg/index.md"].decode())
    assert f"<dd>2025-03-21-theirs: republished from ik_llama.cpp PR 273 ({url})</dd>" in page


# Output as people save it (tests/fixtures/llama-bench/SOURCES.md, "Logs"): found by content,
# whatever the extension, with the lines around it read or left out, never the cause of a refusal.

KYUZ0 = FIXTURES / "kyuz0-glm47-flash-rocm.log"
SUMMARY = ("--citation", "kyuz0/amd-strix-halo-toolboxes", "--repetitions", "5")


def test_a_saved_log_is_read_by_content_with_its_build_line_and_device_lines(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(KYUZ0), "--id", "2026-05-18-glm-rocm", *SUMMARY)
    assert code == 0, out
    assert (
        "Note: Lines that are not llama-bench output (device lines, warnings, commands) were left out: "
        "kyuz0-glm47-flash-rocm.log lines 1-2. The original under raw/ keeps them." in out
    )
    run = root / "runs" / "2026-05-18-glm-rocm"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["conditions"] == ["n_prompt", "n_gen", "n_depth"] and meta["imported"]["format"] == "md"
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["software"] == {
        "engine": "llama.cpp",
        "engine_version": "0253fb21f",
        "build_number": 9187,
        "backends": "ROCm",
    }
    assert manifest["accelerators"] == [{"name": "AMD Radeon 8060S Graphics"}]
    assert manifest["engine"]["llama_bench"] == {"n_gpu_layers": 99, "flash_attn": 1, "use_mmap": 0}
    assert (run / "raw" / KYUZ0.name).read_bytes() == KYUZ0.read_bytes()
    check(root)


def test_an_sd_printed_as_zero_is_kept_as_its_bound_and_intervals_use_it(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(KYUZ0), "--id", "2026-05-18-a", *SUMMARY)
    assert code == 0, out
    assert (
        "Note: llama-bench printed an SD of 0.00 (kyuz0-glm47-flash-rocm.log line 6): an SD below half its last "
        "digit, kept as `<0.005` (an upper bound, which intervals use), not as an SD of zero." in out
    )
    assert (root / "runs" / "2026-05-18-a" / "results.csv").read_text().splitlines() == [
        "trial,n_prompt,n_gen,n_depth,tokens_per_second,tokens_per_second.sd,tokens_per_second.n",
        ",512,0,0,422.28,1.78,5",
        ",0,128,0,23.17,<0.005,5",
    ]
    faster = tmp_path / "faster.log"
    faster.write_text(KYUZ0.read_text().replace("23.17 ± 0.00", "25.00 ± 0.00"))
    assert imported(tmp_path, str(faster), "--id", "2026-05-18-b", *SUMMARY)[0] == 0
    check(root)
    page = generate(root)["runs/2026-05-18-a/index.md"].decode()
    assert "23.17 tok&#47;s (SD &lt; 0.005, n = 5)" in page and "422.3 tok&#47;s ± 1.78 (SD, n = 5)" in page
    compare = ["compare", "2026-05-18-a", "2026-05-18-b", "--metric", "tokens_per_second", "--at", "n_gen=128"]
    found = json.loads(CliRunner().invoke(app, [*compare, "--repo", str(root), "--json"]).output)
    expected = ratios.ratio_from_summaries((23.17, 0.005, 5), (25.0, 0.005, 5)).bounds(0.95)
    assert (found["ci_low"], found["ci_high"]) == pytest.approx(expected, rel=1e-9)
    assert found["ci_low"] < found["ratio"] < found["ci_high"]


def test_device_lines_before_jsonl_are_left_out(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(FIXTURES / "lhl-quick-test.jsonl"), "--id", "2025-10-28-quick")
    assert code == 0, out
    assert "were left out: lhl-quick-test.jsonl lines 1-4. The original under raw/ keeps them." in out
    run = root / "runs" / "2025-10-28-quick"
    assert rows(run / "results.csv")[:2] == [
        {"trial": "1", "n_prompt": "512", "n_gen": "0", "n_depth": "0", "tokens_per_second": "5007.64",
         "seconds": "0.102243694"},
        {"trial": "1", "n_prompt": "0", "n_gen": "128", "n_depth": "0", "tokens_per_second": "192.587",
         "seconds": "0.664633263"},
    ]  # fmt: skip
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["software"]["build_number"] == 6865 and manifest["software"]["engine_version"] == "1c1409e1"
    check(root)


RPC = FIXTURES / "lhl-rpc-scaling.md"


def test_each_table_of_a_log_is_its_own_invocation(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(RPC), "--id", "2025-08-08-rpc", *SUMMARY)
    assert code == 0, out
    assert (
        "Note: The input appends 4 llama-bench invocations whose tests record the same settings, so each is its own "
        "condition `invocation` (1: lhl-rpc-scaling.md lines 8-9 (after the line `❯ time build/bin/llama-bench -m "
        "gpt-oss-120b-F16.gguf (base)`); 2: lhl-rpc-scaling.md lines 26-27 (after the line `❯ time build/bin/"
        "llama-bench --rpc 192.168.128.12:50053 -m gpt-oss-120b-F16.gguf (base)`); 3: lhl-rpc-scaling.md lines "
        "44-45" in out
    )
    run = root / "runs" / "2025-08-08-rpc"
    assert yaml.safe_load((run / "run.yaml").read_text())["conditions"] == [
        "n_prompt",
        "n_gen",
        "n_depth",
        "invocation",
    ]
    assert [(r["invocation"], r["n_gen"], r["tokens_per_second"], r["tokens_per_second.sd"]) for r in rows(
        run / "results.csv"
    )] == [
        ("1", "0", "404.67", "3.65"), ("1", "128", "33.50", "0.03"),
        ("2", "0", "374.82", "3.68"), ("2", "128", "28.87", "0.11"),
        ("3", "0", "363.54", "3.60"), ("3", "128", "23.02", "0.10"),
        ("4", "0", "368.13", "1.76"), ("4", "128", "21.61", "0.05"),
    ]  # fmt: skip
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["software"] == {
        "engine": "llama.cpp",
        "engine_version": "9515c613",
        "build_number": 6097,
        "backends": "Vulkan,RPC",
    }
    assert manifest["accelerators"] == [{"name": "Radeon 8060S Graphics"}]
    check(root)


def test_an_error_in_a_later_table_cites_the_line_of_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "rpc.txt"
    bad.write_text(RPC.read_text().replace("23.02 ± 0.10", "23.02 ± n/a"))
    code, out, _ = imported(tmp_path, str(bad), "--id", "2025-08-08-bad", *SUMMARY)
    assert code == 1 and out == (
        "Error: rpc.txt:45: t/s: '23.02 ± n/a' is not `mean ± sd` (two finite numbers, e.g. 6.17 ± 0.07)\n"
    )


VULKAN = FIXTURES / "lhl-glm-vulkan-drivers.jsonl"


def test_appended_invocations_of_the_same_tests_stay_apart(tmp_path: Path) -> None:
    code, out, root = imported(tmp_path, str(VULKAN), "--id", "2025-08-08-vulkan")
    assert code == 0, out
    assert (
        "Note: The input appends 2 llama-bench invocations whose tests record the same settings, so each is its own "
        "condition `invocation` (1: lhl-glm-vulkan-drivers.jsonl lines 1-5; 2: lhl-glm-vulkan-drivers.jsonl lines "
        "6-10). They are not pooled: llama-bench does not record what may have changed between them (an environment "
        "variable, a driver), so say what did in the notes, and compare them with `at: {invocation: ...}`." in out
    )
    run = root / "runs" / "2025-08-08-vulkan"
    table = rows(run / "results.csv")
    assert len(table) == 50 and {r["invocation"] for r in table} == {"1", "2"}
    first = [(r["trial"], r["tokens_per_second"]) for r in table if r["n_prompt"] == "1"]
    assert first[:2] == [("1", "22.7693"), ("2", "22.969")] and first[5:7] == [("1", "22.7143"), ("2", "22.8687")]
    assert yaml.safe_load((run / "run.yaml").read_text())["trial_unit"] == "repetition"
    check(root)


def test_tests_from_two_machines_are_refused_naming_both_or_split(tmp_path: Path) -> None:
    files = [str(FIXTURES / "readme-rtx4080.jsonl"), str(FIXTURES / "testbed-tiny-threads.jsonl")]
    code, out, root = imported(tmp_path, *files, "--id", "2026-11-30-two")
    assert code == 1 and out == (
        "Error: testbed-tiny-threads.jsonl lines 1-4: comes from another machine than readme-rtx4080.jsonl lines "
        "1-2: AMD EPYC, not AMD Ryzen 7 7800X3D 8-Core Processor with NVIDIA GeForce RTX 4080; a run is measured on "
        "one machine, so import each machine's results as its own run, or give --split-by machine to write one run "
        "per machine\n"
    )
    assert not (root / "runs").exists() or not any((root / "runs").iterdir())
    code, out, root = imported(tmp_path, *files, "--id", "2026-11-30-two", "--split-by", "machine")
    assert code == 0, out
    assert "Machine: AMD EPYC (testbed-tiny-threads.jsonl lines 1-4)" in out
    one, two = root / "runs" / "2026-11-30-two-1", root / "runs" / "2026-11-30-two-2"
    assert [p.name for p in (one / "raw").iterdir()] == ["readme-rtx4080.jsonl"]
    assert [p.name for p in (two / "raw").iterdir()] == ["testbed-tiny-threads.jsonl"]
    assert yaml.safe_load((one / "manifest.yaml").read_text())["accelerators"] == [{"name": "NVIDIA GeForce RTX 4080"}]
    assert yaml.safe_load((two / "manifest.yaml").read_text())["host"] == {"cpu": "AMD EPYC"}
    assert yaml.safe_load((two / "run.yaml").read_text())["title"] == (
        "llama-bench results imported from testbed-tiny-threads.jsonl, on AMD EPYC"
    )
    check(root)


def test_the_gpus_a_test_chose_inside_one_machine_are_a_condition(tmp_path: Path) -> None:
    """GPU 0 or both GPUs of one machine (gpu_info lists the devices a run saw): one run."""
    lines = (FIXTURES / "lhl-quick-test.jsonl").read_text().splitlines()
    both = [line.replace('"gpu_info": "Radeon 8060S Graphics"', '"gpu_info": "Radeon 8060S Graphics, Radeon 8060S Graphics"') for line in lines[4:6]]  # fmt: skip
    mixed = tmp_path / "devices.jsonl"
    mixed.write_text("\n".join([*lines[:6], *both]) + "\n")
    code, out, root = imported(tmp_path, str(mixed), "--id", "2025-10-28-devices")
    assert code == 0, out
    run = root / "runs" / "2025-10-28-devices"
    assert yaml.safe_load((run / "run.yaml").read_text())["conditions"] == ["n_prompt", "n_gen", "n_depth", "gpu_info"]
    assert [r["gpu_info"] for r in rows(run / "results.csv")] == [
        "Radeon 8060S Graphics",
        "Radeon 8060S Graphics",
        "Radeon 8060S Graphics, Radeon 8060S Graphics",
        "Radeon 8060S Graphics, Radeon 8060S Graphics",
    ]
    check(root)


MEASUREMENT_LIKE = ("_ms", "_s", "_per_second", "_throughput", "_latency")


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("readme-rtx4080.json", ()),
        ("ik-flashmla3-fa-off.json", ()),
        ("testbed-tiny-threads.csv", SUMMARY),
        ("kyuz0-glm47-flash-rocm.log", SUMMARY),
        ("lhl-quick-test.jsonl", ()),
        ("lhl-glm-vulkan-drivers.jsonl", ()),
    ],
)
def test_no_setting_it_writes_looks_like_a_measurement(tmp_path: Path, name: str, extra: tuple[str, ...]) -> None:
    """check warns on manifest keys ending like a measurement with a number: none comes from here."""
    code, out, root = imported(tmp_path, str(FIXTURES / name), "--id", "2026-01-01-x", *extra)
    assert code == 0, out
    manifest = yaml.safe_load((root / "runs" / "2026-01-01-x" / "manifest.yaml").read_text())
    assert [k for k, v in flat(manifest) if k.endswith(MEASUREMENT_LIKE) and isinstance(v, int | float)] == []


def flat(data: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(data, dict):
        return [kv for k, v in data.items() for kv in flat(v, f"{prefix}{k}.")]
    if isinstance(data, list):
        return [kv for i, v in enumerate(data) for kv in flat(v, f"{prefix}{i}.")]
    return [(prefix.rstrip("."), data)]
