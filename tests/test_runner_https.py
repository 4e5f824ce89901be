"""The runner against a server that speaks TLS: measured when its certificate is trusted
(SSL_CERT_FILE, as OpenSSL and httpx read it), refused with the fix when it is not."""

from __future__ import annotations

import csv
import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from fakeserver import Behaviour, FakeServer
from helpers import cli


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 valid for a day, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The fake llama.cpp server behind TLS: its https base URL and its certificate."""
    cert, key = self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = FakeServer(Behaviour(chunks=4))
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    with server:
        yield server.base_url.replace("http://", "https://"), cert


def measure(url: str, root: Path) -> tuple[int, str]:
    return cli(
        "run", "openai", "--base-url", url, "--concurrency", "1,2", "--trials", "2", "--requests", "4",
        "--max-tokens", "8", "--id", "2026-12-01-tls", "--title", "over TLS", "--out", str(root / "runs"),
    )  # fmt: skip


def test_a_trusted_certificate_is_measured(
    tls_server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    code, out = measure(url, tmp_path)
    assert code == 0, out
    run = tmp_path / "runs" / "2026-12-01-tls"
    with (run / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["concurrency"], r["trial"]) for r in rows] == [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]
    assert {r["errors"] for r in rows} == {"0"} and all(float(r["tokens_per_second"]) > 0 for r in rows)
    with (run / "requests.csv").open() as fh:
        requests = list(csv.DictReader(fh))
    assert len(requests) == 2 * 2 * 4 and {r["output_tokens"] for r in requests} == {"4"}  # 4 chunks of 1 token
    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["runner"]["base_url"] == url


def test_an_untrusted_certificate_is_refused_with_the_fix(tls_server: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = tls_server
    code, out = measure(url, tmp_path)
    assert code == 1 and "Traceback" not in out
    assert "TLS certificate is not trusted" in out and "SSL_CERT_FILE" in out, out
    assert "start it or fix --base-url" not in out
    assert not (tmp_path / "runs" / "2026-12-01-tls").exists()
