"""Review judges a change against where it forked (the merge base), and `--fail-on` takes
only the names it knows (issue 34: medium #4, low)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_review import _run, cli, git, pub  # noqa: F401  (pub is a fixture)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_a_typo_fix_does_not_remove_a_run_added_to_main_meanwhile(pub: Path) -> None:  # noqa: F811
    git(pub, "checkout", "-qb", "typo")
    (pub / "site_src" / "reports" / "speed.md").write_text(
        (pub / "site_src" / "reports" / "speed.md").read_text() + "\nA typo fixed.\n"
    )
    git(pub, "commit", "-qam", "typo")
    git(pub, "checkout", "-q", "main")
    for path, text in _run("2026-09-03-later", 1.1).items():
        (pub / path).parent.mkdir(parents=True, exist_ok=True)
        (pub / path).write_text(text)
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "later run on main")
    code, out, err = cli("review", "--base", "main", "--head", "typo", "--repo", str(pub), "--fail-on", "removed")
    assert (code, err) == (0, "")
    assert "2026-09-03-later" not in out


@pytest.mark.parametrize("word", ["removd", "Removed", "contradictd"])
def test_fail_on_refuses_a_word_it_does_not_know(pub: Path, word: str) -> None:  # noqa: F811
    code, _, err = cli("review", "--base", "main", "--repo", str(pub), "--fail-on", word)
    assert code == 1
    assert f"--fail-on {word!r}: not one of" in err
    assert "removed" in err and "contradicted" in err
