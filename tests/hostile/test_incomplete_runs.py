"""An interrupted run keeps its completed trials as a run marked `incomplete:` (with the reason
and the count), never in a hidden folder and never lost: Ctrl-C, SIGTERM, a `--workers` process
killed, a failed trial, and an exception inside the runner. Each interruption is caused by the
measured program itself or at a fixed trial, so nothing depends on timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dying_worker
import pytest
import yaml
from rich.console import Console

from fakeserver import Behaviour, FakeServer
from generator.runner import openai as oa
from generator.runner import workers
from generator.runner.asked import CommandOptions, Common, OpenAIOptions
from generator.runner.main import run_command, run_openai
from generator.runner.options import LoadOptions
from helpers import publication, write_tree

QUIET = Console(quiet=True)
RUN_ID = "2026-12-01-cut"


def common(root: Path, invocation: list[str]) -> Common:
    return Common(title="cut short", run_id=RUN_ID, out=root / "runs", force=False, invocation=invocation)


def incomplete(root: Path) -> Any:
    return yaml.safe_load((root / "runs" / RUN_ID / "run.yaml").read_text()).get("incomplete")


def trials_in(root: Path) -> list[str]:
    lines = (root / "runs" / RUN_ID / "results.csv").read_text().splitlines()
    return [line.split(",")[0] for line in lines[1:]]


def no_scratch(root: Path) -> None:
    assert sorted(p.name for p in (root / "runs").iterdir()) == [RUN_ID]


def check_accepts(root: Path) -> str:
    from typer.testing import CliRunner

    from generator.cli import app

    write_tree(root, {k: v for k, v in publication().items() if not k.startswith("runs/")})
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    return result.output


def measure(root: Path, base_url: str, *, concurrency: int, trials: int, **more: Any) -> None:
    """`run openai` against the fake server: 2 requests a trial, no warm-up."""
    asked = OpenAIOptions(
        base_url=base_url,
        model=None,
        endpoint="chat",
        prompts=None,
        max_tokens=8,
        temperature=0.0,
        concurrency=[concurrency],
        trials=trials,
        warmup=0,
        requests=2,
        timeout=10.0,
        **more,
    )
    run_openai(common(root, ["run", "openai", "--base-url", base_url]), asked, QUIET)


def test_a_killed_worker_process_keeps_the_completed_trials_as_an_incomplete_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = workers.run_parts
    calls: list[int] = []

    def third_trial_dies(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:  # trials 1 and 2 complete; in trial 3 a worker process is killed (SIGKILL)
            monkeypatch.setattr(workers, "_worker", dying_worker.die)
        return real(*args)

    monkeypatch.setattr(workers, "run_parts", third_trial_dies)
    with FakeServer(Behaviour(chunks=2)) as server:
        measure(tmp_path, server.base_url, concurrency=2, trials=4, load=LoadOptions(workers=2))
    assert trials_in(tmp_path) == ["1", "2"]
    assert incomplete(tmp_path) == {
        "reason": "trial 3 of 4 at concurrency=2 failed: --workers: a worker process failed (exited before it "
        "finished); run with --workers 1 to see the error",
        "completed_trials": 2,
        "planned_trials": 4,
    }
    no_scratch(tmp_path)
    check_accepts(tmp_path)


def test_ctrl_c_marks_the_run_incomplete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = oa.run_trial

    async def interrupted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return await real(*args, **kwargs)

    monkeypatch.setattr(oa, "run_trial", interrupted)
    with FakeServer(Behaviour(chunks=2)) as server:
        measure(tmp_path, server.base_url, concurrency=1, trials=3)
    assert incomplete(tmp_path) == {
        "reason": "interrupted (Ctrl-C); the trial in progress was dropped",
        "completed_trials": 1,
        "planned_trials": 3,
    }
    no_scratch(tmp_path)


def test_sigterm_keeps_the_completed_trials_as_an_incomplete_run(tmp_path: Path) -> None:
    """`docker stop`, systemd and CI cancel a job with SIGTERM; the measured program sends it to
    the runner itself during its third execution."""
    flag = tmp_path / "count"
    program = (
        "import os, signal\n"
        f"n = int(open({str(flag)!r}).read()) + 1 if os.path.exists({str(flag)!r}) else 1\n"
        f"open({str(flag)!r}, 'w').write(str(n))\n"
        "if n == 3:\n"
        "    os.kill(os.getppid(), signal.SIGTERM)\n"
    )
    argv = [sys.executable, "-m", "generator.cli", "run", "command", "--id", RUN_ID, "--out", str(tmp_path / "runs")]
    argv += ["--trials", "5", "--warmup", "0", "--", sys.executable, "-c", program]
    env = dict(os.environ, COLUMNS="200")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    said = " ".join((done.stdout + done.stderr).split())
    assert "Traceback" not in said
    assert trials_in(tmp_path) == ["1", "2"]
    assert incomplete(tmp_path) == {
        "reason": "stopped by SIGTERM; the trial in progress was dropped",
        "completed_trials": 2,
        "planned_trials": 5,
    }
    assert f"Wrote {tmp_path / 'runs' / RUN_ID} (incomplete: 2 of 5 trials completed)" in said
    no_scratch(tmp_path)


def test_an_exception_inside_the_runner_keeps_the_completed_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.runner import command as cmd

    real = cmd.execute
    calls: list[int] = []

    def broken(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("a bug in the runner")
        return real(*args)

    monkeypatch.setattr(cmd, "execute", broken)
    program = [sys.executable, "-c", "pass"]
    with pytest.raises(RuntimeError, match="a bug in the runner"):
        run_command(
            common(tmp_path, ["run", "command", "--", *program]),
            CommandOptions(command=program, trials=4, warmup=0, timeout=30.0),
            QUIET,
        )
    assert trials_in(tmp_path) == ["1", "2"]
    assert incomplete(tmp_path) == {
        "reason": "the runner failed (RuntimeError: a bug in the runner); the trial in progress was dropped",
        "completed_trials": 2,
        "planned_trials": 4,
    }
    no_scratch(tmp_path)


def test_a_complete_run_carries_no_incomplete_mark(tmp_path: Path) -> None:
    program = [sys.executable, "-c", "pass"]
    run_command(
        common(tmp_path, ["run", "command", "--", *program]),
        CommandOptions(command=program, trials=2, warmup=0, timeout=30.0),
        QUIET,
    )
    assert incomplete(tmp_path) is None


# --- what a reader sees of an incomplete run --------------------------------------

CUT = {
    "reason": "interrupted (Ctrl-C); the trial in progress was dropped",
    "completed_trials": 10,
    "planned_trials": 20,
}


def judged(tmp_path: Path, **fields: object) -> tuple[dict[str, str], Any]:
    """The pages of the two-run claim publication whose candidate run is incomplete, and the claim's
    evaluation."""
    import html

    from builders import claim, repo_with
    from generator.analysis.audit import audit
    from generator.analysis.claims import evaluate_all
    from generator.analysis.comparison import Settings
    from helpers import generate

    root = repo_with(tmp_path, [claim(**fields)], incomplete=CUT)
    ledger = audit(root, stale_is_error=False).ledger
    pages = {k: html.unescape(v.decode()) for k, v in generate(root).items() if k.endswith((".md", ".json"))}
    return pages, evaluate_all(ledger, Settings())["shortlist-c8"]


def test_a_claim_resting_on_an_incomplete_run_gets_the_verdict_incomplete_run(tmp_path: Path) -> None:
    pages, ev = judged(tmp_path)
    assert ev.verdict == "incomplete run"
    assert ev.reason.startswith(
        "Run 2026-09-01-shortlist stopped after 10 of 20 trials (interrupted (Ctrl-C); the trial in progress was "
        "dropped). On the trials it has, the claim would be contradicted: "
    )
    assert "would be contradicted: Contradicted" not in ev.reason  # the verdict said once
    assert ev.reason.endswith(
        ". To judge it on them, add `incomplete: accepted` to the claim; or measure the run again in full."
    )
    assert ev.flags == ["unverified run"]  # the verdict says it: no flag "incomplete run" beside it
    card = pages["claims/shortlist-c8/index.md"]
    assert '<span class="bl-verdict bl-verdict--incomplete-run">incomplete run</span>' in card
    assert '<span class="bl-flag bl-flag--problem">incomplete run</span>' not in card
    assert "Run 2026-09-01-shortlist stopped after 10 of 20 trials (" in card
    assert "To judge it on them, add <code>incomplete: accepted</code> to the claim; or measure" in card
    assert '"verdict": "incomplete run"' in pages["ledger/claims.json"]


def test_every_surface_gives_a_claim_on_an_incomplete_run_the_same_verdict(tmp_path: Path) -> None:
    """The card said "incomplete run" while the forest label, its colour and the forest table's
    Verdict column said "inconclusive" (the verdict of the trials alone)."""
    import json

    from generator.render.forest import VERDICT_COLORS

    pages, ev = judged(tmp_path)
    assert [c.verdict for c in ev.conditions] == ["incomplete run"]
    card = pages["claims/shortlist-c8/index.md"]
    assert '<td data-label="Verdict">incomplete run</td>' in card  # the forest table
    spec = json.loads(pages["claims/shortlist-c8/charts/forest.json"])
    (row,) = spec["datasets"]["table"]
    assert row["verdict"] == "incomplete run"  # coloured by it
    assert row["label"] == "The shortlist is faster\nincomplete run: -4.2%\n[-7.1%, -1.1%]"
    scale = next(layer["encoding"]["fill"]["scale"] for layer in spec["layer"] if "fill" in layer.get("encoding", {}))
    assert dict(zip(scale["domain"], scale["range"], strict=True))["incomplete run"] == VERDICT_COLORS["incomplete run"]
    rows = [r for r in json.loads(pages["ledger/claims.json"]) if r["claim"] == "shortlist-c8"]
    assert [(r["verdict"], r["condition_verdict"]) for r in rows] == [("incomplete run", "incomplete run")]
    index = pages["claims/index.md"]
    assert 'data-bl-verdict="incomplete run">incomplete run (1)</button>' in index  # the ledger's counts
    assert '<span class="bl-verdict bl-verdict--incomplete-run">incomplete run</span>' in index
    assert "bl-flag--problem" not in index


def test_incomplete_accepted_judges_the_claim_on_the_trials_it_has(tmp_path: Path) -> None:
    pages, ev = judged(tmp_path, incomplete="accepted")
    assert ev.verdict == "contradicted"
    assert "incomplete run" in ev.flags
    assert '<span class="bl-flag bl-flag--problem">incomplete run</span>' in pages["claims/shortlist-c8/index.md"]


def test_the_run_page_says_the_run_is_incomplete_before_anything_else(tmp_path: Path) -> None:
    pages, _ = judged(tmp_path)
    page = pages["runs/2026-09-01-shortlist/index.md"]
    said = (
        '<p class="admonition-title">Incomplete run: 10 of 20 trials completed; interrupted (Ctrl-C); the trial '
        "in progress was dropped</p>"
    )
    assert said in page
    assert page.index(said) < page.index('<table data-bl-table="pairs">')  # above the run's own table
    assert "**incomplete run**" in pages["methods.md"]
    index = pages["runs/index.md"]
    row = index[index.index("2026-09-01-shortlist/") :]
    assert row.index('<span class="bl-sub">incomplete run</span>') < row.index("</tr>")


def test_check_refuses_an_incomplete_count_that_results_csv_does_not_hold(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from builders import claim, repo_with
    from generator.cli import app

    root = repo_with(tmp_path, [claim()], incomplete=dict(CUT, completed_trials=9))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1
    assert (
        "runs/2026-09-01-shortlist/run.yaml:28: incomplete.completed_trials: says 9 but results.csv holds 10 trial "
        "rows (one per trial and condition); make them agree" in said
    )


def test_a_rerun_cut_short_is_refused_not_receipted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun whose runner stopped early (here: its command fails from the fourth execution on)
    is an incomplete run: comparing its two trials with the run's five would receipt a rerun that
    never finished."""
    from typer.testing import CliRunner

    from generator.cli import app

    root, count, run = tmp_path / "pub", tmp_path / "executions", "2026-11-30-steady"
    assert CliRunner().invoke(app, ["init", str(root)]).exit_code == 0
    script = 'if [ -n "$COUNT" ]; then echo x >> "$COUNT"; [ "$(wc -l < "$COUNT")" -ge 4 ] && exit 1; fi; echo v=100'
    made = ["run", "command", "--trials", "5", "--metric", "v=v=([0-9]+)", "--id", run, "--out", str(root / "runs")]
    assert CliRunner().invoke(app, [*made, "--", "sh", "-c", script]).exit_code == 0
    monkeypatch.setenv("COUNT", str(count))
    result = CliRunner().invoke(app, ["rerun", run, "--by", "Ana", "--repo", str(root), "--yes"])
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said
    assert (
        f"Error: runs/{run}: the rerun stopped early (2 of 5 trials completed; trial 3 of 5 failed: 3 failures "
        "in a row (last: exit code 1)); nothing was written: a rerun cut short reproduces nothing" in said
    )
    assert not (root / "runs" / run / "receipts").exists()


