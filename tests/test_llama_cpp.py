"""The runner against a real llama.cpp server doing speculative decoding (CPU, tiny models).

Needs the engine built by `python bench/engines/llama_cpp.py build` (CI does this);
skipped with that instruction otherwise.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from generator.runner import openai as oa
from generator.runner.asked import Common, OpenAIOptions
from generator.runner.main import run_openai

sys.path.insert(0, str(Path(__file__).parents[1] / "bench" / "engines"))
import llama_cpp as engine

BIN = engine.cache_root() / "build" / "bin"
pytestmark = pytest.mark.skipif(
    not (BIN / "llama-server").is_file(),
    reason="llama-server not built: run `python bench/engines/llama_cpp.py build` (about 6 minutes)",
)
QUIET = Console(quiet=True)
WIDE = (
    "--margin",
    "60%",
)  # a shared 2-core VM: see test_a_rerun_against_the_test_bed_does_not_differ_and_another_draft_does


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return engine.cache_root() / "models"


def measure(
    tmp_path: Path,
    server: engine.LlamaServer,
    run_id: str,
    concurrency: list[int],
    trials: int = 2,
    max_tokens: int = 48,
) -> Path:
    common = Common(
        title="llama.cpp test bed",
        run_id=run_id,
        out=tmp_path / "runs",
        force=False,
        benchmark="llama-cpp-testbed",
        invocation=["run", "openai"],
    )
    asked = OpenAIOptions(
        base_url=server.base_url,
        model=None,
        endpoint="chat",
        prompts=None,
        max_tokens=max_tokens,
        temperature=0.0,
        concurrency=concurrency,
        trials=trials,
        warmup=1,
        requests=None,
        timeout=120.0,
    )
    return run_openai(common, asked, QUIET)


def acceptance(run: Path) -> float:
    with (run / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    return sum(float(r["draft_accepted"]) for r in rows) / sum(float(r["draft_tokens"]) for r in rows)


def test_no_draft_records_zero_drafted(tmp_path: Path, models: Path) -> None:
    target, _ = engine.models(models, None)
    with engine.LlamaServer(BIN, target) as server:
        run = measure(tmp_path, server, "2026-11-29-nodraft", [1, 4])
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert "rates" not in meta
    with (run / "requests.csv").open() as fh:
        assert {r["draft_tokens"] for r in csv.DictReader(fh)} == {"0"}
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["server"]["llama_cpp_props"]["build_info"]
    assert manifest["server"]["llama_cpp_props"]["slots"]["speculative"] is False


def test_identical_draft_accepts_nearly_everything(tmp_path: Path, models: Path) -> None:
    target, draft = engine.models(models, 0.0)
    with engine.LlamaServer(BIN, target, draft, n_max=4) as server:
        run = measure(tmp_path, server, "2026-11-29-identical", [1, 4])
    assert acceptance(run) > 0.9
    manifest = yaml.safe_load((run / "manifest.yaml").read_text())
    assert manifest["server"]["llama_cpp_props"]["slots"]["speculative"] is True


def test_noisy_draft_accepts_much_less(tmp_path: Path, models: Path) -> None:
    target, draft = engine.models(models, 0.3)
    with engine.LlamaServer(BIN, target, draft, n_max=4) as server:
        run = measure(tmp_path, server, "2026-11-29-noisy", [1, 4])
    assert acceptance(run) < 0.6


def test_killing_the_server_mid_run_keeps_completed_trials(
    tmp_path: Path, models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, _ = engine.models(models, None)
    server = engine.LlamaServer(BIN, target).start()
    calls = []
    real = oa.run_trial

    async def killing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 4:  # warmup, trial 1, trial 2; the server dies before trial 3
            server.stop()
        return await real(*args, **kwargs)

    monkeypatch.setattr(oa, "run_trial", killing)
    try:
        run = measure(tmp_path, server, "2026-11-29-killed", [1], trials=4, max_tokens=16)
    finally:
        server.stop()
    with (run / "results.csv").open() as fh:
        assert [r["trial"] for r in csv.DictReader(fh)] == ["1", "2"]
    notes = yaml.safe_load((run / "run.yaml").read_text())["notes"]
    assert "trial 3/4 at concurrency=1 failed: all 4 requests failed" in notes
    assert "Missing trials: concurrency=1: trials 3-4." in notes


def test_a_rerun_against_the_test_bed_does_not_differ_and_another_draft_does(tmp_path: Path, models: Path) -> None:
    """A committed test-bed run is rerun against the same server: its throughput does not differ
    at the margin a verifier sets for this machine. Against a server with a draft, the recorded
    environment differs (refused until allowed), and under the default rule the rerun is not
    reproduced, with tokens_per_second among the figures that differ.

    The same-server rerun is judged at ±60%, as on any shared machine: a 2-core VM's speed moves
    between minutes by more than the noise inside one run. Measured for the same server, minutes
    apart: tokens_per_second ratios 0.81-1.44 in eleven reruns here and 0.69 once in CI, each
    with a tight interval (at the default ±5%, most read "differs"). The drafted server costs
    2.5x at concurrency 1 and 4x at 4 (runs/2026-11-29-testbed-nmax12 against -nodraft)."""
    from typer.testing import CliRunner

    from generator.cli import app

    def cli(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, list(args))
        assert "Traceback" not in result.output, result.output
        return result.exit_code, result.output

    pub = tmp_path / "pub"
    assert cli("init", str(pub))[0] == 0
    target, draft = engine.models(models, 0.02)
    run_id = "2026-11-30-testbed-rerun"
    with engine.LlamaServer(BIN, target, threads=2) as server:
        args = ["run", "openai", "--base-url", server.base_url, "--concurrency", "2", "--trials", "5"]
        args += ["--max-tokens", "128", "--requests", "16", "--id", run_id, "--out", str(pub / "runs")]
        code, out = cli(*args)
        assert code == 0, out
        code, out = cli("rerun", run_id, "--by", "Ana", "--repo", str(pub), "--date", "2026-11-30", "--yes", *WIDE)
        assert code == 0, out
    (first,) = (pub / "runs" / run_id / "receipts").glob("*.yaml")
    same = yaml.safe_load(first.read_text())["rerun"]
    status = {f["metric"]: f["status"] for f in same["figures"]}
    assert {f["margin"] for f in same["figures"]} == {0.6}
    # Same server, minutes apart: throughput does not differ at the machine's margin; latency
    # percentiles of a few requests may stay unsettled.
    assert status["tokens_per_second"] != "differs", same["figures"]
    assert "errors" not in status and "client_lag_p99_s" not in status  # zero errors twice, and the client, go unjudged
    assert same["differences"] == []
    first.unlink()  # the second rerun is written under the same name: receipts are never overwritten
    shutil.rmtree(first.with_suffix(""))
    # n_max 12 with the noisy draft costs about 3x in throughput on the test bed (runs/2026-11-29-testbed-*),
    # far beyond any noise margin; n_max 2 costs about 1.6x, which a noisy machine can hide.
    with engine.LlamaServer(BIN, target, draft, n_max=12, threads=2) as server:
        rerun = ["rerun", run_id, "--by", "Ana", "--repo", str(pub), "--base-url", server.base_url, "--yes"]
        code, out = cli(*rerun)
        assert code == 1 and "server.llama_cpp_props.slots.speculative: differs: False in the run" in out, out
        code, out = cli(*rerun, "--allow-difference", "server", "--date", "2026-11-30")
        assert code == 0, out
    assert "not reproduced" in out
    other = yaml.safe_load((pub / "runs" / run_id / "receipts" / "2026-11-30-rerun-ana.yaml").read_text())["rerun"]
    differs = [f for f in other["figures"] if f["status"] == "differs"]
    assert "tokens_per_second" in {f["metric"] for f in differs}, other["figures"]
    assert {f["margin"] for f in other["figures"]} == {0.05}
    assert other["allowed_differences"] == ["server"]
    assert "server.llama_cpp_props.slots.speculative" in {d["key"] for d in other["differences"]}
