"""What a person consents to at `benchledger rerun` is exactly what runs (issue 34, item 1).

A recorded command holding a terminal escape sequence, a carriage return or a bidirectional
mark reads as one thing on the screen and runs as another: `check` refuses it, naming file,
line and field, and `rerun` refuses to execute it even if check never ran. Tabs and line
breaks (a multi-line `sh -c` script) are allowed and shown as `\\t` and `\\n`, on the consent
screen and on the run page, so the line shown is the line a shell reads.

The consent screen is read as a person reads it: the rerun runs in a real pseudo-terminal
under tmux, and the test reads tmux's rendering of the screen, not the bytes written to it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app

RUN = "2026-11-30-echo"
# on a terminal the line reads `sh -c ' echo "30 tok"'`: the cursor moves back 17 columns and erases
ESC_PROGRAM = ["sh", "-c", 'touch "$MARK"; : \x1b[17D\x1b[K echo "30 tok"']
SCRIPT = ["sh", "-c", 'touch "$MARK"\n\techo v=100']  # a two-line script, its second line indented by a tab
NOTHING_RUN = (
    "which a terminal does not show as itself, so a person cannot read what would run; remove it (in a script, "
    "write it as the program's own escape, e.g. printf '\\033')"
)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def publication(root: Path, program: list[str]) -> Path:
    """A publication with one `run command` run of `program`, as `benchledger run` writes it."""
    assert cli("init", str(root))[0] == 0
    command = ["run", "command", "--trials", "2", "--warmup", "0", "--metric", "v=v=([0-9]+)", "--id", RUN]
    code, out = cli(*command, "--unit", "v=tok", "--better", "v=higher", "--out", str(root / "runs"), "--", *program)
    assert code == 0, out
    return root


def record(root: Path, program: list[str]) -> None:
    """What a hostile pull request does: another program in runner.command and after the
    invocation's `--`, the two kept equal so that they agree."""
    path = root / "runs" / RUN / "run.yaml"
    data = yaml.safe_load(path.read_text())
    argv = data["runner"]["invocation"]
    data["runner"]["invocation"] = [*argv[: argv.index("--") + 1], *program]
    data["runner"]["command"] = program
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


@pytest.fixture
def mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "executed"
    monkeypatch.setenv("MARK", str(path))
    return path


