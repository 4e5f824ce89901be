"""Signatures are judged at build time, as `ssh-keygen -Y verify` judges them: a key retired
before today signs nothing valid however the commit is dated, a key not yet valid signs
nothing, and a signature whose key has since expired is its own state."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.analysis.receipts import Clock, ledger_receipts
from generator.ledger.load import load
from helpers import cli, measured_run, publication, write_tree

RUN = "2025-05-01-measured"
RECEIPT = f"runs/{RUN}/receipts/2025-05-02-zak-example.yaml"
pytestmark = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None or shutil.which("git") is None,
    reason="needs ssh-keygen and git (Debian: openssh-client git)",
)


def signed_receipt(tmp_path: Path, options: str) -> Path:
    """A publication whose receipt is signed today by a key listed with `options`."""
    repo = write_tree(tmp_path / "pub", publication(measured_run(RUN, date="2025-05-01")))
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "t", "-f", str(key)], check=True)
    public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    (repo / "allowed_signers").write_text(f'"Zak Example" {options} {public}\n'.replace("  ", " "))
    command = ["verify", RUN, "--by", "Zak Example", "--method", "review", "--date", "2025-05-02"]
    assert cli(*command, "--sign", str(key), "--repo", str(repo))[0] == 0
    return repo


def commit(repo: Path, when: str) -> None:
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "x"], check=True, env=env)


def ssh_keygen_accepts(repo: Path) -> bool:
    """What `ssh-keygen -Y verify` says of the receipt now."""
    command = ["ssh-keygen", "-Y", "verify", "-f", str(repo / "allowed_signers"), "-I", "Zak Example"]
    command += ["-n", "benchledger-receipt", "-s", str(repo / f"{RECEIPT}.sig")]
    with (repo / RECEIPT).open("rb") as receipt:
        return subprocess.run(command, stdin=receipt, capture_output=True, check=False).returncode == 0


def test_a_retired_key_backdated_by_its_commit_is_not_signed(tmp_path: Path) -> None:
    repo = signed_receipt(tmp_path, 'valid-before="20250601"')
    commit(repo, "2025-05-02T12:00:00Z")  # the committer's choice of date
    assert not ssh_keygen_accepts(repo)
    (state,) = ledger_receipts(load(repo))[0][RUN].receipts
    assert state.signed is not True
    assert state.signature == "signed with a key that expired on 2025-06-01"
    code, out = cli("check", "--repo", str(repo))
    assert code == 0
    assert (
        f"Warning: {RECEIPT}.sig: signed with a key that expired on 2025-06-01: the signature cannot show it "
        "was made before then, so it counts as none; ask the verifier to sign the receipt again with a current "
        "key (ssh-keygen -Y sign), or remove the .sig\n"
    ) in out


def test_a_reproducible_build_epoch_from_the_commit_does_not_revive_the_key(tmp_path: Path) -> None:
    """CI recipes set SOURCE_DATE_EPOCH to the last commit's date: the committer's choice again."""
    repo = signed_receipt(tmp_path, 'valid-before="20250601"')
    commit(repo, "2025-05-02T12:00:00Z")
    epoch = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    command = [sys.executable, "-m", "generator.cli", "check", "--repo", str(repo)]
    done = subprocess.run(
        command, env={**os.environ, "SOURCE_DATE_EPOCH": epoch.stdout.strip()}, capture_output=True, text=True
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "signed with a key that expired on 2025-06-01" in done.stderr


def test_a_key_not_yet_valid_is_badly_signed_whatever_the_commit_date(tmp_path: Path) -> None:
    repo = signed_receipt(tmp_path, 'valid-after="20300101"')
    commit(repo, "2030-06-01T12:00:00Z")
    assert not ssh_keygen_accepts(repo)
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert f"{RECEIPT}.sig: badly signed: not yet valid: the key is valid after 2030-01-01 (line 1)" in out


def test_the_site_shows_the_expired_state(tmp_path: Path) -> None:
    repo = signed_receipt(tmp_path, 'valid-before="20250601Z"')
    assert cli("generate", "--repo", str(repo))[0] == 0
    page = (repo / "site_src" / "runs" / RUN / "index.md").read_text()
    assert "signed with a key that expired on 2025&#45;06&#45;01" in page


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("", "signed"),
        ('valid-after="20200101",valid-before="20991231"', "signed"),
        ('valid-before="20250601"', "signed with a key that expired on 2025-06-01"),
        ('valid-before="20250601Z"', "signed with a key that expired on 2025-06-01"),
        ('valid-after="20300101"', "badly signed"),
        ('valid-after="20300101Z"', "badly signed"),
        ('namespaces="git"', "badly signed"),
        ("cert-authority", "badly signed"),
    ],
)
def test_verdicts_match_ssh_keygen_at_build_time(tmp_path: Path, options: str, expected: str) -> None:
    repo = signed_receipt(tmp_path, options)
    (state,) = ledger_receipts(load(repo))[0][RUN].receipts
    assert state.signature == expected
    assert ssh_keygen_accepts(repo) == (expected == "signed")


def test_the_judging_time_is_the_clock_given_not_a_date_in_the_repository(tmp_path: Path) -> None:
    repo = signed_receipt(tmp_path, 'valid-before="20250601Z"')
    ledger = load(repo)
    before = Clock(dt.datetime(2025, 5, 31, 23, 59, 59, tzinfo=dt.UTC))
    at = Clock(dt.datetime(2025, 6, 1, 0, 0, 0, tzinfo=dt.UTC))  # ssh-keygen: expired only after valid-before
    after = Clock(dt.datetime(2025, 6, 1, 0, 0, 1, tzinfo=dt.UTC))
    assert [ledger_receipts(ledger, c)[0][RUN].receipts[0].signature for c in (before, at, after)] == [
        "signed",
        "signed",
        "signed with a key that expired on 2025-06-01",
    ]
