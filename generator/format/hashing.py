"""File hashes as FORMAT.md defines them: sha256 of the bytes with CRLF normalized to LF."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

RECEIPTS_DIR = "receipts/"


def normalized_bytes(data: bytes) -> bytes:
    """File bytes as receipts hash them: CRLF normalized to LF."""
    return data.replace(b"\r\n", b"\n")


def file_hash(data: bytes) -> str:
    """`sha256:<hex>` of the bytes with CRLF normalized to LF."""
    return "sha256:" + hashlib.sha256(normalized_bytes(data)).hexdigest()


def hashed_files(blobs: Mapping[str, bytes]) -> dict[str, str]:
    """Every file of a run folder except receipts/, with its hash, as a receipt lists them."""
    return {name: file_hash(data) for name, data in sorted(blobs.items()) if not name.startswith(RECEIPTS_DIR)}
