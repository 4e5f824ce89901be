"""The runner against a hostile server and careless options: no hang, no crash, no lost
trial, nothing recorded that `check` will later refuse, and every option checked first."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from hostile_server import HostileServer
from typer.testing import CliRunner

from generator.cli import app


def run(tmp_path: Path, base_url: str, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "runs"
    args = ["run", "openai", "--base-url", base_url, "--trials", "1", "--warmup", "0", "--requests", "2"]
    result = CliRunner().invoke(app, [*args, "--id", "2026-11-30-hostile", "--out", str(out), *extra])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output, out / "2026-11-30-hostile"


def check(folder: Path) -> None:
    (folder.parent.parent / "mkdocs.yml").write_text("site_name: x\ndocs_dir: site_src\n")
    result = CliRunner().invoke(app, ["check", "--repo", str(folder.parent.parent)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("mode", ["endless", "drip"])
def test_an_endless_or_dripping_stream_is_cut_at_the_whole_request_deadline(tmp_path: Path, mode: str) -> None:
    with HostileServer(mode) as server:
        start = time.monotonic()
        code, out, folder = run(tmp_path, server.base_url, "--timeout", "1.5")
        elapsed = time.monotonic() - start
    assert code == 1 and "no trial completed" in out and elapsed < 15
    assert not folder.exists()


@pytest.mark.parametrize("mode", ["slow-props", "huge-props", "deep-props"])
def test_slow_huge_or_deep_probes_do_not_hang_or_crash_the_runner(tmp_path: Path, mode: str) -> None:
    with HostileServer(mode) as server:
        start = time.monotonic()
        code, out, folder = run(tmp_path, server.base_url, "--timeout", "5")
        elapsed = time.monotonic() - start
    assert code == 0, out
    assert elapsed < 30  # /props is cut at --timeout (5 s) on its whole answer
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    assert "llama_cpp_props" not in manifest.get("server", {})
    check(folder)


def test_fields_of_the_wrong_type_and_impossible_counts_are_refused_not_stored(tmp_path: Path) -> None:
    with HostileServer("bad-fields") as server:
        code, out, folder = run(tmp_path, server.base_url)
    assert code == 0, out
    meta = yaml.safe_load((folder / "run.yaml").read_text())
    assert "were of the wrong type, negative or impossible" in meta["notes"]
    assert "draft_tokens" not in meta["metrics"]  # 9 accepted of 3 drafted was refused
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    props = manifest["server"]["llama_cpp_props"]
    assert props["total_slots"] == "many" and props["build_info"]["a"]["b"] == {
        "c": "(dict nested too deep, not recorded)"
    }
    check(folder)


def test_a_server_error_is_quoted_as_text_and_never_markup(tmp_path: Path) -> None:
    with HostileServer("markup-error") as server:
        code, out, folder = run(tmp_path, server.base_url)
    assert code == 1 and "no trial completed" in out  # nothing measured, nothing written
    assert not folder.exists() and not list((tmp_path / "runs").glob("*partial*"))


def test_server_text_after_a_good_trial_is_kept_verbatim_and_inert(tmp_path: Path) -> None:
    with HostileServer("markup-after-two") as server:
        code, out, folder = run(tmp_path, server.base_url, "--trials", "2")
    assert code == 0, out  # trial 1 is kept; no MarkupError from the server's "[/bold red]"
    assert "Stopped early:" in out
    notes = yaml.safe_load((folder / "run.yaml").read_text())["notes"]
    assert "Missing trials: concurrency=1: trials 2." in notes
    assert "The server's answer, verbatim:\n\n````text\nHTTP 500: [/bold red]" in notes
    check(folder)
    root = folder.parent.parent
    (root / "site_src").mkdir(exist_ok=True)
    result = CliRunner().invoke(app, ["generate", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    page = (root / "site_src" / "runs" / folder.name / "index.md").read_text()
    assert "<img src" not in page and '<pre><code class="language-text">HTTP 500' in page


def test_notes_quote_what_the_server_said(tmp_path: Path) -> None:
    from generator.runner.session import Outcome, code_block, notes

    outcome = Outcome([], "trial 2 at concurrency=1 failed: all 2 requests failed", "HTTP 500: ```[/bold] <img src=x>")
    text = notes(outcome, [{"concurrency": 1}], 2, []) or ""
    assert "The server's answer, verbatim:\n\n````text\nHTTP 500: ```[/bold] <img src=x>\n````" in text
    assert code_block("no backticks") == "```text\nno backticks\n```"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--timeout", "0"], "Error: --timeout: give seconds above 0"),
        (["--timeout", "-1"], "Error: --timeout: give seconds above 0"),
        (["--requests", "0"], "Error: --requests: give at least 1 request per trial"),
        (["--max-tokens", "0"], "Error: --max-tokens: give at least 1 token to generate"),
        (["--trials", "0"], "Error: --trials: give 1 to 100,000 trials"),
        (["--concurrency", "0"], "Error: --concurrency: give levels from 1 to 4096"),
        (["--prompts", "missing.jsonl"], "missing.jsonl: --prompts: no such file"),
        (["--manifest-extra", "missing.yaml"], "missing.yaml: --manifest-extra: no such file"),
        # an escape anywhere in the command line is refused before any option: it would be recorded
        (["--id", "Bad\x1bId"], "Error: command line: word 25 holds U+001B (ESC, which starts a terminal escape"),
    ],
)
def test_options_are_checked_before_the_first_request(tmp_path: Path, options: list[str], message: str) -> None:
    code, out, _ = run(tmp_path, "http://127.0.0.1:9/v1", *options)  # nothing listens on port 9
    assert code == 1 and message in out, out
    assert "server not reachable" not in out


def test_prompts_that_are_not_utf8_and_extras_that_do_not_parse(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_bytes(b'"caf\xe9"\n')
    code, out, _ = run(tmp_path, "http://127.0.0.1:9/v1", "--prompts", str(tmp_path / "p.jsonl"))
    assert code == 1 and "p.jsonl: --prompts: is not UTF-8 (byte 4)" in out
    (tmp_path / "x.yaml").write_text("kernels: [unclosed\n")
    code, out, _ = run(tmp_path, "http://127.0.0.1:9/v1", "--manifest-extra", str(tmp_path / "x.yaml"))
    assert code == 1 and "x.yaml:2: YAML syntax error" in out
    (tmp_path / "y.yaml").write_text("schema: benchledger.manifest/9\n")
    code, out, _ = run(tmp_path, "http://127.0.0.1:9/v1", "--manifest-extra", str(tmp_path / "y.yaml"))
    assert code == 1 and "y.yaml: schema: Input should be 'benchledger.manifest/1'" in out


def test_out_that_is_a_file_is_refused_before_measuring(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with HostileServer("bad-fields") as server:
        result = CliRunner().invoke(
            app, ["run", "openai", "--base-url", server.base_url, "--out", str(tmp_path / "file"), "--trials", "1"]
        )
    assert result.exit_code == 1 and "file: --out: is a file; give a folder for the run folders" in result.output


def test_run_command_refuses_what_it_cannot_start_or_read(tmp_path: Path) -> None:
    script = tmp_path / "bench.sh"
    script.write_text("#!/bin/sh\necho nan tok/s\n")
    base = ["run", "command", "--out", str(tmp_path / "runs"), "--trials", "2", "--warmup", "0"]
    result = CliRunner().invoke(app, [*base, "--", str(script)])
    assert result.exit_code == 1 and "is not executable; chmod +x it" in result.output
    script.chmod(0o755)
    result = CliRunner().invoke(app, [*base, "--metric", r"tps=([a-z0-9.]+) tok/s", "--", str(script)])
    assert result.exit_code == 1 and "'nan' is not a finite number" in result.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    script.write_bytes(b"#!/bin/sh\nprintf '\\377\\376 12.5 tok/s\\n'\n")
    result = CliRunner().invoke(
        app, [*base, "--metric", r"tps=([0-9.]+) tok/s", "--id", "2026-11-30-bytes", "--", str(script)]
    )
    assert result.exit_code == 0, result.output
    assert "12.5" in (tmp_path / "runs" / "2026-11-30-bytes" / "results.csv").read_text()
