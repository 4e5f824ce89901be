"""Review reads every revision that `check` accepts, symlinks included, and refuses (naming the
path) only what `check` refuses too; a refusal is a comment that says so, never an empty one
(issue 34: medium #7, build item 4; low: colliding non-UTF-8 file names)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_review import BASE, cli, git, pub  # noqa: F401  (pub is a fixture)

from generator.ledger import snapshot
from generator.render.review_text import MARK

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _branch(root: Path) -> None:
    git(root, "checkout", "-qb", "pr")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")


def _review(root: Path, *more: str) -> tuple[int, str, str]:
    return cli("review", "--base", "main", "--head", "pr", "--repo", str(root), *more)


def test_a_docs_symlink_that_check_accepts_is_reviewed(pub: Path) -> None:  # noqa: F811
    (pub / "assets").mkdir()
    (pub / "assets" / "logo.svg").write_text("<svg/>\n")
    (pub / "site_src" / "logo.svg").symlink_to("../assets/logo.svg")
    assert cli("check", "--repo", str(pub))[0] == 0  # check accepts a link inside the repository
    _branch(pub)
    code, out, err = _review(pub)
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == [MARK, "## benchledger review: main → pr", ""]
    assert "No run, claim, grid, receipt or problem changes." in out


def test_a_run_symlink_is_the_problem_check_names_and_is_never_followed(pub: Path, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "outside.txt").write_text("secret-of-the-runner")
    (pub / "runs" / BASE / "notes.txt").symlink_to(tmp_path / "outside.txt")
    _branch(pub)
    code, out, err = _review(pub, "--fail-on", "problems")
    assert (code, err) == (1, "Failing on problems: 1 new\n")
    assert (
        "- error: runs&#47;2026&#45;09&#45;01&#45;base&#47;notes.txt&#58; is a symlink&#59; symlinks are refused "
        "under runs&#47;&#58; replace it with the real file"
    ) in out.splitlines()
    assert "secret" not in out


def test_a_docs_symlink_out_of_the_repository_is_refused_naming_it_as_check_does(pub: Path) -> None:  # noqa: F811
    (pub / "site_src" / "passwd.md").symlink_to("/etc/passwd")
    assert cli("check", "--repo", str(pub))[0] == 1  # check refuses it too
    _branch(pub)
    code, out, _ = _review(pub)
    assert code == 1
    assert (
        "**Review refused:** pr&#58; &#39;site&#95;src&#47;passwd.md&#39; is a symlink to &#39;&#47;etc&#47;passwd&#39;, "
        "out of the revision&#59; check refuses it too, and review does not follow it"
    ) in out.splitlines()
    assert "root:" not in out


def test_a_reports_folder_linked_out_of_the_repository_is_never_read(pub: Path, tmp_path: Path) -> None:  # noqa: F811
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("---\ntitle: SECRET-TITLE\nclaims: []\n---\n")
    shutil.rmtree(pub / "site_src" / "reports")
    (pub / "site_src" / "reports").symlink_to(elsewhere)
    _branch(pub)
    code, out, _ = _review(pub)
    assert code == 1
    assert "**Review refused:** pr&#58; &#39;site&#95;src&#47;reports&#39; is a symlink to " in out
    assert "SECRET" not in out


def test_a_mkdocs_yml_linked_out_of_the_repository_is_never_read(pub: Path, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "config.yml").write_text("site_name: x\ndocs_dir: [SECRET-VALUE\n")
    (pub / "mkdocs.yml").unlink()
    (pub / "mkdocs.yml").symlink_to(tmp_path / "config.yml")
    _branch(pub)
    code, out, err = _review(pub)
    assert code == 1
    assert "**Review refused:** pr&#58; &#39;mkdocs.yml&#39; is a symlink to " in out
    assert "SECRET" not in out + err


def test_a_symlink_cannot_carry_a_write_out_of_the_scratch_folder(pub: Path, tmp_path: Path) -> None:  # noqa: F811
    outside = tmp_path / "outside"
    outside.mkdir()
    (pub / "site_src" / "out").symlink_to(outside)
    _branch(pub)
    _review(pub)
    assert list(outside.iterdir()) == []


def test_a_refusal_is_a_comment_that_says_so(pub: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    (pub / "site_src" / "big.md").write_text("# big\n" + "x" * 4000)
    _branch(pub)
    monkeypatch.setattr(snapshot, "MAX_BYTES", 4096)  # the base holds less, the head more
    code, out, err = _review(pub)
    assert code == 1
    lines = out.splitlines()
    assert lines[:3] == [MARK, "## benchledger review: main → pr", ""]
    assert lines[3].startswith("**Review refused:** ")
    assert "over 0 GiB&#59; review less" in lines[3]
    assert err.startswith("Error: pr: its files hold ")
    code, out, _ = _review(pub, "--format", "json")
    assert code == 1 and json.loads(out)["refused"].startswith("pr: its files hold ")


@pytest.mark.skipif(os.uname().sysname != "Linux", reason="needs a file system that takes any bytes in a name")
def test_non_utf8_names_that_would_decode_alike_do_not_collide(pub: Path) -> None:  # noqa: F811
    notes = os.fsencode(pub / "notes")
    os.mkdir(notes)
    for name in (b"\xff.txt", b"\xfe.txt"):
        with open(os.path.join(notes, name), "w") as out:
            out.write("x\n")
    with open(os.path.join(os.fsencode(pub / "runs" / BASE), b"\xfd.txt"), "w") as out:
        out.write("y\n")
    _branch(pub)
    code, out, err = _review(pub)
    assert (code, err) == (0, "")
    assert (
        "- error: runs&#47;2026&#45;09&#45;01&#45;base&#47;&#92;xfd.txt&#58; is not a UTF&#45;8 file name&#59; rename it"
        in out
    )
    code, _, err = cli("check", "--repo", str(pub))  # check refuses it too, and names it
    assert code == 1 and f"runs/{BASE}/\\xfd.txt: is not a UTF-8 file name; rename it" in err


def test_a_mkdocs_yml_review_cannot_read_is_a_refusal_in_the_comment(pub: Path) -> None:  # noqa: F811
    (pub / "mkdocs.yml").write_text("site_name: [unclosed\n")
    _branch(pub)
    code, out, err = _review(pub)
    assert code == 1
    assert out.splitlines()[1].startswith("> **⚠ `mkdocs.yml` (changed):**")  # what the change touches, still
    assert out.splitlines()[5] == (
        "**Review refused:** pr&#58; mkdocs.yml cannot be read &#40;a YAML syntax error, a docs&#95;dir outside "
        "the repository or a verdict setting out of range&#41;&#59; &#96;benchledger check&#96; on that revision "
        "names it"
    )
    assert "YAML syntax error" in err
