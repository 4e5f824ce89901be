"""The runner against an in-process fake server and a deterministic command."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from fakeserver import Behaviour, FakeServer
from generator.cli import app
from generator.errors import BenchledgerError
from generator.runner import openai as oa
from generator.runner.asked import CommandOptions, Common, OpenAIOptions
from generator.runner.main import run_command, run_openai
from helpers import publication, unreachable_openai, write_tree

QUIET = Console(quiet=True)


def common(
    root: Path, run_id: str = "2026-11-29-fake", invocation: tuple[str, ...] = ("run", "openai"), **kw: object
) -> Common:
    """The options every run command shares; `invocation` is the command line as the CLI would
    record it (check refuses a run whose invocation disagrees with what its page shows)."""
    return Common(
        title=kw.pop("title", "fake"),  # type: ignore[arg-type]
        run_id=run_id,
        out=root / "runs",
        force=bool(kw.pop("force", False)),
        setup=["draft_n_max=4"],
        invocation=list(invocation),
    )


def openai_run(root: Path, server: FakeServer, **kw: object) -> Path:
    args = {
        "model": None,
        "endpoint": "chat",
        "prompts": None,
        "max_tokens": 16,
        "temperature": 0.0,
        "concurrency": [1, 2],
        "trials": 2,
        "warmup": 1,
        "requests": 4,
        "timeout": 10.0,
    }
    args.update(kw)
    called = common(root, invocation=("run", "openai", "--base-url", server.base_url))
    return run_openai(called, OpenAIOptions(base_url=server.base_url, **args), QUIET)  # type: ignore[arg-type]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def check(root: Path) -> str:
    write_tree(root, {k: v for k, v in publication().items() if not k.startswith("runs/")})
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    return result.output


def test_llama_cpp_stream_with_drafting(tmp_path: Path) -> None:
    behaviour = Behaviour(chunks=6, tokens_per_chunk=3, draft_n=20, draft_accepted=12, delay_s=0.002)
    with FakeServer(behaviour) as server:
        run = openai_run(tmp_path, server)
    results = rows(run / "results.csv")
    assert [(r["trial"], r["concurrency"]) for r in results] == [("1", "1"), ("2", "1"), ("1", "2"), ("2", "2")]
    for r in results:
        assert float(r["draft_tokens"]) == 4 * 20 and float(r["draft_accepted"]) == 4 * 12
        assert float(r["errors"]) == 0 and float(r["tokens_per_second"]) > 0
    requests = rows(run / "requests.csv")
    assert len(requests) == 4 * 4 and {r["output_tokens"] for r in requests} == {"18"}  # 6 chunks x 3 tokens
    # time per output token comes from token counts, not chunk counts: (latency - ttft) / 17
    for r in requests:
        assert float(r["latency_s"]) >= float(r["ttft_s"]) > 0
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["rates"] == {"acceptance": {"numerator": "draft_accepted", "denominator": "draft_tokens"}}
    assert meta["runner"]["output_tokens_source"] == ["timings.predicted_n"]
    assert meta["setup"] == {"draft_n_max": 4} and meta["warmup_trials"] == 1 and meta["trial_unit"] == "session"
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["server"]["llama_cpp_props"]["build_info"] == "b9999-fake"
    assert manifest["server"]["llama_cpp_props"]["generation_defaults"] == {"speculative.n_max": 4}
    assert manifest["server"]["llama_cpp_props"]["slots"] == {"count": 4, "speculative": True, "n_ctx": 1024}
    assert "cores" in manifest["host"]
    check(tmp_path)


def test_tpot_uses_tokens_not_chunks() -> None:
    r = oa.RequestResult(1, 0.0, ttft_s=0.1, latency_s=1.1, output_tokens=11)
    trial = oa.TrialResult(2.0, [r])
    row = trial.row()
    assert row["tpot_mean_s"] == pytest.approx(0.1)
    assert row["tokens_per_second"] == pytest.approx(5.5)


def test_vllm_stream_uses_usage_and_metrics_deltas(tmp_path: Path) -> None:
    with FakeServer(Behaviour(flavour="vllm", chunks=5, draft_n=30, draft_accepted=21)) as server:
        run = openai_run(tmp_path, server, concurrency=[2], trials=2)
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["runner"]["output_tokens_source"] == ["usage"]
    for r in rows(run / "results.csv"):
        assert float(r["draft_tokens"]) == 4 * 30 and float(r["draft_accepted"]) == 4 * 21
    assert yaml.safe_load((run / "manifest.yaml").read_text())["server"]["vllm_version"] == "0.0.0-fake"


def test_no_drafting_declares_no_acceptance(tmp_path: Path) -> None:
    with FakeServer(Behaviour(chunks=4)) as server:
        run = openai_run(tmp_path, server, concurrency=[1], trials=2)
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert "rates" not in meta and "draft_tokens" not in meta["metrics"]
    assert {r["draft_tokens"] for r in rows(run / "requests.csv")} == {"0"}


def test_faults_are_counted_per_request(tmp_path: Path) -> None:
    behaviour = Behaviour(chunks=6, fail_requests={2}, drop_requests={7}, malformed_every=3)
    with FakeServer(behaviour) as server:
        run = openai_run(tmp_path, server, concurrency=[1], trials=2, warmup=0)
    requests = rows(run / "requests.csv")
    errors = [r["error"] for r in requests if r["error"]]
    assert errors[0].startswith("HTTP 500") and len(errors) == 2
    assert [float(r["errors"]) for r in rows(run / "results.csv")] == [1.0, 1.0]
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert "2 requests failed and 2 malformed SSE lines were skipped" in meta["notes"], meta["notes"]


def test_unreachable_server_fails_before_the_first_trial(tmp_path: Path) -> None:
    with pytest.raises(BenchledgerError, match=r"127.0.0.1:9/v1/models: server not reachable"):
        run_openai(common(tmp_path), unreachable_openai(), QUIET)
    assert not (tmp_path / "runs" / "2026-11-29-fake").exists()


def test_server_dying_mid_run_keeps_completed_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer(Behaviour(chunks=4)).__enter__()
    calls = []
    real = oa.run_trial

    async def dying(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 4:  # warmup, trial 1, trial 2, then the server goes away
            server.stop()
        return await real(*args, **kwargs)

    monkeypatch.setattr(oa, "run_trial", dying)
    run = openai_run(tmp_path, server, concurrency=[1], trials=5)
    assert [r["trial"] for r in rows(run / "results.csv")] == ["1", "2"]
    notes = yaml.safe_load((run / "run.yaml").read_text())["notes"]
    assert "This run was interrupted: trial 3 of 5 at concurrency=1 failed: all 4 requests failed" in notes
    assert "Missing trials: concurrency=1: trials 3-5." in notes
    assert not list((tmp_path / "runs").glob("*partial*"))
    check(tmp_path)


def test_existing_run_folder_needs_force(tmp_path: Path) -> None:
    (tmp_path / "runs" / "2026-11-29-fake").mkdir(parents=True)
    (tmp_path / "runs" / "2026-11-29-fake" / "mine.txt").write_text("keep")
    with FakeServer() as server, pytest.raises(BenchledgerError, match="already exists; pass --force"):
        openai_run(tmp_path, server, concurrency=[1], trials=1)
    assert (tmp_path / "runs" / "2026-11-29-fake" / "mine.txt").read_text() == "keep"


PROGRAM = "import sys; print('speed 12.5 tok/s'); print('{\"r\": {\"score\": 3}}')"


def test_command_runner_parses_figures(tmp_path: Path) -> None:
    asked = CommandOptions(
        command=[sys.executable, "-c", PROGRAM],
        trials=3,
        warmup=1,
        regexes=["tokens_per_second=([0-9.]+) tok/s"],
        json_paths=["score=r.score"],
        timeout=30.0,
    )
    run = run_command(
        common(tmp_path, invocation=("run", "command", "--", sys.executable, "-c", PROGRAM)), asked, QUIET
    )
    results = rows(run / "results.csv")
    assert [(r["trial"], r["tokens_per_second"], r["score"]) for r in results] == [
        ("1", "12.5", "3"),
        ("2", "12.5", "3"),
        ("3", "12.5", "3"),
    ]
    assert all(float(r["wall_seconds"]) > 0 for r in results)
    assert yaml.safe_load((run / "run.yaml").read_text())["trial_unit"] == "process"
    check(tmp_path)


def test_command_runner_stops_after_three_failures_in_a_row(tmp_path: Path) -> None:
    with pytest.raises(BenchledgerError, match="3 failures in a row"):
        failing = [sys.executable, "-c", "import sys; sys.exit(3)"]
        run_command(common(tmp_path), CommandOptions(command=failing, trials=3, warmup=0, timeout=30.0), QUIET)
    assert not (tmp_path / "runs" / "2026-11-29-fake").exists()


def test_run_command_cli_reports_bad_metric_flag(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "command", "--metric", "no-equals", "--out", str(tmp_path), "--", "true"])
    assert result.exit_code == 1
    assert "--metric: 'no-equals': write NAME=REGEX" in result.output


def test_ctrl_c_keeps_completed_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = oa.run_trial

    async def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:  # warmup, trial 1, then Ctrl-C during trial 2
            raise KeyboardInterrupt
        return await real(*args, **kwargs)

    monkeypatch.setattr(oa, "run_trial", interrupted)
    with FakeServer(Behaviour(chunks=4)) as server:
        run = openai_run(tmp_path, server, concurrency=[1], trials=3)
    assert [r["trial"] for r in rows(run / "results.csv")] == ["1"]
    notes = yaml.safe_load((run / "run.yaml").read_text())["notes"]
    assert "interrupted (Ctrl-C); the trial in progress was dropped" in notes
    assert "Missing trials: concurrency=1: trials 2-3." in notes


def test_cli_run_openai_with_prompts_file_and_completions_endpoint(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('"Say hello."\n[{"role": "user", "content": "Count to three."}]\n{"prompt": "Name a colour."}\n')
    with FakeServer(Behaviour(chunks=3)) as server:
        result = CliRunner().invoke(
            app,
            [
                "run",
                "openai",
                "--base-url",
                server.base_url,
                "--endpoint",
                "completions",
                "--prompts",
                str(prompts),
                "--concurrency",
                "1,2",
                "--trials",
                "2",
                "--warmup",
                "0",
                "--requests",
                "3",
                "--setup",
                "n=1",
                "--title",
                "CLI run",
                "--id",
                "2026-11-29-cli",
                "--out",
                str(tmp_path / "runs"),
                "--keep-paths",
            ],
        )
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "2026-11-29-cli"
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["runner"]["endpoint"] == "completions" and meta["runner"]["prompts"] == str(prompts)
    assert meta["runner"]["invocation"][:5] == ["benchledger", "run", "openai", "--base-url", server.base_url]
    assert "--concurrency" in meta["runner"]["invocation"] and meta["setup"] == {"n": 1}
    assert "--keep-paths" in meta["runner"]["invocation"]  # a rerun keeps them too
    assert len(rows(run / "requests.csv")) == 2 * 2 * 3


def test_a_runner_written_run_names_files_not_the_machines_folders(tmp_path: Path) -> None:
    """By default every local path the runner would record (the prompts file, --out, the manifest
    extra, a --setup value, the model file the server reports) is written as its file name, in
    every file of the run folder; the invocation still agrees with the page, so check accepts it."""
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('"Say hello."\n')
    extra = tmp_path / "extra.yaml"
    extra.write_text(f"kernels:\n  draft: {tmp_path}/kernels/draft.so\n")
    with FakeServer(Behaviour(chunks=2)) as server:
        args = ["run", "openai", "--base-url", server.base_url, "--prompts", str(prompts), "--trials", "2"]
        args += ["--warmup", "0", "--requests", "2", "--setup", f"model={tmp_path}/m.gguf", "--manifest-extra"]
        args += [str(extra), "--id", "2026-11-29-paths", "--out", str(tmp_path / "runs")]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "2026-11-29-paths"
    texts = {p.relative_to(run).as_posix(): p.read_text() for p in run.rglob("*") if p.is_file()}
    assert [name for name, text in texts.items() if str(tmp_path) in text or "/models/" in text] == []
    meta = yaml.safe_load(texts["run.yaml"])
    assert meta["runner"]["prompts"] == "prompts.jsonl" and meta["setup"] == {"model": "m.gguf"}
    invocation = meta["runner"]["invocation"]
    assert invocation[invocation.index("--prompts") + 1] == "prompts.jsonl"
    assert invocation[invocation.index("--out") + 1] == "runs" and "model=m.gguf" in invocation
    manifest = yaml.safe_load(texts["manifest.yaml"])
    assert manifest["server"]["llama_cpp_props"]["model_path"] == "fake.gguf"
    assert manifest["kernels"] == {"draft": "draft.so"}
    assert "Local paths were reduced to their file names (`fake.gguf`, `extra.yaml`" in meta["notes"]
    check(tmp_path)


def test_the_measured_program_keeps_its_path_so_a_rerun_runs_the_same_one(tmp_path: Path) -> None:
    """The program after `--` is what a rerun runs: /abs/python reduced to `python` would run
    whatever `python` is on the rerunner's PATH, so it stays as written, while --out is reduced."""
    script = tmp_path / "bench.py"
    script.write_text("print('tokens_per_second 42.5')\n")
    args = ["run", "command", "--trials", "2", "--warmup", "0", "--id", "2026-11-29-prog", "--title", "prog"]
    args += ["--metric", "tokens_per_second=tokens_per_second ([0-9.]+)", "--out", str(tmp_path / "runs")]
    result = CliRunner().invoke(app, [*args, "--", sys.executable, str(script)])
    assert result.exit_code == 0, result.output
    meta = yaml.safe_load((tmp_path / "runs" / "2026-11-29-prog" / "run.yaml").read_text())
    assert meta["runner"]["command"] == [sys.executable, str(script)]
    invocation = meta["runner"]["invocation"]
    assert invocation[invocation.index("--") + 1 :] == [sys.executable, str(script)]
    assert invocation[invocation.index("--out") + 1] == "runs"
    assert "(`runs`)" in meta["notes"] and "python" not in meta["notes"]
    check(tmp_path)


