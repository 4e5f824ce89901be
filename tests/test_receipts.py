"""Receipts: hashes, staleness, SSH signatures made by the real ssh-keygen, dual verification."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.analysis.receipts import ledger_receipts
from generator.cli import app
from generator.format.hashing import file_hash
from generator.ledger.load import load
from helpers import RESULTS, generate

RUN = "2026-09-01-measured"
needs_ssh = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed (Debian: openssh-client)"
)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def keypair(tmp_path: Path, kind: str = "ed25519", name: str = "key") -> tuple[Path, str]:
    key = tmp_path / name
    extra = ["-b", "2048"] if kind == "rsa" else []
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", "test", "-f", str(key)], check=True)
    return key, " ".join(key.with_suffix(".pub").read_text().split()[:2])


def verify(repo: Path, by: str = "Zak Example", *extra: str) -> tuple[int, str]:
    return cli(
        "verify",
        f"runs/{RUN}",
        "--by",
        by,
        "--method",
        "rerun",
        "--date",
        "2026-09-25",
        "--statement",
        "Re-ran 5 trials; medians within 2%.",
        "--repo",
        str(repo),
        *extra,
    )


def state(repo: Path) -> tuple[str, list]:
    states, _ = ledger_receipts(load(repo))
    return states[RUN].state, states[RUN].receipts


def test_receipt_lists_every_file_and_check_passes(repo: Path) -> None:
    code, out = verify(repo)
    assert code == 0, out
    receipt = repo / "runs" / RUN / "receipts" / "2026-09-25-zak-example.yaml"
    data = yaml.safe_load(receipt.read_text())
    assert sorted(data["files"]) == ["manifest.yaml", "requests.csv", "results.csv", "run.yaml"]
    assert data["files"]["results.csv"] == file_hash(RESULTS.encode())
    assert cli("check", "--repo", str(repo))[0] == 0
    assert state(repo)[0] == "verified"


def test_existing_receipt_is_never_overwritten(repo: Path) -> None:
    assert verify(repo)[0] == 0
    receipt = repo / "runs" / RUN / "receipts" / "2026-09-25-zak-example.yaml"
    before = receipt.read_bytes()
    code, out = verify(repo)
    assert code == 0, out
    assert "2026-09-25-zak-example-2.yaml" in out
    assert receipt.read_bytes() == before


@pytest.mark.parametrize(
    ("change", "word"),
    [
        (lambda run: (run / "results.csv").write_text(RESULTS.replace("31.2", "35.2")), "results.csv changed"),
        (lambda run: (run / "raw.log").write_text("late addition\n"), "raw.log added"),
        (lambda run: (run / "requests.csv").unlink(), "requests.csv vanished"),
    ],
)
def test_changed_added_or_removed_file_makes_the_receipt_stale(repo: Path, change, word: str) -> None:
    assert verify(repo)[0] == 0
    change(repo / "runs" / RUN)
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert f"runs/{RUN}/receipts/2026-09-25-zak-example.yaml: stale: {word}" in out
    assert state(repo)[0] == "stale"
    code, out = cli("check", "--repo", str(repo), "--allow-stale")
    assert code == 0 and "Warning:" in out


def test_crlf_checkout_gives_the_same_hash(repo: Path) -> None:
    assert verify(repo)[0] == 0
    results = repo / "runs" / RUN / "results.csv"
    results.write_bytes(results.read_bytes().replace(b"\n", b"\r\n"))
    assert cli("check", "--repo", str(repo))[0] == 0


def test_dual_verification_needs_two_different_verifiers(repo: Path) -> None:
    assert verify(repo)[0] == 0
    assert (
        cli("verify", RUN, "--by", "zak example", "--method", "review", "--date", "2026-09-26", "--repo", str(repo))[0]
        == 0
    )
    assert state(repo)[0] == "verified"  # the same person twice
    assert (
        cli("verify", RUN, "--by", "Ada Second", "--method", "recompute", "--date", "2026-09-27", "--repo", str(repo))[
            0
        ]
        == 0
    )
    assert state(repo)[0] == "dual-verified"


@needs_ssh
@pytest.mark.parametrize("kind", ["ed25519", "rsa"])
def test_signed_round_trip_with_real_ssh_keygen(repo: Path, tmp_path: Path, kind: str) -> None:
    key, public = keypair(tmp_path, kind)
    (repo / "allowed_signers").write_text(f'"Zak Example" namespaces="benchledger-receipt" {public}\n')
    code, out = verify(repo, "Zak Example", "--sign", str(key))
    assert code == 0, out
    assert (repo / "runs" / RUN / "receipts" / "2026-09-25-zak-example.yaml.sig").is_file()
    assert cli("check", "--repo", str(repo))[0] == 0
    (receipt,) = state(repo)[1]
    assert receipt.signature == "signed"


def _signed(repo: Path, tmp_path: Path, allowed: str, namespace: str | None = None) -> str:
    key, public = keypair(tmp_path)
    (repo / "allowed_signers").write_text(allowed.format(key=public))
    assert verify(repo, "Zak Example", "--sign", str(key))[0] == 0
    receipt = repo / "runs" / RUN / "receipts" / "2026-09-25-zak-example.yaml"
    if namespace is not None:
        receipt.with_name(receipt.name + ".sig").unlink()
        subprocess.run(
            ["ssh-keygen", "-Y", "sign", "-q", "-f", str(key), "-n", namespace, str(receipt)],
            check=True,
            capture_output=True,
        )
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert f"runs/{RUN}/receipts/2026-09-25-zak-example.yaml.sig: badly signed:" in out
    return out


@needs_ssh
def test_signature_under_the_wrong_namespace(repo: Path, tmp_path: Path) -> None:
    out = _signed(repo, tmp_path, '"Zak Example" {key}\n', namespace="git")
    assert "wrong namespace: signed for 'git', expected 'benchledger-receipt'" in out


@needs_ssh
def test_unknown_principal(repo: Path, tmp_path: Path) -> None:
    out = _signed(repo, tmp_path, "someone@else {key}\n")
    assert "unknown principal: allowed_signers lists no key for 'Zak Example'" in out


@needs_ssh
def test_key_not_allowed_for_the_principal(repo: Path, tmp_path: Path) -> None:
    _, other = keypair(tmp_path, name="other")
    out = _signed(repo, tmp_path, f'"Zak Example" {other}\n# {{key}}\n')
    assert "key not allowed" in out


@needs_ssh
def test_valid_before_in_the_past(repo: Path, tmp_path: Path) -> None:
    """Judged at build time: its own state, a warning, never "signed" (tests/hostile/test_signature_time.py)."""
    key, public = keypair(tmp_path)
    (repo / "allowed_signers").write_text(f'"Zak Example" valid-before="20260101" {public}\n')
    assert verify(repo, "Zak Example", "--sign", str(key))[0] == 0
    code, out = cli("check", "--repo", str(repo))
    assert code == 0
    assert f"Warning: runs/{RUN}/receipts/2026-09-25-zak-example.yaml.sig: signed with a key that expired on " in out


@needs_ssh
def test_namespaces_option_excluding_ours(repo: Path, tmp_path: Path) -> None:
    out = _signed(repo, tmp_path, '"Zak Example" namespaces="git" {key}\n')
    assert "namespace 'benchledger-receipt' not allowed for this key" in out


@needs_ssh
def test_bytes_changed_after_signing(repo: Path, tmp_path: Path) -> None:
    key, public = keypair(tmp_path)
    (repo / "allowed_signers").write_text(f'"Zak Example" {public}\n')
    assert verify(repo, "Zak Example", "--sign", str(key))[0] == 0
    receipt = repo / "runs" / RUN / "receipts" / "2026-09-25-zak-example.yaml"
    receipt.write_text(receipt.read_text().replace("medians within 2%", "medians within 1%"))
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and "bytes changed" in out


@needs_ssh
def test_key_type_the_library_cannot_verify(repo: Path, tmp_path: Path) -> None:
    key, public = keypair(tmp_path, "ecdsa")
    (repo / "allowed_signers").write_text(f'"Zak Example" {public}\n')
    assert verify(repo, "Zak Example", "--sign", str(key))[0] == 0
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert "key type 'ecdsa-sha2-nistp256' cannot be verified here; use an ssh-ed25519 or RSA key" in out


GOOD = {
    "schema": "benchledger.receipt/1",
    "verifier": "Zak",
    "method": "rerun",
    "date": "2026-09-25",
    "files": {"results.csv": "sha256:" + "0" * 64},
}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"method": "vibes"}, "method: Input should be 'rerun', 'review' or 'recompute'"),
        ({"files": {"/etc/passwd": "sha256:" + "0" * 64}}, "is absolute"),
        ({"files": {"../other/results.csv": "sha256:" + "0" * 64}}, "contains '..'"),
        ({"files": {"results.csv": "md5:abc"}}, "files.results.csv: String should match pattern"),
    ],
)
def test_bad_receipts_are_named(repo: Path, change: dict, expected: str) -> None:
    (repo / "runs" / RUN / "receipts").mkdir()
    (repo / "runs" / RUN / "receipts" / "r.yaml").write_text(yaml.safe_dump({**GOOD, **change}))
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert f"runs/{RUN}/receipts/r.yaml" in out and expected in out, out


def test_signature_without_its_receipt(repo: Path) -> None:
    (repo / "runs" / RUN / "receipts").mkdir()
    (repo / "runs" / RUN / "receipts" / "gone.yaml.sig").write_text("x")
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and "is a signature without its receipt" in out


def test_malformed_allowed_signers_line_is_numbered(repo: Path) -> None:
    assert verify(repo)[0] == 0
    (repo / "allowed_signers").write_text('# comment\n\nzak namespaces="unclosed ssh-ed25519 AAAA\n')
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and "allowed_signers:3: malformed allowed_signers line" in out


def test_site_shows_receipts_states_and_flags_claims_on_stale_runs(repo: Path) -> None:
    assert verify(repo)[0] == 0
    assert (
        cli("verify", RUN, "--by", "Ada Second", "--method", "review", "--date", "2026-09-26", "--repo", str(repo))[0]
        == 0
    )

    out = generate(repo)
    page = out[f"runs/{RUN}/index.md"].decode()
    assert (
        '<tr><td data-label="Verifier">Zak Example</td><td data-label="Method">rerun</td>'
        '<td data-label="Date">2026&#45;09&#45;25</td><td data-label="Statement">Re&#45;ran 5 trials&#59; medians'
        ' within 2&#37;.</td><td data-label="Status">verified</td><td data-label="Signature">unsigned</td></tr>'
    ) in page
    assert "bl-receipt--dual-verified" in page and "two verified receipts by different people" in page
    assert "bl-receipt--dual-verified" in out["runs/index.md"].decode()
    # tamper: the run turns stale on the site, and a claim resting on it carries the flag
    results = repo / "runs" / RUN / "results.csv"
    results.write_text(RESULTS.replace("31.2", "35.2"))
    report = (
        "---\ntitle: R\nclaims:\n  - id: c\n    statement: Fast.\n    run: "
        + RUN
        + "\n    metric: tokens_per_second\n    at: {concurrency: 1}\n    value: 31\n---\n# R\n"
    )
    (repo / "site_src" / "reports").mkdir(parents=True)
    (repo / "site_src" / "reports" / "r.md").write_text(report)
    out = generate(repo)
    page = out[f"runs/{RUN}/index.md"].decode()
    assert "stale: results.csv changed since it was written" in page.replace("&#58;", ":")
    assert "stale run" in out["claims/index.md"].decode()
