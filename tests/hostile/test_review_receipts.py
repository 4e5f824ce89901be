"""Review and rewritten receipts: a verified run edited in a change whose receipts vouch for the
edit (the existing receipt given the new sha256, or a new one by the same verifier) reads
"re-signed after an edit", never verified; an added rerun receipt is named as such
(issue 34: medium #6, build item 2)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from test_rerun import RUN, clock  # noqa: F401  (clock is a fixture)
from test_review import BASE, cli, git, pub  # noqa: F401  (pub is a fixture)

from helpers import CommandClock

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _edit_figures(root: Path) -> tuple[str, str]:
    """BASE's first trial edited on a branch; its results.csv hash before and after."""
    git(root, "checkout", "-qb", "pr")
    results = root / "runs" / BASE / "results.csv"
    before = "sha256:" + hashlib.sha256(results.read_bytes()).hexdigest()
    results.write_text(results.read_text().replace("31.20", "41.20"))
    return before, "sha256:" + hashlib.sha256(results.read_bytes()).hexdigest()


def test_a_receipt_given_the_edited_files_hash_is_re_signed_after_an_edit(pub: Path) -> None:  # noqa: F811
    before, after = _edit_figures(pub)
    (receipt,) = (pub / "runs" / BASE / "receipts").glob("*.yaml")
    receipt.write_text(receipt.read_text().replace(before, after))
    git(pub, "commit", "-qam", "edited and re-hashed")
    code, out, err = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub), "--fail-on", "stale")
    name = f"receipts/{receipt.name}"
    assert f"| `{BASE}` | changed: edited `results.csv`; receipt rewritten `{name}` |" in out
    assert f"| `{BASE}` | verified | **re-signed after an edit** |" in out
    assert (
        f"- `{BASE}`: `{name}` (Zak Example) vouches for files this change edits; the edit and the receipt "
        "come from the same change, so it does not verify the run: ask the verifier to confirm"
    ) in out.splitlines()
    assert (code, err) == (1, f"Failing on stale: receipts of {BASE} vouch for less than before\n")


def test_figures_changed_under_a_new_receipt_of_the_same_verifier(pub: Path) -> None:  # noqa: F811
    _edit_figures(pub)
    (old,) = (pub / "runs" / BASE / "receipts").glob("*.yaml")
    old.unlink()
    assert (
        cli("verify", BASE, "--by", "Zak Example", "--method", "review", "--date", "2026-10-01", "--repo", str(pub))[0]
        == 0
    )
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "edited and verified again")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    assert f"| `{BASE}` | verified | **re-signed after an edit** |" in out
    assert (
        f"| `{BASE}` | changed: edited `results.csv`; receipt added `receipts/2026-10-01-zak-example.yaml`; "
        f"receipt removed `receipts/{old.name}` |"
    ) in out


def test_an_added_rerun_receipt_is_named_as_one(tmp_path: Path, clock: CommandClock) -> None:  # noqa: F811
    root = tmp_path / "pub"
    assert cli("init", str(root))[0] == 0
    command = ["run", "command", "--trials", "5", "--metric", "v=v=([0-9]+)", "--id", RUN, "--out"]
    assert cli(*command, str(root / "runs"), "--", "sh", "-c", "echo v=100")[0] == 0
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "pr")
    assert cli("rerun", RUN, "--by", "Ana Verifier", "--repo", str(root), "--yes")[0] == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a rerun")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(root))
    assert code == 0
    (receipt,) = (root / "runs" / RUN / "receipts").glob("*.yaml")
    assert f"| `{RUN}` | changed: rerun receipt added `receipts/{receipt.name}` |" in out
