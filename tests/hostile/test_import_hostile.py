"""Imports republish nothing secret and lose no original: a credential under any name a
report may give it (keys, headers, flags in argument lists, URLs) is refused before anything
is written, and two inputs of one base name are both kept under raw/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import import_into

FIXTURES = Path(__file__).parents[1] / "fixtures" / "guidellm"
RUN = "2026-11-30-guide"


def report() -> dict[str, Any]:
    found = json.loads((FIXTURES / "concurrent-pass1.json").read_text())
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize(
    ("where", "value", "path", "secret"),
    [
        ("backend_kwargs", {"openai_api_key": "sk-live-aaaa"}, "$.args.backend_kwargs.openai_api_key", "aaaa"),
        ("backend_kwargs", {"bearer_token": "tok-bbbb"}, "$.args.backend_kwargs.bearer_token", "bbbb"),
        ("backend_kwargs", {"headers": {"X-Api-Key": "xk-cccc"}}, "$.args.backend_kwargs.headers.X-Api-Key", "cccc"),
        (
            "backend_kwargs",
            {"headers": {"Authorization": "Bearer sk-dddd1234567890"}},
            "$.args.backend_kwargs.headers.Authorization",
            "dddd",
        ),
        ("hf_token", "hf_eeee", "$.args.hf_token", "eeee"),
        ("cli", ["guidellm", "benchmark", "--api-key", "sk-ffff"], "$.args.cli[3]", "ffff"),
        ("cli", ["guidellm", "--api-key=sk-gggg"], "$.args.cli[1]", "gggg"),
        ("cli", ["curl", "-H", "Authorization: Bearer sk-jjjj1234567890"], "$.args.cli[2]", "jjjj"),
        ("target", "http://user:hunter2kkkk@localhost:8000", "$.args.target", "kkkk"),
        ("target", "http://localhost:8000/v1?api_key=sk-hhhh", "$.args.target", "hhhh"),
        ("env", ["OPENAI_API_KEY=sk-iiii"], "$.args.env[0]", "iiii"),
        ("password", "llll", "$.args.password", "llll"),
        ("client_secret", "mmmm", "$.args.client_secret", "mmmm"),
    ],
)
def test_a_credential_under_any_name_is_refused(
    tmp_path: Path, where: str, value: object, path: str, secret: str
) -> None:
    leaked = report()
    leaked["args"][where] = value
    bad = tmp_path / "benchmarks.json"
    bad.write_text(json.dumps(leaked))
    code, out, root = import_into(tmp_path, "guidellm", str(bad), "--id", RUN)
    assert code == 1
    assert (
        f"Error: benchmarks.json: {path}: holds a credential; the original file is published under raw/, so remove or "
        'redact it (e.g. "***") and import again\n'
    ) in out, out
    assert secret not in out
    assert not (root / "runs" / RUN).exists()


def test_names_that_only_look_like_credentials_import(tmp_path: Path) -> None:
    benign = report()
    benign["args"] |= {
        "tokenizer": "gpt2",
        "max_tokens": "64",
        "token_count": 5,
        "cli": ["--api-key", "***"],
        "target": "http://localhost:8000/v1",
        "note": "basic benchmark, token throughput",
        "backend_kwargs": {"api_key": None, "headers": {"Authorization": "${OPENAI_API_KEY}"}},
    }
    good = tmp_path / "benchmarks.json"
    good.write_text(json.dumps(benign))
    code, out, _ = import_into(tmp_path, "guidellm", str(good), "--id", RUN)
    assert code == 0, out


def test_two_inputs_of_one_base_name_are_both_kept(tmp_path: Path) -> None:
    for folder, source in (("a", "concurrent-pass1.json"), ("b", "concurrent-pass2.json")):
        (tmp_path / folder).mkdir()
        shutil.copy(FIXTURES / source, tmp_path / folder / "result.json")
    code, out, root = import_into(
        tmp_path, "guidellm", str(tmp_path / "a" / "result.json"), str(tmp_path / "b" / "result.json"), "--id", RUN
    )
    assert code == 0, out
    run = root / "runs" / RUN
    assert sorted(p.name for p in (run / "raw").iterdir()) == ["result-2.json", "result.json"]
    assert (run / "raw" / "result.json").read_bytes() == (FIXTURES / "concurrent-pass1.json").read_bytes()
    assert (run / "raw" / "result-2.json").read_bytes() == (FIXTURES / "concurrent-pass2.json").read_bytes()
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert sorted(meta["imported"]["files"]) == ["raw/result-2.json", "raw/result.json"]
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0


def test_the_same_file_given_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    copy = shutil.copy(FIXTURES / "concurrent-pass1.json", tmp_path / "a" / "concurrent-pass1.json")
    code, out, root = import_into(tmp_path, "guidellm", str(FIXTURES / "concurrent-pass1.json"), str(copy), "--id", RUN)
    assert code == 1
    assert (
        f"Error: {copy}: holds the same bytes as {FIXTURES / 'concurrent-pass1.json'}; give each result file once "
        "(a file given twice would count its trials twice)\n"
    ) in out
    assert not (root / "runs" / RUN).exists()


def test_a_credential_nested_deep_or_in_a_list_under_its_name_is_refused(tmp_path: Path) -> None:
    leaked = report()
    deep: dict[str, Any] = {"hf_token": "hf_deep_nnnn"}
    for _ in range(200):
        deep = {"x": deep}
    leaked["args"] |= {"deep": deep, "api_keys": ["sk-oooo"]}
    bad = tmp_path / "benchmarks.json"
    bad.write_text(json.dumps(leaked))
    code, out, _ = import_into(tmp_path, "guidellm", str(bad), "--id", RUN)
    assert code == 1 and "$.args.api_keys[0]: holds a credential" in out
    assert "$.args.deep" + ".x" * 200 + ".hf_token: holds a credential" in out
    assert "nnnn" not in out and "oooo" not in out


def test_a_hyperfine_command_carrying_a_bearer_token_is_refused(tmp_path: Path) -> None:
    export = json.loads((FIXTURES.parent / "hyperfine" / "gzip-sizes.json").read_text())
    export["results"][0]["command"] = "curl -H 'Authorization: Bearer sk-pppp1234567890' http://x/"
    bad = tmp_path / "hyperfine.json"
    bad.write_text(json.dumps(export))
    code, out, _ = import_into(tmp_path, "hyperfine", str(bad), "--id", RUN)
    assert code == 1 and "Error: hyperfine.json: $.results[0].command: holds a credential" in out, out
    assert "pppp" not in out


@pytest.mark.parametrize(
    ("test", "value", "message"),
    [
        ("pp 5", "1.2.3 ± 0.5", "t/s: '1.2.3 ± 0.5' is not `mean ± sd` (two finite numbers, e.g. 6.17 ± 0.07)"),
        ("pp 5", "1e999 ± 1", "t/s: '1e999 ± 1' is not `mean ± sd` (two finite numbers, e.g. 6.17 ± 0.07)"),
        ("pp " + "9" * 5000, "1 ± 0", "test: 'pp " + "9" * 37 + "' is not ppN, tgN, ppN+tgM, tgN@ppM or ppN @ dN"),
    ],
)
def test_a_malformed_llama_bench_table_value_is_a_clear_error(
    tmp_path: Path, test: str, value: str, message: str
) -> None:
    table = tmp_path / "bench.md"
    table.write_text(f"| test | t/s |\n| --- | --- |\n| {test} | {value} |\n")
    code, out, _ = import_into(tmp_path, "llama-bench", str(table), "--id", RUN, "--citation", "x")
    assert code == 1 and f"Error: bench.md:3: {message}\n" in out, out


def test_an_import_check_would_refuse_writes_nothing(tmp_path: Path) -> None:
    """A negative standard deviation in a llama-bench CSV: check refuses it, so import does."""
    lines = (FIXTURES.parent / "llama-bench" / "testbed-tiny-threads.csv").read_text().splitlines()
    bad = tmp_path / "bench.csv"
    bad.write_text(lines[0] + "\n" + lines[1].rsplit(",", 1)[0] + ',"-5.0"\n')
    code, out, root = import_into(
        tmp_path, "llama-bench", str(bad), "--id", RUN, "--citation", "x", "--repetitions", "3"
    )
    assert code == 1
    assert (
        f"Error: runs/{RUN}/results.csv:2: tokens_per_second.sd: -5 is negative; a standard deviation is >= 0; "
        "check would refuse the imported run, so nothing was written\n"
    ) in out, out
    assert sorted(p.name for p in (root / "runs").iterdir()) == []


@pytest.mark.parametrize("key", ["error", "latency_s", "request"])
def test_vllm_metadata_cannot_overwrite_request_columns(tmp_path: Path, key: str) -> None:
    files = []
    for i, name in enumerate(["serve-c1-pass1.json", "serve-c1-pass2.json"]):
        record = json.loads((FIXTURES.parent / "vllm-bench" / name).read_text())
        record[key] = f"value-{i}"  # what `--metadata KEY=VALUE` records
        files.append(tmp_path / name)
        files[-1].write_text(json.dumps(record))
    code, out, root = import_into(tmp_path, "vllm-bench", *map(str, files), "--id", RUN)
    assert code == 1
    assert (
        f"{key!r} differs between files but cannot name a column (results.csv and requests.csv already use that "
        "name); import them as separate runs\n"
    ) in out, out
    assert not (root / "runs" / RUN).exists()


def test_a_hyperfine_command_adds_no_markdown_structure_to_the_notes(tmp_path: Path) -> None:
    from generator.render.text import notes

    export = json.loads((FIXTURES.parent / "hyperfine" / "gzip-sizes.json").read_text())
    export["results"][0]["command"] = "echo `a` ``b``\n# Owned\n\n- [x](https://evil.example)"
    hostile = tmp_path / "hyperfine.json"
    hostile.write_text(json.dumps(export))
    code, out, root = import_into(tmp_path, "hyperfine", str(hostile), "--id", RUN)
    assert code == 0, out
    written = yaml.safe_load((root / "runs" / RUN / "run.yaml").read_text())["notes"]
    assert "- ``` echo `a` ``b``↵# Owned↵↵- [x](https://evil.example) ```\n" in written
    html = str(notes(written))
    assert "<h1>" not in html and "<a " not in html
    assert "<code>echo `a` ``b``↵# Owned↵↵- [x](https://evil.example)</code>" in html


def test_vllm_keys_that_would_name_one_metric_are_refused(tmp_path: Path) -> None:
    record = json.loads((FIXTURES.parent / "vllm-bench" / "serve-c1-pass1.json").read_text())
    record |= {"p99.9_ttft_ms": 10.0, "p99_9_ttft_ms": 99.0}
    bad = tmp_path / "result.json"
    bad.write_text(json.dumps(record))
    code, out, _ = import_into(tmp_path, "vllm-bench", str(bad), "--id", RUN)
    assert code == 1
    assert (
        "Error: vllm-bench: 'p99.9_ttft_ms' and 'p99_9_ttft_ms' would both be the metric 'p99_9_ttft_ms'; "
        "keep one of them\n"
    ) in out, out


def test_a_credential_in_a_guidellm_yaml_report_is_refused(tmp_path: Path) -> None:
    text = (FIXTURES / "sweep.yaml").read_text()
    bad = tmp_path / "benchmarks.yaml"
    bad.write_text(text.replace("  backend_kwargs:\n", "  backend_kwargs:\n    hf_token: hf_qqqq\n", 1))
    code, out, root = import_into(tmp_path, "guidellm", str(bad), "--id", RUN)
    assert code == 1 and "Error: benchmarks.yaml:4: $.args.backend_kwargs.hf_token: holds a credential" in out, out
    assert "qqqq" not in out and not (root / "runs" / RUN).exists()


def test_metric_names_holding_the_word_token_are_not_credentials(tmp_path: Path) -> None:
    benign = report()
    benign["args"] |= {
        "time_to_first_token_ms": {"type_": "distribution", "unit": "ms"},
        "first_token_time": "2026-11-30T10:00:00",
        "token_source": "usage",
        "password_file": "/run/secrets/pw",
    }
    good = tmp_path / "benchmarks.json"
    good.write_text(json.dumps(benign))
    code, out, _ = import_into(tmp_path, "guidellm", str(good), "--id", RUN)
    assert code == 0, out


@pytest.mark.parametrize(
    ("name", "escaped", "at", "named"),
    [
        ("a\x1b[2Jb.json", "a\\x1b[2Jb.json", 2, "U+001B (ESC, which starts a terminal escape sequence)"),
        ("gzip\u202enosj.json", "gzip\\u202enosj.json", 5, "U+202E (right-to-left override)"),
        ("gzip\nsizes.json", "gzip\\nsizes.json", 5, "U+000A (line feed)"),
        ("gzip\tsizes.json", "gzip\\tsizes.json", 5, "U+0009 (tab)"),
        ("gzip\u200bsizes.json", "gzip\\u200bsizes.json", 5, "U+200B (zero width space)"),
        ("gzip\udcffsizes.json", "gzip\\udcffsizes.json", 5, "the byte 0xFF (not UTF-8)"),  # as Linux reads it
    ],
)
def test_an_input_whose_name_a_terminal_does_not_show_as_written_is_refused(
    tmp_path: Path, name: str, escaped: str, at: int, named: str
) -> None:
    """Its name would be kept under raw/ and in the run's title, and printed at a terminal."""
    (tmp_path / "in").mkdir()
    bad = shutil.copy(FIXTURES.parent / "hyperfine" / "gzip-sizes.json", tmp_path / "in" / name)
    code, out, root = import_into(tmp_path, "hyperfine", str(bad), "--id", RUN)
    assert code == 1, out
    assert out == (
        f"Error: {tmp_path / 'in'}/{escaped}: its name holds {named} at character {at}, which a terminal or a page "
        "does not show as itself; the name is kept under raw/ and in the run's title, so rename the file and "
        "import again\n"
    ), out
    assert not (root / "runs" / RUN).exists()