def test_the_notes_of_a_run_without_conditions_name_its_missing_trials_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with no conditions has no condition label to put before its missing trials: the notes
    say 'Missing trials: trials 2-5.', never 'all: trials 2-5.' (the warm-up execution is the
    first, so the third execution is trial 2)."""
    import yaml
    from typer.testing import CliRunner

    from generator.cli import app

    root, count, run = tmp_path / "pub", tmp_path / "executions", "2026-11-30-cut"
    assert CliRunner().invoke(app, ["init", str(root)]).exit_code == 0
    monkeypatch.setenv("COUNT", str(count))
    script = 'echo x >> "$COUNT"; [ "$(wc -l < "$COUNT")" -ge 3 ] && exit 1; echo v=100'
    made = ["run", "command", "--trials", "5", "--metric", "v=v=([0-9]+)", "--id", run, "--out", str(root / "runs")]
    result = CliRunner().invoke(app, [*made, "--", "sh", "-c", script])
    assert result.exit_code == 0, result.output
    notes = yaml.safe_load((root / "runs" / run / "run.yaml").read_text())["notes"]
    assert "This run was interrupted: trial 2 of 5 failed: 3 failures in a row (last: exit code 1)." in notes
    assert "\n\nMissing trials: trials 2-5.\n\n" in notes
