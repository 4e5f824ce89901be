"""`benchledger rerun` executes nothing unasked: it shows the exact command and waits for a yes
(or --yes); without a terminal it refuses. An invocation edited behind a harmless
`runner.command` is refused by check and by rerun."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app

RUN = "2026-11-30-echo"


def cli(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


@pytest.fixture
def pub(tmp_path: Path, mark: Path) -> Path:
    """A publication with one `run command` run whose program leaves a mark when it runs."""
    root = tmp_path / "pub"
    assert cli("init", str(root))[0] == 0
    command = ["run", "command", "--trials", "2", "--warmup", "0", "--metric", "v=v=([0-9]+)", "--id", RUN]
    code, out = cli(*command, "--out", str(root / "runs"), "--", "sh", "-c", 'touch "$MARK"; echo v=100')
    assert code == 0, out
    return root


@pytest.fixture
def mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "executed"
    monkeypatch.setenv("MARK", str(path))
    return path


def run_yaml(root: Path) -> Path:
    return root / "runs" / RUN / "run.yaml"


def edit_invocation(root: Path, program: list[str]) -> None:
    """What a hostile pull request does: a new program after `--`, runner.command left alone."""
    data = yaml.safe_load(run_yaml(root).read_text())
    argv = data["runner"]["invocation"]
    data["runner"]["invocation"] = [*argv[: argv.index("--") + 1], *program]
    run_yaml(root).write_text(yaml.safe_dump(data, sort_keys=False))


def test_rerun_without_a_terminal_or_yes_runs_nothing(pub: Path, mark: Path) -> None:
    mark.unlink()  # the original run left it
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub))
    assert code == 1
    assert f"benchledger rerun will execute the command recorded in runs/{RUN}/run.yaml:" in out
    assert "which runs this program once per trial, with your rights: sh -c 'touch \"$MARK\"; echo v=100'" in out
    assert (
        "Error: rerun: stdin is not a terminal, so nobody can confirm the command above; nothing was run. "
        "Read it, then pass --yes to run it\n"
    ) in out
    assert not mark.exists()
    assert not (pub / "runs" / RUN / "receipts").exists()


def test_rerun_with_stdin_closed_in_a_real_process_runs_nothing(pub: Path, mark: Path) -> None:
    mark.unlink()
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", "rerun", RUN, "--by", "Ana", "--repo", str(pub)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "nothing was run" in done.stderr
    assert not mark.exists()


def test_a_yes_piped_into_rerun_is_not_consent(pub: Path, mark: Path) -> None:
    mark.unlink()
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub), stdin="y\n")
    assert code == 1 and "nothing was run" in out
    assert not mark.exists()


def test_rerun_shows_the_exact_command_and_asks(pub: Path, mark: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mark.unlink()
    import generator.cli.authoring as authoring

    monkeypatch.setattr(authoring, "_interactive", lambda: True)
    shown: list[str] = []
    monkeypatch.setattr(authoring.typer, "confirm", lambda text, default: shown.append(text) or False)
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub))
    assert shown == ["Run this command?"]
    assert code == 1
    assert (
        f"Error: runs/{RUN}/run.yaml: runner.invocation: not confirmed; nothing was run "
        "(pass --yes to run it without asking)"
    ) in out
    line = next(x for x in out.splitlines() if x.startswith("  "))
    argv = shlex.split(line)
    assert argv[:4] == [sys.executable, "-m", "generator.cli", "run"]
    assert argv[-4:] == ["--", "sh", "-c", 'touch "$MARK"; echo v=100']
    assert not mark.exists()


def test_rerun_with_yes_runs_the_shown_command(pub: Path, mark: Path) -> None:
    mark.unlink()
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub), "--yes")
    assert code == 0, out
    assert mark.exists()


def test_an_edited_invocation_is_refused_by_check_and_rerun(pub: Path, mark: Path, tmp_path: Path) -> None:
    mark.unlink()
    evil = tmp_path / "pwned"
    edit_invocation(pub, ["sh", "-c", f"touch {evil}; echo v=100"])
    expected = (
        f"run.yaml:25: runner.invocation: runs `sh -c 'touch {evil}; echo v=100'` but "
        "runner.command shows `sh -c 'touch \"$MARK\"; echo v=100'`; benchledger rerun executes the invocation, "
        "so it must say what the run page shows; make the two equal, or measure the run again with benchledger run"
    )
    code, out = cli("check", "--repo", str(pub))
    assert code == 1
    assert f"Error: runs/{RUN}/{expected}\n" in out, out
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub), "--yes")
    assert code == 1 and f"Error: runs/{RUN}/{expected}\n" in out, out
    assert not evil.exists() and not mark.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("kind", "openai", "runner.invocation: runs `run command` but runner.kind says 'openai'"),
        ("command", None, "runner.command: is missing or not a list of strings"),
    ],
)
def test_runner_fields_must_agree_with_the_invocation(pub: Path, field: str, value: object, message: str) -> None:
    data = yaml.safe_load(run_yaml(pub).read_text())
    if value is None:
        del data["runner"][field]
    else:
        data["runner"][field] = value
    run_yaml(pub).write_text(yaml.safe_dump(data, sort_keys=False))
    code, out = cli("check", "--repo", str(pub))
    assert code == 1 and message in out, out


def test_an_openai_invocation_pointing_elsewhere_is_refused(tmp_path: Path) -> None:
    from helpers import measured_run, publication, write_tree

    runner = {
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "prompts": "built-in",
        "invocation": ["benchledger", "run", "openai", "--base-url", "https://evil.example/v1", "--prompts", "/x"],
    }
    root = write_tree(tmp_path, publication(measured_run("2026-09-01-x", runner=runner)))
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    assert (
        "runner.invocation: sets --base-url 'https://evil.example/v1' but runner.base_url shows "
        "'http://127.0.0.1:8080/v1'; benchledger rerun executes the invocation" in out
    )
    assert "runner.invocation: sets --prompts '/x' but runner.prompts shows 'built-in'" in out


def test_a_run_yaml_changed_since_a_receipt_vouched_for_it_is_not_rerun(pub: Path, mark: Path, tmp_path: Path) -> None:
    """Invocation and runner.command edited together: the receipt no longer matches, so no rerun."""
    mark.unlink()
    assert cli("verify", RUN, "--by", "Zak", "--method", "review", "--repo", str(pub))[0] == 0
    evil = tmp_path / "pwned"
    edit_invocation(pub, ["sh", "-c", f"touch {evil}; echo v=100"])
    data = yaml.safe_load(run_yaml(pub).read_text())
    data["runner"]["command"] = data["runner"]["invocation"][data["runner"]["invocation"].index("--") + 1 :]
    run_yaml(pub).write_text(yaml.safe_dump(data, sort_keys=False))
    (receipt,) = (pub / "runs" / RUN / "receipts").glob("*.yaml")
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub), "--yes")
    assert code == 1
    assert (
        f"Error: runs/{RUN}/run.yaml: changed since receipts/{receipt.name} vouched for it, so its invocation may "
        "have been edited; compare it with the committed history, then restore it or verify the run again\n"
    ) in out, out
    assert not evil.exists() and not mark.exists()


def _invocation(root: Path, argv: list[str], command: list[str] | None = None) -> None:
    data = yaml.safe_load(run_yaml(root).read_text())
    data["runner"]["invocation"] = argv
    if command is not None:
        data["runner"]["command"] = command
    run_yaml(root).write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_program_hidden_before_the_double_dash_is_refused(pub: Path, mark: Path, tmp_path: Path) -> None:
    """`run command` takes every word no option takes as its program: a script slipped in after a
    flag (`--keep-paths /tmp/evil.sh`) would run with the shown program as its arguments."""
    mark.unlink()
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {tmp_path}/pwned\necho v=100\n")
    evil.chmod(0o755)
    argv = yaml.safe_load(run_yaml(pub).read_text())["runner"]["invocation"]
    cut = argv.index("--")
    _invocation(pub, [*argv[:cut], "--keep-paths", str(evil), *argv[cut:]])
    code, out = cli("check", "--repo", str(pub))
    assert code == 1 and f"runner.invocation: gives `{evil}` where no option takes it" in out, out
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub), "--yes")
    assert code == 1 and f"gives `{evil}` where no option takes it" in out, out
    assert not (tmp_path / "pwned").exists() and not mark.exists()


def test_a_program_with_no_double_dash_and_an_empty_command_is_refused(pub: Path, tmp_path: Path) -> None:
    evil = tmp_path / "evil.sh"
    argv = yaml.safe_load(run_yaml(pub).read_text())["runner"]["invocation"]
    _invocation(pub, [*argv[: argv.index("--")], str(evil)], command=[])
    code, out = cli("check", "--repo", str(pub))
    assert code == 1 and f"gives `{evil}` where no option takes it" in out, out


def test_the_rerun_reads_the_line_as_the_parser_does_before_showing_it(
    pub: Path, mark: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever check's word-by-word reading misses, the rerun compares what the parser will
    hand the runner with what the page shows, before it shows or runs anything."""
    from generator.ledger import invocation

    monkeypatch.setattr(invocation, "stray_words", lambda argv: [])  # as if check had missed it
    mark.unlink()
    argv = yaml.safe_load(run_yaml(pub).read_text())["runner"]["invocation"]
    cut = argv.index("--")
    _invocation(pub, [*argv[:cut], "--keep-paths", "touch", *argv[cut:]])
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(pub), "--yes")
    assert code == 1, out
    assert "benchledger run reads it as running `touch sh -c 'touch \"$MARK\"; echo v=100'`" in out
    assert "will execute" not in out and not mark.exists()


