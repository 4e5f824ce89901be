"""Receipts cannot be forged: an expired key cannot sign a backdated receipt, a receipt cannot
predate its run or postdate its signature, two spellings of one name are one person, and a
malformed signature is called malformed."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import cli, measured_run, publication, write_tree

RUN = "2026-09-01-measured"
needs_tools = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None or shutil.which("git") is None,
    reason="needs ssh-keygen and git (Debian: openssh-client git)",
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "pub", publication(measured_run()))


def keypair(tmp_path: Path) -> tuple[Path, str]:
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "t", "-f", str(key)], check=True)
    return key, " ".join(key.with_suffix(".pub").read_text().split()[:2])


def verify(repo: Path, by: str, date: str, *extra: str) -> tuple[int, str]:
    return cli("verify", RUN, "--by", by, "--method", "review", "--date", date, "--repo", str(repo), *extra)


def commit(repo: Path, when: str) -> None:
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "x"], check=True, env=env)


@needs_tools
def test_an_expired_key_cannot_sign_a_backdated_receipt(repo: Path, tmp_path: Path) -> None:
    """Judged at build time (today, after 2026-10-01), whatever the commit date says."""
    key, public = keypair(tmp_path)
    (repo / "allowed_signers").write_text(f'"Zak Example" valid-before="20261001" {public}\n')
    assert verify(repo, "Zak Example", "2026-09-25", "--sign", str(key))[0] == 0
    commit(repo, "2026-09-26T12:00:00Z")  # a commit date inside the key's window proves nothing
    code, out = cli("check", "--repo", str(repo))
    assert code == 0
    assert "2026-09-25-zak-example.yaml.sig: signed with a key that expired on 2026-10-01: " in out


def test_a_receipt_cannot_predate_its_run(repo: Path) -> None:
    assert verify(repo, "Zak Example", "2026-09-25")[0] == 0
    folder = repo / "runs" / RUN / "receipts"
    written = folder / "2026-09-25-zak-example.yaml"
    (folder / "2026-08-01-zak-example.yaml").write_text(written.read_text().replace("2026-09-25", "2026-08-01"))
    written.unlink()
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert (
        f"runs/{RUN}/receipts/2026-08-01-zak-example.yaml: date: dated 2026-08-01 but the run was measured on "
        "2026-09-01; a receipt cannot predate its run" in out
    )


def test_a_receipt_cannot_be_dated_after_the_build(repo: Path) -> None:
    assert verify(repo, "Zak Example", "2099-01-01") == (
        1,
        "Error: --date: '2099-01-01' is after today; give the day you verified the run\n",
    )
    from generator.authoring.receipt import write_receipt

    write_receipt(repo, RUN, by="Zak Example", method="review", date="2099-01-01")  # written by hand
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and "date: dated 2099-01-01, after the build" in out


@pytest.mark.parametrize(
    "twin",
    [
        "Zak\u200bExample".replace("k", "k ", 0),
        "Zak\u200b Example",
        "Zаk Example",
        "ＺＡＫ　Ｅｘａｍｐｌｅ",
        "zak  example\u2060",
    ],
)
def test_two_spellings_of_one_name_are_one_verifier(repo: Path, twin: str) -> None:
    assert verify(repo, "Zak Example", "2026-09-25")[0] == 0
    assert verify(repo, twin, "2026-09-26")[0] == 0
    from generator.analysis.receipts import ledger_receipts
    from generator.ledger.load import load

    states, _ = ledger_receipts(load(repo))
    assert states[RUN].state == "verified"


def test_two_unsigned_receipts_say_so(repo: Path) -> None:
    assert verify(repo, "Zak Example", "2026-09-25")[0] == 0
    assert verify(repo, "Ada Lovelace", "2026-09-26")[0] == 0
    assert cli("generate", "--repo", str(repo))[0] == 0
    page = (repo / "site_src" / "runs" / RUN / "index.md").read_text()
    assert (
        '<span class="bl-receipt bl-receipt--dual-verified">dual&#45;verified &#40;no rerun on record, unsigned&#41;</span>'
        in page
    )
    assert "neither is signed, so the names are all that tells them apart" in page


def _field(blob: bytes, at: int) -> tuple[bytes, int]:
    size = int.from_bytes(blob[at : at + 4], "big")
    return blob[at + 4 : at + 4 + size], at + 4 + size


@needs_tools
def test_a_malformed_key_in_a_signature_is_called_malformed(repo: Path, tmp_path: Path) -> None:
    key, public = keypair(tmp_path)
    (repo / "allowed_signers").write_text(f'"Zak Example" {public}\n')
    assert verify(repo, "Zak Example", "2026-09-25", "--sign", str(key))[0] == 0
    sig = repo / "runs" / RUN / "receipts" / "2026-09-25-zak-example.yaml.sig"
    lines = sig.read_text().splitlines()
    blob = base64.b64decode("".join(lines[1:-1]))
    key_blob, end = _field(blob, 10)  # after "SSHSIG" and the version
    algo, _ = _field(key_blob, 0)
    broken = len(algo).to_bytes(4, "big") + algo + (5).to_bytes(4, "big") + b"short"
    forged = blob[:10] + len(broken).to_bytes(4, "big") + broken + blob[end:]
    armored = base64.b64encode(forged).decode()
    sig.write_text("\n".join([lines[0], *[armored[i : i + 70] for i in range(0, len(armored), 70)], lines[-1]]) + "\n")
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and "badly signed: malformed signature" in out and "bytes changed" not in out
