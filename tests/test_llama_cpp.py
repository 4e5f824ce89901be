"""The runner against a real llama.cpp server doing speculative decoding (CPU, tiny models).

Needs the engine built by `python bench/engines/llama_cpp.py build` (CI does this);
skipped with that instruction otherwise.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path
from typing import Any

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
    assert "trial 3 of 4 at concurrency=1 failed: all 4 requests failed" in notes
    assert "Missing trials: concurrency=1: trials 3-4." in notes


# Drafted and accepted tokens per trial of the test bed at temperature 0, with 4 requests per
# unit of concurrency and 128 tokens each: the same in every trial of every committed run, on 1
# and 2 threads and a native build (runs/2026-11-29-testbed-nmax2, -nmax2-native, -nmax12,
# runs/2026-11-30-grid-nmax2-1t and -2t). They are counted, not timed: no load moves them.
COUNTED = {2: {1: (430, 289), 4: (1734, 1150)}, 12: {1: (1367, 385), 4: (6022, 1496)}}
COUNTED_FIGURES = ("draft_tokens", "draft_accepted", "acceptance")


def test_a_rerun_against_the_test_bed_is_judged_on_what_it_counts(tmp_path: Path, models: Path) -> None:
    """A drafted test-bed run (n_max 2), rerun three ways. Every assertion is on what the server
    counts, on the recorded environment or on the receipt's structure, never on a timed figure:
    a loaded machine moves tokens_per_second and the latencies by more than any margin (minutes
    apart on a shared 2-core VM, 0.69x to 1.44x), while the drafted and accepted tokens at
    temperature 0 are the same in every trial (COUNTED).

    - Against the same server: the counted figures agree at every condition, and the outcome
      printed is the one the receipt's statuses give, whatever the timed figures say.
    - Against a server with no draft: the recorded environment differs (speculative decoding
      off), so the rerun is refused and nothing is written.
    - Against a server drafting 12 tokens: drafted tokens and acceptance differ at every
      condition, so the rerun is not reproduced, however fast or slow the machine was."""
    from typer.testing import CliRunner

    from generator.analysis.reproduction import outcome_of
    from generator.cli import app

    def cli(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, list(args))
        assert "Traceback" not in result.output, result.output
        return result.exit_code, result.output

    def judged(name: str) -> dict[str, Any]:
        data = yaml.safe_load((pub / "runs" / run_id / "receipts" / name).read_text())["rerun"]
        assert isinstance(data, dict)
        return data

    pub = tmp_path / "pub"
    assert cli("init", str(pub))[0] == 0
    target, draft = engine.models(models, 0.02)
    run_id = "2026-11-30-testbed-rerun"
    rerun = ["rerun", run_id, "--by", "Ana", "--repo", str(pub), "--yes"]  # --date: the day the run records
    with engine.LlamaServer(BIN, target, draft, n_max=2, threads=2) as server:
        args = ["run", "openai", "--base-url", server.base_url, "--concurrency", "1,4", "--trials", "5"]
        args += ["--max-tokens", "128", "--id", run_id, "--out", str(pub / "runs")]
        code, out = cli(*args)
        assert code == 0, out
        with (pub / "runs" / run_id / "results.csv").open() as fh:
            counted = {
                (int(r["concurrency"]), int(r["draft_tokens"]), int(r["draft_accepted"])) for r in csv.DictReader(fh)
            }
        assert counted == {(c, *n) for c, n in COUNTED[2].items()}  # the same in every trial
        day = str(yaml.safe_load((pub / "runs" / run_id / "run.yaml").read_text())["date"])
        rerun += ["--date", day]  # a receipt may not predate its run, which was measured today
        code, out = cli(*rerun, "--base-url", server.base_url)
        assert code == 0, out
    same = judged(f"{day}-rerun-ana.yaml")
    status = {(f["metric"], f["at"]["concurrency"]): f["status"] for f in same["figures"]}
    assert {status[(name, c)] for name in COUNTED_FIGURES for c in (1, 4)} == {"agrees"}, same["figures"]
    assert not {"errors", "client_lag_p99_s"} & {name for name, _ in status}  # zero errors twice, the client's own
    assert same["differences"] == [] and {f["margin"] for f in same["figures"]} == {0.05}
    assert f"{outcome_of(list(status.values())).words}." in out  # printed as the statuses give it
    for kept in (pub / "runs" / run_id / "receipts").iterdir():  # the next reruns are written under the same name
        if kept.is_dir():
            shutil.rmtree(kept)
        else:
            kept.unlink()
    with engine.LlamaServer(BIN, target, threads=2) as server:
        code, out = cli(*rerun, "--base-url", server.base_url)
    assert code == 1 and "server.llama_cpp_props.slots.speculative: differs: True in the run" in out, out
    assert not any((pub / "runs" / run_id / "receipts").iterdir())
    with engine.LlamaServer(BIN, target, draft, n_max=12, threads=2) as server:
        code, out = cli(*rerun, "--base-url", server.base_url, "--allow-difference", "server")
    assert code == 0, out
    other = judged(f"{day}-rerun-ana.yaml")
    status = {(f["metric"], f["at"]["concurrency"]): f["status"] for f in other["figures"]}
    assert {status[(name, c)] for name in COUNTED_FIGURES for c in (1, 4)} == {"differs"}, other["figures"]
    ratio = {f["at"]["concurrency"]: f["ratio"] for f in other["figures"] if f["metric"] == "draft_tokens"}
    assert ratio == {c: round(COUNTED[12][c][0] / COUNTED[2][c][0], 6) for c in (1, 4)}
    assert "\nnot reproduced (" in out and other["allowed_differences"] == ["server"]
