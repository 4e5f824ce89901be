"""Review judges signatures with the base branch's allowed_signers, never the pull request's own:
a pull request that edits figures, lists its own key under a maintainer's name and signs the
receipt does not read "unverified → verified" (issue 34: high #2, build item 2)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_review import FAST, cli, git, pub  # noqa: F401  (pub is a fixture)

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("ssh-keygen") is None, reason="needs git and ssh-keygen"
)


def keypair(folder: Path, name: str) -> tuple[Path, str]:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key, " ".join(key.with_suffix(".pub").read_text().split()[:2])


@pytest.fixture
def signed_pub(pub: Path, tmp_path: Path) -> tuple[Path, Path, Path]:  # noqa: F811
    """The base lists the maintainer's key; returns (publication, maintainer's key, attacker's key)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    mine, mine_public = keypair(keys, "maintainer")
    theirs, _ = keypair(keys, "attacker")
    (pub / "allowed_signers").write_text(f'"Zak Example" {mine_public}\n')
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "signers")
    return pub, mine, theirs


def _pull_request(root: Path, key: Path) -> None:
    """Figures edited, the attacker's key listed under the maintainer's name, the receipt signed."""
    git(root, "checkout", "-qb", "pr")
    results = root / "runs" / FAST / "results.csv"
    results.write_text(results.read_text().replace("37.44", "47.44"))
    public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    with (root / "allowed_signers").open("a") as signers:
        signers.write(f'"Zak Example" {public}\n')
    code, out = cli(
        "verify", FAST, "--by", "Zak Example", "--method", "review", "--sign", str(key), "--repo", str(root)
    )[:2]
    assert code == 0, out
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")


def test_a_key_the_pull_request_adds_signs_nothing_in_its_review(signed_pub: tuple[Path, Path, Path]) -> None:
    root, _, theirs = signed_pub
    _pull_request(root, theirs)
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(root))
    assert code == 0
    assert f"| `{FAST}` | unverified | **verified** |" not in out
    assert "verified" not in [cell.strip("* ") for line in out.splitlines() for cell in line.split("|")]
    (bad,) = [line for line in out.splitlines() if "badly signed" in line]
    assert bad.startswith("- error: runs&#47;2026&#45;09&#45;01&#45;fast&#47;receipts&#47;")
    assert bad.endswith(
        "&#45;zak&#45;example.yaml.sig&#58; badly signed&#58; key not allowed&#58; the signing key is not "
        "listed for &#39;Zak Example&#39; in allowed&#95;signers"
    )
    assert (
        "> **⚠ `allowed_signers` (changed):** adds a key for Zak Example. Who may sign receipts; this review "
        "judges signatures with the base branch's file (with this change's own file, `2026-09-01-fast` would "
        "read verified)."
    ) in out.splitlines()


def test_a_maintainer_key_the_base_lists_still_verifies(signed_pub: tuple[Path, Path, Path]) -> None:
    root, mine, _ = signed_pub
    git(root, "checkout", "-qb", "pr")
    code = cli("verify", FAST, "--by", "Zak Example", "--method", "review", "--sign", str(mine), "--repo", str(root))[0]
    assert code == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(root))
    assert code == 0
    assert f"| `{FAST}` | unverified | **verified** |" in out
    assert "badly signed" not in out