def test_bad_prompts_file_names_the_line(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('"fine"\nnot json\n')
    with pytest.raises(BenchledgerError, match=r"prompts.jsonl:2: not JSON"):
        oa.load_prompts(str(prompts))


def test_stream_parser_handles_split_reads_crlf_and_special_lines() -> None:
    from generator.runner.sse import StreamParser

    absorbed: list[dict] = []
    content = oa._content
    parser = StreamParser(0.0, absorbed.append, content)
    stream = (
        b'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\r\n\r\n'
        b'data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\n'
        b'data: {"choices":[{"delta":{"content":"b"}}]}\n\n'
        b'data: {"choices":[{"delta":{"reasoning_content":"think"}}]}\n\n'
        b": keep-alive comment\n\n"
        b"data: {not json\n\n"
        b'data: {"choices":[{"delta":{"content":"c"}}]}\n\n'
        b'data: {"choices":[],"usage":{"completion_tokens":4}}\n\n'
        b"data: [DONE]\n\n"
    )
    done = False
    for i, cut in enumerate(range(0, len(stream), 37)):  # reads that split lines anywhere
        done = parser.feed(stream[cut : cut + 37], float(i + 1))
        if done:
            break
    assert done and parser.finished
    assert parser.chunks == 4  # a, b, the reasoning chunk, c; the empty first chunk is not content
    assert parser.malformed == 1
    assert parser.ttft_s is not None and parser.ttft_s > 0
    assert any("usage" in chunk for chunk in absorbed)


def test_stream_parser_counts_a_large_read_in_bulk() -> None:
    from generator.runner.sse import StreamParser

    line = b'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n'
    tail = b'data: {"choices":[{"delta":{}}],"timings":{"predicted_n":1000}}\n\ndata: [DONE]\n\n'
    absorbed: list[dict] = []
    parser = StreamParser(0.0, absorbed.append, oa._content)
    assert parser.feed(line * 1000 + tail, 0.5)
    assert parser.chunks == 1000 and parser.ttft_s == 0.5 and absorbed[0]["timings"]["predicted_n"] == 1000


def test_run_command_declares_units_and_directions_and_check_warns_without(tmp_path: Path) -> None:
    program = [sys.executable, "-c", PROGRAM]
    args = [
        "run",
        "command",
        "--trials",
        "2",
        "--warmup",
        "0",
        "--out",
        str(tmp_path / "runs"),
        "--id",
        "2026-11-29-decl",
    ]
    args += ["--metric", "tokens_per_second=([0-9.]+) tok/s", "--json-metric", "score=r.score"]
    result = CliRunner().invoke(
        app, [*args, "--unit", "tokens_per_second=tok/s", "--better", "tokens_per_second=higher", "--", *program]
    )
    assert result.exit_code == 0, result.output
    metrics = yaml.safe_load((tmp_path / "runs" / "2026-11-29-decl" / "run.yaml").read_text())["metrics"]
    assert metrics["tokens_per_second"] == {"unit": "tok/s", "better": "higher"}
    assert metrics["score"] == {}
    (tmp_path / "mkdocs.yml").write_text("site_name: t\ndocs_dir: site_src\nplugins: [benchledger]\n")
    checked = CliRunner().invoke(app, ["check", "--repo", str(tmp_path)])
    assert checked.exit_code == 0
    assert (
        "Warning: runs/2026-11-29-decl/run.yaml: metrics.score: has neither unit nor better: claims cannot judge it "
        "and readers cannot tell what it counts; add e.g. {unit: tok/s, better: higher}"
    ) in checked.output
    assert "tokens_per_second: has neither" not in checked.output


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--better=tokens_per_second=faster", "--better 'tokens_per_second=faster': the direction is higher or lower"),
        ("--unit=nope=tok/s", "--unit/--better name 'nope', which no --metric or --json-metric reads"),
        ("--unit=tokens_per_second=\x1b[31mtok", "write NAME=UNIT (printable, at most 40 characters)"),
        ("--unit=tokens_per_second=" + "x" * 41, "write NAME=UNIT (printable, at most 40 characters)"),
    ],
)
def test_run_command_refuses_bad_declarations(tmp_path: Path, flag: str, message: str) -> None:
    args = ["run", "command", "--out", str(tmp_path), "--metric", "tokens_per_second=([0-9.]+)", flag, "--", "true"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert message in result.output


def test_path_reduction_keeps_sentences_and_catches_other_users_homes_and_file_urls(tmp_path: Path) -> None:
    """A title that only starts like a path stays as written; `~alice/`, `file://` and a path
    with a space in a folder name are still somebody's disk."""
    args = ["run", "command", "--trials", "2", "--warmup", "0", "--id", "2026-11-29-words", "--out", str(tmp_path)]
    args += ["--title", "/tmp/ cleanup makes decode 2x faster", "--metric", "v=v=([0-9]+)"]
    for setup in ("a=~alice/m.gguf", "b=file:///home/alice/m.gguf", "c=/Users/Ana Smith/m.gguf", "d=/v1/completions"):
        args += ["--setup", setup]
    result = CliRunner().invoke(app, [*args, "--", "echo", "v=5"])
    assert result.exit_code == 0, result.output
    meta = yaml.safe_load((tmp_path / "2026-11-29-words" / "run.yaml").read_text())
    assert meta["title"] == "/tmp/ cleanup makes decode 2x faster"
    assert meta["setup"] == {"a": "m.gguf", "b": "m.gguf", "c": "m.gguf", "d": "/v1/completions"}


def test_ctrl_c_stops_and_reaps_the_measured_command(tmp_path: Path) -> None:
    """A Ctrl-C while a command is measured kills it and collects its exit at once: nothing keeps
    running after the runner, and no zombie is left for the garbage collector to warn about
    (subprocess.run gave the child only a quarter second and left it unreaped)."""
    import os
    import signal
    import time

    from generator.runner.command import execute

    pid_file = tmp_path / "pid"

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            execute(["sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 30'], [], timeout=None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - start < 5
    with pytest.raises(ProcessLookupError):  # gone, and reaped: a zombie would still answer
        os.kill(int(pid_file.read_text()), 0)


def test_a_timeout_holds_when_the_command_leaves_a_child_holding_its_output() -> None:
    """The command is killed at its timeout even when a process it started keeps the output pipe
    open (reading the pipe to its end would wait for that child)."""
    import time

    from generator.runner.command import execute

    start = time.perf_counter()
    done = execute(["sh", "-c", "sleep 3 & sleep 4"], [], timeout=0.3)
    assert time.perf_counter() - start < 2 and done.error == "timed out after 0.3 s"