def test_an_option_given_twice_is_refused_since_the_parser_keeps_the_last(tmp_path: Path) -> None:
    from helpers import measured_run, publication, write_tree

    runner = {
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "prompts": "prompts.jsonl",
        "invocation": [
            "benchledger", "run", "openai", "--prompts", "prompts.jsonl", "--base-url", "http://127.0.0.1:8080/v1",
            "--base-url", "http://127.0.0.1:9/evil/v1", "--prompts=/etc/hostname",
        ],
    }  # fmt: skip
    root = write_tree(tmp_path, publication(measured_run("2026-09-01-x", runner=runner)))
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    assert "runner.invocation: gives --base-url more than once (the last one counts, the page shows one)" in out
    assert "runner.invocation: gives --prompts more than once" in out
    code, out = cli("rerun", "2026-09-01-x", "--by", "Ana", "--repo", str(root), "--yes")
    assert code == 1 and "gives --base-url more than once" in out and "hostname" not in out.split("Error")[0]


def test_the_rerun_compares_the_server_the_parser_would_measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.ledger import invocation
    from helpers import measured_run, publication, write_tree

    monkeypatch.setattr(invocation, "repeated", lambda argv: [])  # as if check had missed it
    runner = {
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "prompts": "built-in",
        "invocation": [
            "benchledger",
            "run",
            "openai",
            "--base-url",
            "http://127.0.0.1:8080/v1",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
    }
    root = write_tree(tmp_path, publication(measured_run("2026-09-01-x", runner=runner)))
    code, out = cli("rerun", "2026-09-01-x", "--by", "Ana", "--repo", str(root), "--yes")
    assert code == 1, out
    assert out == (
        "Error: runs/2026-09-01-x/run.yaml: runner.invocation: benchledger run reads --base-url as "
        "'http://127.0.0.1:9/v1', the run page shows 'http://127.0.0.1:8080/v1'; the rerun would measure "
        "something else than the run page shows; nothing was run\n"
    )


def test_the_flags_check_knows_are_the_cli_s_own() -> None:
    """check reads a recorded line word by word: it must know which options take no value."""
    import typer

    from generator.cli.run import run_app
    from generator.ledger.invocation import FLAGS

    commands = typer.main.get_command(run_app).commands  # type: ignore[attr-defined]
    flags = {
        name
        for command in commands.values()
        for param in command.params
        if getattr(param, "is_flag", False)
        for name in [*param.opts, *param.secondary_opts]
    }
    assert flags == FLAGS


def test_a_rerun_never_joins_the_ray_cluster_a_run_names(tmp_path: Path) -> None:
    """A Ray client trusts the cluster it joins; the address in a run folder is someone else's."""
    from helpers import measured_run, publication, write_tree

    runner = {
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "prompts": "built-in",
        "invocation": ["benchledger", "run", "openai", "--ray", "ray://10.0.0.9:10001", "--trials", "2"],
    }
    root = write_tree(tmp_path, publication(measured_run("2026-09-01-x", runner=runner)))
    code, out = cli("rerun", "2026-09-01-x", "--by", "Ana", "--repo", str(root))
    assert code == 1 and "stdin is not a terminal" in out, out  # shown, then refused: nobody said yes
    shown = out.splitlines()[1]
    assert "--trials 2" in shown and "--ray" not in shown and "10.0.0.9" not in shown
    assert "(the recorded --ray is left out: a rerun measures from this machine" in out
