"""A command is taken up to the most one argument of a program holds (Linux's MAX_ARG_STRLEN:
131,072 bytes with the terminating NUL, so 131,071 bytes), shown whole and folded, and refused
past it with the word, its size and the limit named (issue 34, a round-three leftover: commands
over 2,000 characters were refused outright)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import generate, import_into

RUN = "2026-11-30-long"
LONGEST = 131_071  # bytes in one argument: MAX_ARG_STRLEN less the NUL
HYPERFINE = Path(__file__).parents[1] / "fixtures" / "hyperfine" / "gzip-sizes.json"


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def script(size: int) -> str:
    """An `sh -c` script of exactly `size` bytes that prints v=100."""
    head = "echo v=100 #"
    return head + "x" * (size - len(head))


def measured(root: Path, program: list[str]) -> tuple[int, str]:
    assert cli("init", str(root))[0] == 0
    command = ["run", "command", "--trials", "2", "--warmup", "0", "--metric", "v=v=([0-9]+)", "--id", RUN]
    return cli(*command, "--unit", "v=tok", "--better", "v=higher", "--out", str(root / "runs"), "--", *program)


def test_a_command_of_one_whole_argument_is_measured_checked_and_shown_whole(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    code, out = measured(root, ["sh", "-c", script(LONGEST)])
    assert code == 0, out[-2000:]
    assert cli("check", "--repo", str(root)) == (0, "3 runs, 1 reports, 2 claims: no problems\n")
    page = generate(root)[f"runs/{RUN}/index.md"].decode()
    (command,) = re.findall(r'<pre class="bl-command"><code>(.*?)</code></pre>', page)
    assert command.endswith(f" -- sh -c &#x27;{script(LONGEST)}&#x27;")
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(root), "--yes")  # and it runs again as shown
    assert code == 0 and "reproduced" in out, out[-2000:]


def test_a_command_word_past_one_argument_is_refused_by_run_command(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    code, out = measured(root, ["sh", "-c", script(LONGEST + 1)])
    assert code == 1
    assert out == (
        "Error: command line: word 21 is 131,072 bytes; one argument of a program holds at most 131,071 bytes "
        "(131,072 with its terminating NUL: Linux's MAX_ARG_STRLEN), so it cannot run; put the script in a file "
        "and run that file\n"
    )
    assert not (root / "runs" / RUN).exists()


def test_a_recorded_command_word_past_one_argument_is_refused_by_check(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    assert measured(root, ["sh", "-c", "echo v=100"])[0] == 0
    path = root / "runs" / RUN / "run.yaml"
    data = yaml.safe_load(path.read_text())
    program = ["sh", "-c", "é" * 65_536]  # 65,536 characters, 131,072 bytes of UTF-8
    data["runner"]["command"] = program
    data["runner"]["invocation"] = [*data["runner"]["invocation"][:-3], *program]
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**9))
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    word = (
        "is 131,072 bytes; one argument of a program holds at most 131,071 bytes (131,072 with its terminating "
        "NUL: Linux's MAX_ARG_STRLEN), so it cannot run; put the script in a file and run that file"
    )
    assert out.splitlines()[1:] == [
        f"Error: runs/{RUN}/run.yaml:24: runner.command: word 3 {word}",
        f"Error: runs/{RUN}/run.yaml:47: runner.invocation: word 21 {word}",
    ], out[-3000:]


def test_the_consent_prompt_folds_a_long_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.cli.authoring as authoring

    root = tmp_path / "pub"
    assert measured(root, ["sh", "-c", script(5_000)])[0] == 0
    monkeypatch.setattr(authoring, "_interactive", lambda: True)
    monkeypatch.setattr(authoring.typer, "confirm", lambda text, default: False)
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(root))
    assert code == 1 and "nothing was run" in out
    lines = out.splitlines()
    lead = "which runs this program once per trial, with your rights: ("
    (start,) = [i for i, line in enumerate(lines) if line.startswith(lead)]
    assert lines[start] == (
        "which runs this program once per trial, with your rights: (5,008 characters, folded every 100: the line "
        "breaks below are not in the command; its own tabs and line breaks show as \\t and \\n)"
    )
    pieces = lines[start + 1 : start + 52]
    assert all(p.startswith("  ") and len(p) == 102 for p in pieces[:-1]) and len(pieces[-1]) == 2 + 8
    assert "".join(p.removeprefix("  ") for p in pieces) == "sh -c " + shlex.quote(script(5_000))
    assert lines[1].startswith("  (") and "characters, folded every 100" in lines[1]  # the whole line too
    assert f"{sys.executable} -m generator.cli run command" in "".join(lines[2:4])


def test_a_hyperfine_command_of_one_whole_argument_is_imported_whole(tmp_path: Path) -> None:
    export = json.loads(HYPERFINE.read_text())
    command = "echo " + "x" * (LONGEST - 5)
    export["results"][0]["command"] = command
    long = tmp_path / "hyperfine.json"
    long.write_text(json.dumps(export))
    code, out, root = import_into(tmp_path, "hyperfine", str(long), "--id", RUN)
    assert code == 0, out[-2000:]
    notes = yaml.safe_load((root / "runs" / RUN / "run.yaml").read_text())["notes"]
    assert f"- ` {command} `\n" in notes
    assert cli("check", "--repo", str(root))[0] == 0


def test_a_hyperfine_command_past_one_argument_is_refused(tmp_path: Path) -> None:
    export = json.loads(HYPERFINE.read_text())
    export["results"][0]["command"] = "echo " + "x" * (LONGEST - 4)
    long = tmp_path / "hyperfine.json"
    long.write_text(json.dumps(export))
    code, out, root = import_into(tmp_path, "hyperfine", str(long), "--id", RUN)
    assert code == 1
    assert out == (
        "Error: hyperfine.json: $.results[0].command: is 131,072 bytes; hyperfine runs a command as one argument "
        "of a shell, which holds at most 131,071 bytes (131,072 with its terminating NUL: Linux's MAX_ARG_STRLEN), "
        "so no shell ran it; check the file\n"
    )
    assert not (root / "runs" / RUN).exists()


def test_a_hyperfine_command_holding_an_escape_sequence_is_refused(tmp_path: Path) -> None:
    """Any recorded command is read whole: the notes and the run page would show `echo ok` for a
    command that also ran `rm`."""
    export = json.loads(HYPERFINE.read_text())
    export["results"][0]["command"] = "rm -rf ~/scratch; : \x1b[2K\r echo ok"
    hostile = tmp_path / "hyperfine.json"
    hostile.write_text(json.dumps(export))
    code, out, root = import_into(tmp_path, "hyperfine", str(hostile), "--id", RUN)
    assert code == 1
    assert out == (
        "Error: hyperfine.json: $.results[0].command: holds U+001B (ESC, which starts a terminal escape sequence) "
        "at character 21, which a terminal or a page does not show as itself, so no reader could read the command "
        "that was timed; check the file\n"
    )
    assert not (root / "runs" / RUN).exists()


def test_a_hyperfine_command_of_one_whole_argument_is_a_condition_whole(tmp_path: Path) -> None:
    """Several commands without parameters: each command is the condition, in results.csv whole."""
    export = json.loads(HYPERFINE.read_text())
    command = "echo " + "x" * (LONGEST - 5)
    for result, text in zip(export["results"], [command, "echo short"], strict=True):
        result.pop("parameters", None)
        result["command"] = text
    long = tmp_path / "hyperfine.json"
    long.write_text(json.dumps(export))
    code, out, root = import_into(tmp_path, "hyperfine", str(long), "--id", RUN)
    assert code == 0, out[-2000:]
    assert cli("check", "--repo", str(root))[0] == 0
    results = (root / "runs" / RUN / "results.csv").read_text().splitlines()
    assert results[0] == "trial,command,seconds" and sum(command in row for row in results) == 5
    page = generate(root)[f"runs/{RUN}/index.md"].decode()
    assert f'<td data-label="Condition">command&#61;echo {"x" * (LONGEST - 5)}</td>' in page
