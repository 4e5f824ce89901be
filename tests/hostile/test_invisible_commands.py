"""A recorded command may hold no character a terminal draws as nothing: beyond the zero-width
and bidirectional ones, every default-ignorable code point (the soft hyphen, variation
selectors, Hangul fillers, deprecated format characters and the tag characters, which can spell
a whole hidden text after `echo hi`). `check` refuses them by name, and a word that holds one
is shown in `$'...'` as exactly the word bash reads, characters past U+FFFF included."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_consent_screen import (  # noqa: F401  (mark is a fixture)
    NOTHING_RUN,
    RUN,
    checked_holding,
    cli,
    mark,
    publication,
    record,
)

from generator.format.commands import shell_line

TAGS = "".join(chr(0xE0000 + ord(c)) for c in " rm -rf ~")  # invisible: 'echo hi' on a terminal


@pytest.mark.parametrize(
    ("character", "named"),
    [
        ("\u00ad", "U+00AD (soft hyphen)"),
        ("\u034f", "U+034F (combining grapheme joiner)"),
        ("\u3164", "U+3164 (hangul filler)"),
        ("\u180e", "U+180E (mongolian vowel separator)"),
        ("\u206a", "U+206A (inhibit symmetric swapping)"),
        ("\ufe0f", "U+FE0F (variation selector-16)"),
        ("\ufff9", "U+FFF9 (interlinear annotation anchor)"),
        ("\U000e0020", "U+E0020 (tag space)"),
        ("\U000e0101", "U+E0101 (variation selector-18)"),
    ],
)
def test_check_refuses_a_command_holding_a_character_a_terminal_draws_as_nothing(
    tmp_path: Path, character: str, named: str
) -> None:
    code, out = checked_holding(tmp_path, character)
    assert code == 1
    word = f"holds {named} at character 12, {NOTHING_RUN}"
    assert f"Error: runs/{RUN}/run.yaml:24: runner.command: word 3 {word}" in out.splitlines(), out


def test_rerun_refuses_a_command_spelled_in_tag_characters(tmp_path: Path, mark: Path) -> None:  # noqa: F811
    root = publication(tmp_path / "pub", ["sh", "-c", "echo v=100"])
    record(root, ["sh", "-c", f"echo v=100{TAGS}"])
    mark.unlink(missing_ok=True)
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(root), "--yes")
    assert code == 1 and "runner.invocation: word 21 holds U+E0020 (tag space) at character 11" in out, out
    assert "will execute" not in out and not mark.exists()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_word_past_u_ffff_is_shown_as_the_word_bash_reads() -> None:
    argv = ["printf", "%s", f"hi{TAGS}\u00ad\U000e0101."]
    shown = shell_line(argv)
    assert shown.isascii() and "\\U000e0020" in shown
    done = subprocess.run(["bash", "-c", shown], capture_output=True, check=True, env={"LC_ALL": "C.UTF-8"})
    assert done.stdout.decode() == argv[2]


def test_terminal_output_writes_a_character_past_u_ffff_as_eight_digits() -> None:
    """`\\ue0041` would read as U+E004 followed by a 1."""
    from generator.cli.common import shown

    assert shown(f"a\x1b[2J\u202e{TAGS[:2]}b") == "a\\x1b[2J\\u202e\\U000e0020\\U000e0072b"


# Unicode's space separators other than the ASCII space: a terminal draws each as a plain space,
# so `'echo<U+00A0>hi'` (one word) would read as two words at the consent prompt
SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("space", list(SPACES), ids=lambda c: f"U+{ord(c):04X}")
def test_a_word_holding_a_space_that_is_not_ascii_is_shown_escaped_as_one_word(space: str) -> None:
    argv = ["sh", "-c", f"echo{space}hi"]
    shown = shell_line(argv)
    assert shown == f"sh -c $'echo\\u{ord(space):04x}hi'"
    done = subprocess.run(
        ["bash", "-c", "printf '%s\\0' " + shown], capture_output=True, check=True, env={"LC_ALL": "C.UTF-8"}
    )
    assert done.stdout.decode().split("\0")[:-1] == argv


def test_the_consent_prompt_shows_a_no_break_space_inside_a_word_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer

    import generator.cli.authoring as authoring

    program = ["printf", "%s\\n", "v=100", "echo\u00a0hi"]  # four words, the last one word, not two
    root = publication(tmp_path / "pub", program)
    assert cli("check", "--repo", str(root))[0] == 0  # allowed: a prompt may hold one
    monkeypatch.setattr(authoring, "_interactive", lambda: True)
    monkeypatch.setattr(typer, "confirm", lambda text, default: False)
    code, out = cli("rerun", RUN, "--by", "Ana", "--repo", str(root))
    assert code == 1 and "nothing was run" in out
    lead = "which runs this program once per trial, with your rights: "
    assert f"{lead}printf '%s\\n' v=100 $'echo\\u00a0hi'" in out.splitlines(), out
    assert "\u00a0" not in out
