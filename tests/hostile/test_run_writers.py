"""Two writers of one run folder: nothing a person or another run wrote is replaced or deleted
without --force, a run id taken while a run measured is not clobbered (the folder is created
exclusively), and another run's unfinished trials are never deleted. Each test drives a real
`benchledger run command` whose measured program does the other writer's part, so the order
of events is fixed: nothing depends on timing."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import publication, write_tree

RUN_ID = "2026-12-01-mine"


def run_command(out: Path, program: str, *extra: str, trials: int = 2) -> tuple[int, str]:
    """`benchledger run command` of `python -c PROGRAM`, as a user would type it."""
    args = ["run", "command", "--id", RUN_ID, "--out", str(out), "--trials", str(trials), "--warmup", "0"]
    result = CliRunner().invoke(app, [*args, *extra, "--", sys.executable, "-c", program])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, " ".join(result.output.split())


def other_run(out: Path) -> str:
    """A program that, the first time it runs, makes another process write run RUN_ID (a second
    `benchledger run` started at the same moment, which finished first)."""
    flag = out.parent / "other-started"
    second = [sys.executable, "-m", "generator.cli", "run", "command", "--id", RUN_ID, "--out", str(out)]
    second += ["--trials", "1", "--warmup", "0", "--title", "the other run", "--", sys.executable, "-c", "pass"]
    return (
        "import os, subprocess\n"
        f"if not os.path.exists({str(flag)!r}):\n"
        f"    open({str(flag)!r}, 'w').close()\n"
        f"    subprocess.run({second!r}, check=True, capture_output=True)\n"
    )


def scratch_folders(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name != RUN_ID)


def test_a_run_id_taken_while_a_run_measures_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    code, said = run_command(out, other_run(out))
    assert code == 1
    other = yaml.safe_load((out / RUN_ID / "run.yaml").read_text())
    assert other["title"] == "the other run"  # the run that finished first is kept, whole
    assert len((out / RUN_ID / "results.csv").read_text().splitlines()) == 2
    [kept] = scratch_folders(out)
    assert kept.startswith(f"{RUN_ID}.partial-") and not kept.startswith(".")
    assert (
        f"Error: {out / RUN_ID}: was created while this run measured (by another run or by hand), so it was left "
        f"as it is; this run's 2 trials are written in {out / kept}:" in said
    )
    assert len((out / kept / "results.csv").read_text().splitlines()) == 3
    assert yaml.safe_load((out / kept / "run.yaml").read_text())["title"] != "the other run"


def test_files_put_into_the_run_folder_during_a_forced_run_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    write_tree(out / RUN_ID, {"run.yaml": "old run\n", "results.csv": "trial\n1\n"})
    added = out / RUN_ID / "raw" / "server.log"
    program = f"import os; os.makedirs({str(added.parent)!r}, exist_ok=True); open({str(added)!r}, 'a').write('x')"
    code, said = run_command(out, program, "--force")
    assert code == 1
    assert added.read_text() == "xx"  # written by the person (here: the program) during the run: kept
    assert (out / RUN_ID / "run.yaml").read_text() == "old run\n"  # nothing of the old run replaced
    assert f"Error: {out / RUN_ID}: changed while this run measured (raw/server.log added), so it was left" in said
    [kept] = scratch_folders(out)
    assert (out / kept / "run.yaml").is_file()


def test_force_says_what_it_replaces(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    write_tree(out / RUN_ID, {"run.yaml": "old run\n", "results.csv": "trial\n1\n", "raw/notes.txt": "mine\n"})
    code, said = run_command(out, "pass", "--force")
    assert code == 0, said
    assert (
        f"--force: {out / RUN_ID} will be replaced when this run is written: its 3 files (raw/notes.txt, "
        "results.csv, run.yaml)" in said
    )
    assert f"Replaced {out / RUN_ID}: its 3 files (raw/notes.txt, results.csv, run.yaml) were deleted." in said
    assert not (out / RUN_ID / "raw" / "notes.txt").exists()
    assert scratch_folders(out) == []


def test_another_runs_unfinished_trials_are_never_deleted(tmp_path: Path) -> None:
    """The old scratch folder was named by the process id alone: a run of the same id in a
    process of the same id (PID 1 in every container) deleted the first one's trials."""
    out = tmp_path / "runs"
    left = out / f".{RUN_ID}.partial-{os.getpid()}"
    write_tree(left, {"results.csv": "trial,wall_seconds\n1,0.5\n"})
    code, said = run_command(out, "pass")
    assert code == 0, said
    assert (left / "results.csv").read_text() == "trial,wall_seconds\n1,0.5\n"


def test_check_flags_a_leftover_unfinished_run(tmp_path: Path) -> None:
    """A run killed outright (SIGKILL, a lost machine) leaves its scratch folder: `check` names
    it, so `git add -A` cannot publish it silently."""
    write_tree(tmp_path, {k: v for k, v in publication().items() if not k.startswith("runs/")})
    out = tmp_path / "runs"
    old = out / f".{RUN_ID}.partial-1"
    write_tree(old, {"results.csv": "trial,wall_seconds\n1,0.5\n"})
    result = CliRunner().invoke(app, ["check", "--repo", str(tmp_path)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1
    assert (
        f"runs/.{RUN_ID}.partial-1: holds the trials of a run of {RUN_ID} that never finished (benchledger run "
        "was killed, or is still running); it is not a run and nothing reads it: move its results.csv "
        "somewhere else if you want it, then delete the folder" in said
    )


def test_check_flags_the_scratch_folder_of_a_killed_run(tmp_path: Path) -> None:
    """Today's scratch folder is visible, marked, and named by check when its run was killed."""
    from generator.runner.writer import RunWriter

    write_tree(tmp_path, {k: v for k, v in publication().items() if not k.startswith("runs/")})
    writer = RunWriter(tmp_path / "runs", RUN_ID, force=False)
    writer.add_trial({"trial": 1, "wall_seconds": 0.5}, [])  # then the process is killed: finish() never runs
    name = writer.tmp.name
    assert name.startswith(f"{RUN_ID}.partial-")
    assert "It becomes runs/2026-12-01-mine when the run finishes." in (writer.tmp / "PARTIAL-RUN.txt").read_text()
    result = CliRunner().invoke(app, ["check", "--repo", str(tmp_path)])
    assert result.exit_code == 1
    assert f"runs/{name}: holds the trials of a run of {RUN_ID} that never finished" in " ".join(result.output.split())


def test_import_force_says_what_it_replaces(tmp_path: Path) -> None:
    from helpers import import_into

    fixture = str(Path(__file__).parents[1] / "fixtures" / "hyperfine" / "gzip-sizes.json")
    code, said, root = import_into(tmp_path, "hyperfine", fixture, "--id", RUN_ID)
    assert code == 0, said
    before = sorted(p.relative_to(root / "runs" / RUN_ID).as_posix() for p in (root / "runs" / RUN_ID).rglob("*"))
    code, said, _ = import_into(tmp_path, "hyperfine", fixture, "--id", RUN_ID, "--force")
    said = " ".join(said.split())
    assert code == 0, said
    files = [name for name in before if "." in name.rsplit("/", 1)[-1]]
    listed = f"its {len(files)} files ({', '.join(files)})"
    assert f"--force: {root / 'runs' / RUN_ID} will be replaced when this run is written: {listed}." in said
    assert f"Replaced {root / 'runs' / RUN_ID}: {listed} were deleted." in said
    assert sorted(p.name for p in (root / "runs").iterdir()) == [RUN_ID]