class Screen:
    """A command in a real pseudo-terminal under tmux, 250 columns wide; `text()` is what the
    screen shows, wrapped lines joined."""

    def __init__(self, tmp_path: Path, argv: list[str], env: dict[str, str]) -> None:
        config = tmp_path / "tmux.conf"
        config.write_text("set -g remain-on-exit on\nset -g history-limit 5000\n")
        self.folder = Path(tempfile.mkdtemp(prefix="bl-tmux-"))  # a server of its own, on a short socket path
        self.tmux = ["tmux", "-S", str(self.folder / "socket"), "-f", str(config)]
        line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *argv])
        subprocess.run([*self.tmux, "new-session", "-d", "-x", "250", "-y", "50", line], check=True)

    def text(self) -> str:
        shown = subprocess.run([*self.tmux, "capture-pane", "-p", "-J", "-S", "-"], capture_output=True, text=True)
        return shown.stdout

    def ended(self) -> bool:
        dead = subprocess.run([*self.tmux, "display-message", "-p", "#{pane_dead}"], capture_output=True, text=True)
        return dead.stdout.strip() == "1"

    def wait_for(self, done: str) -> str:
        """The screen once it shows `done` or the command ended (a deadline only fails the test)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if done in self.text() or self.ended():
                return self.text()
            time.sleep(0.1)
        raise AssertionError(f"the screen never showed {done!r}:\n{self.text()}")

    def type(self, keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", keys, "Enter"], check=True)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


def rerun_on_screen(tmp_path: Path, root: Path, mark: Path, answer: str) -> str:
    """`benchledger rerun` at a terminal, answered `answer` if it asks; the final screen."""
    argv = [sys.executable, "-m", "generator.cli", "rerun", RUN, "--by", "Ana", "--repo", str(root)]
    env = {"MARK": str(mark), "COLUMNS": "250", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    screen = Screen(tmp_path, argv, env)
    try:
        if "Run this command?" in screen.wait_for("Run this command?"):
            screen.type(answer)
        deadline = time.monotonic() + 120
        while not screen.ended() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert screen.ended(), screen.text()
        return screen.text()
    finally:
        screen.close()


def shell_reads(line: str) -> list[str]:
    """The argv bash reads from `line` (bash's own reading, not ours)."""
    done = subprocess.run(["bash", "-c", "printf '%s\\0' " + line], capture_output=True, check=True)
    return done.stdout.decode().split("\0")[:-1]


def test_a_command_hiding_text_with_an_escape_sequence_never_runs_at_the_consent_screen(
    tmp_path: Path, mark: Path
) -> None:
    """The attack of issue 34: the screen reads `echo "30 tok"`, the person says yes, `touch` runs."""
    root = publication(tmp_path / "pub", ["sh", "-c", "echo v=100"])
    record(root, ESC_PROGRAM)
    screen = rerun_on_screen(tmp_path, root, mark, "y")
    assert not mark.exists(), screen
    assert "Run this command?" not in screen
    where = f"Error: runs/{RUN}/run.yaml"
    word = "holds U+001B (ESC, which starts a terminal escape sequence) at character 18, " + NOTHING_RUN
    assert f"{where}:47: runner.invocation: word 21 {word}\n" in screen, screen
    assert f"{where}:24: runner.command: word 3 {word}\n" in screen, screen
    assert "30 tok" not in screen  # nothing of the command reaches the screen as a terminal would draw it


def test_a_multi_line_script_is_shown_as_the_line_a_shell_reads_and_runs_as_shown(tmp_path: Path, mark: Path) -> None:
    root = publication(tmp_path / "pub", SCRIPT)
    mark.unlink()  # the original run left it
    screen = rerun_on_screen(tmp_path, root, mark, "y")
    assert mark.exists(), screen
    lead = "which runs this program once per trial, with your rights: "
    (line,) = [x for x in screen.splitlines() if x.startswith(lead)]
    assert line == lead + "sh -c $'touch \"$MARK\"\\n\\techo v=100'"
    kept = yaml.safe_load(next((root / "runs" / RUN / "receipts").glob("*/run.yaml")).read_text())
    assert shell_reads(line.removeprefix(lead)) == kept["runner"]["command"] == SCRIPT
    (shown,) = [x for x in screen.splitlines() if x.startswith(f"  {sys.executable} -m generator.cli run command")]
    executed = shell_reads(shown)
    assert executed[executed.index("--") + 1 :] == SCRIPT


def checked_holding(tmp_path: Path, character: str) -> tuple[int, str]:
    """`check` of a publication whose run recorded `sh -c 'echo v=100 <character>'`."""
    root = publication(tmp_path / "pub", ["sh", "-c", "echo v=100"])
    record(root, ["sh", "-c", f"echo v=100 {character}"])
    return cli("check", "--repo", str(root))


@pytest.mark.parametrize(
    ("character", "named"),
    [
        ("\x1b", "U+001B (ESC, which starts a terminal escape sequence)"),
        ("\r", "U+000D (carriage return)"),
        ("\b", "U+0008 (backspace)"),
        ("\x7f", "U+007F (DEL)"),
        ("\x9b", "U+009B (CSI, which starts a terminal escape sequence)"),
        ("\u202e", "U+202E (right-to-left override)"),
        ("\u2067", "U+2067 (right-to-left isolate)"),
        ("\u200f", "U+200F (right-to-left mark)"),
        ("\u061c", "U+061C (arabic letter mark)"),
    ],
)
def test_check_refuses_a_command_a_terminal_does_not_show_as_written(
    tmp_path: Path, character: str, named: str
) -> None:
    code, out = checked_holding(tmp_path, character)
    assert code == 1
    where = f"Error: runs/{RUN}/run.yaml"
    word = f"holds {named} at character 12, {NOTHING_RUN}"
    assert out.splitlines()[1:] == [
        f"{where}:24: runner.command: word 3 {word}",
        f"{where}:47: runner.invocation: word 21 {word}",
    ], out


def test_tabs_and_line_breaks_in_a_command_pass_check(tmp_path: Path) -> None:
    root = publication(tmp_path / "pub", SCRIPT)
    assert cli("check", "--repo", str(root)) == (0, "3 runs, 1 reports, 2 claims: no problems\n")


def test_rerun_refuses_a_hidden_character_even_if_check_missed_it(
    tmp_path: Path, mark: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.ledger import invocation

    monkeypatch.setattr(invocation, "command_problems", lambda *args: [], raising=False)  # as if check had
    root = publication(tmp_path / "pub", ["sh", "-c", "echo v=100"])
    record(root, ESC_PROGRAM)
    mark.unlink(missing_ok=True)
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(root), "--yes")
    assert code == 1, out
    assert out.startswith(
        f"Error: runs/{RUN}/run.yaml: runner.invocation: word 21 holds U+001B (ESC, which starts a terminal "
        f"escape sequence) at character 18, {NOTHING_RUN}; nothing was run\n"
    ), out
    assert "will execute" not in out and not mark.exists()


def test_run_command_refuses_to_record_a_command_a_terminal_would_hide(tmp_path: Path, mark: Path) -> None:
    root = tmp_path / "pub"
    assert cli("init", str(root))[0] == 0
    command = ["run", "command", "--trials", "1", "--warmup", "0", "--metric", "v=v=([0-9]+)", "--id", RUN]
    code, out = cli(*command, "--out", str(root / "runs"), "--", *ESC_PROGRAM)
    assert code == 1
    assert out == (
        "Error: command line: word 17 holds U+001B (ESC, which starts a terminal escape sequence) at character "
        f"18, {NOTHING_RUN}\n"
    )
    assert not mark.exists() and not (root / "runs" / RUN).exists()


def test_the_run_page_shows_a_multi_line_command_escaped(tmp_path: Path) -> None:
    from helpers import generate

    root = publication(tmp_path / "pub", SCRIPT)
    page = generate(root)[f"runs/{RUN}/index.md"].decode()
    (command,) = [x for x in page.splitlines() if x.startswith('<pre class="bl-command"><code>')]
    assert command.endswith(" -- sh -c $&#x27;touch &quot;$MARK&quot;\\n\\techo v=100&#x27;</code></pre>")
