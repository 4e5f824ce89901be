"""Receipts: which bytes a person vouched for, whether they still match, and
whether the receipt's SSH signature holds.

Hashes are sha256 of a file's bytes with CRLF normalized to LF. Signatures are
SSHSIG (`ssh-keygen -Y sign`) over the receipt's exact bytes, namespace
`benchledger-receipt`, verified in Python with the `sshsig` package against the
repository's `allowed_signers`, at the receipt's date so that the same commit
always gives the same answer.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .errors import Problem

if TYPE_CHECKING:
    from .load import Ledger

NAMESPACE = "benchledger-receipt"
RECEIPTS_DIR = "receipts/"
SUPPORTED_KEYS = ("ssh-ed25519", "ssh-rsa")
RunState = Literal["unverified", "verified", "dual-verified", "stale"]


def file_hash(data: bytes) -> str:
    """`sha256:<hex>` of the bytes with CRLF normalized to LF."""
    return "sha256:" + hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def hashed_files(blobs: Mapping[str, bytes]) -> dict[str, str]:
    """Every file of a run folder except receipts/, with its hash, as a receipt lists them."""
    return {name: file_hash(data) for name, data in sorted(blobs.items()) if not name.startswith(RECEIPTS_DIR)}


@dataclass(frozen=True)
class Signer:
    """One line of allowed_signers."""

    line: int
    principals: tuple[str, ...]
    key_type: str
    key: object | None  # sshsig PublicKey, None when the key type cannot be verified here
    namespaces: tuple[str, ...] | None
    valid_after: dt.datetime | None
    valid_before: dt.datetime | None


def _when(value: str) -> dt.datetime:
    """ssh-keygen's YYYYMMDD[HHMM[SS]][Z] time format (read as UTC)."""
    digits = value.rstrip("Zz")
    formats = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
    if len(digits) not in formats or not digits.isdigit():
        raise ValueError(f"time {value!r} is not YYYYMMDD[HHMM[SS]][Z]")
    return dt.datetime.strptime(digits, formats[len(digits)]).replace(tzinfo=dt.UTC)


def parse_allowed_signers(text: str, rel: str = "allowed_signers") -> tuple[list[Signer], list[Problem]]:
    """Parse an ssh-keygen allowed_signers file; a malformed line is a problem with its number."""
    from sshsig import PublicKey
    from sshsig.allowed_signers import AllowedSigner

    signers, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            parsed = AllowedSigner.parse(line)
            options = parsed.options or {}
            after = _when(options["valid-after"]) if "valid-after" in options else None
            before = _when(options["valid-before"]) if "valid-before" in options else None
            key: object | None = None
            if parsed.key_type in SUPPORTED_KEYS:
                key = PublicKey.from_openssh_str(f"{parsed.key_type} {parsed.base64_key}")
        except ValueError as err:
            problems.append(
                Problem(
                    rel,
                    number,
                    None,
                    f"malformed allowed_signers line: {err}; write "
                    '`principal [namespaces="benchledger-receipt"] ssh-ed25519 AAAA...`',
                )
            )
            continue
        namespaces = tuple(options["namespaces"].split(",")) if "namespaces" in options else None
        principals = tuple(p.strip() for p in parsed.principals.split(","))
        signers.append(Signer(number, principals, parsed.key_type, key, namespaces, after, before))
    return signers, problems


def _principal_matches(patterns: Sequence[str], name: str) -> bool:
    negated = [p[1:] for p in patterns if p.startswith("!")]
    if any(fnmatch.fnmatchcase(name, p) for p in negated):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in patterns if not p.startswith("!"))


def _key_type(blob: bytes) -> str:
    """The algorithm name that opens an SSH wire-format public key."""
    size = int.from_bytes(blob[:4], "big")
    return blob[4 : 4 + size].decode(errors="replace")


def check_signature(
    receipt: bytes, armored: bytes, verifier: str, signers: Iterable[Signer], at: dt.date
) -> str | None:
    """None when the signature holds; otherwise why it does not, in words."""
    import sshsig
    from sshsig.sshsig import SshsigSignature

    try:
        parsed = SshsigSignature.from_armored(armored)
    except ValueError as err:
        return f"not an SSH signature ({err})"
    namespace = parsed.namespace.decode(errors="replace")
    key_type = _key_type(bytes(parsed.public_key))
    if key_type not in SUPPORTED_KEYS:
        return f"key type {key_type!r} cannot be verified here; use an ssh-ed25519 or RSA key"
    if namespace != NAMESPACE:
        return f"wrong namespace: signed for {namespace!r}, expected {NAMESPACE!r}"
    try:
        key = sshsig.check_signature(receipt, armored, namespace=NAMESPACE)
    except sshsig.InvalidSignature:
        return "bytes changed: the signature does not match the receipt as it is now"
    mine = [s for s in signers if _principal_matches(s.principals, verifier)]
    if not mine:
        return f"unknown principal: allowed_signers lists no key for {verifier!r}"
    holding = [s for s in mine if s.key is not None and s.key == key]
    if not holding:
        return f"key not allowed: the signing key is not listed for {verifier!r} in allowed_signers"
    when = dt.datetime.combine(at, dt.time(12), dt.UTC)
    reasons = []
    for s in holding:
        if s.namespaces is not None and not any(fnmatch.fnmatchcase(NAMESPACE, n) for n in s.namespaces):
            reasons.append(f"namespace {NAMESPACE!r} not allowed for this key (line {s.line})")
        elif s.valid_before is not None and when >= s.valid_before:
            reasons.append(f"expired: the key was valid before {s.valid_before:%Y-%m-%d} (line {s.line})")
        elif s.valid_after is not None and when < s.valid_after:
            reasons.append(f"not yet valid: the key is valid after {s.valid_after:%Y-%m-%d} (line {s.line})")
        else:
            return None
    return "; ".join(reasons)


@dataclass(frozen=True)
class ReceiptStatus:
    name: str  # run-relative path
    verifier: str
    method: str
    date: dt.date
    statement: str | None
    changed: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    signed: bool | None = None  # None: no .sig beside the receipt
    signature_problem: str | None = None

    @property
    def stale(self) -> bool:
        return bool(self.changed or self.vanished or self.added)

    @property
    def state(self) -> str:
        return "stale" if self.stale else "verified"

    @property
    def signature(self) -> str:
        if self.signed is None:
            return "unsigned"
        return "signed" if self.signed else "badly signed"

    def staleness(self) -> str:
        parts = [
            f"{', '.join(files)} {what}"
            for files, what in ((self.changed, "changed"), (self.vanished, "vanished"), (self.added, "added"))
            if files
        ]
        return "; ".join(parts) + " since it was written"


@dataclass(frozen=True)
class RunReceipts:
    state: RunState
    receipts: tuple[ReceiptStatus, ...]
    not_covered: tuple[str, ...] = field(default=())


def receipt_status(
    blobs: Mapping[str, bytes], name: str, receipt: object, signature: str | None, signers: Sequence[Signer]
) -> ReceiptStatus:
    """Compare a receipt's hashes with the run folder as it is, and check its signature."""
    from .model import ReceiptFile

    assert isinstance(receipt, ReceiptFile)
    now = hashed_files(blobs)
    listed = receipt.files
    changed = tuple(f for f in listed if f in now and now[f] != listed[f])
    vanished = tuple(f for f in listed if f not in now)
    added = tuple(f for f in now if f not in listed)
    signed, problem = None, None
    if signature is not None:
        problem = check_signature(blobs[name], blobs[signature], receipt.verifier, signers, receipt.date)
        signed = problem is None
    return ReceiptStatus(
        name,
        receipt.verifier,
        receipt.method,
        receipt.date,
        receipt.statement,
        changed,
        vanished,
        added,
        signed,
        problem,
    )


def run_receipts(
    blobs: Mapping[str, bytes], receipts: Sequence[tuple[str, object, str | None]], signers: Sequence[Signer]
) -> RunReceipts:
    """The run's state: unverified, verified, dual-verified (two verifiers), or stale."""
    statuses = tuple(receipt_status(blobs, n, r, s, signers) for n, r, s in receipts)
    covered = {f for _, r, _ in receipts for f in r.files}  # type: ignore[attr-defined]
    not_covered = tuple(f for f in hashed_files(blobs) if f not in covered) if receipts else ()
    good = [s for s in statuses if not s.stale and s.signed is not False]
    if any(s.stale for s in statuses):
        state: RunState = "stale"
    elif len({_person(s.verifier) for s in good}) >= 2:
        state = "dual-verified"
    elif good:
        state = "verified"
    else:
        state = "unverified"
    return RunReceipts(state, statuses, not_covered)


def _person(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip().casefold())


def ledger_receipts(ledger: Ledger) -> tuple[dict[str, RunReceipts], list[Problem]]:
    """Receipt status of every run, and the problems of allowed_signers."""
    signers: list[Signer] = []
    problems: list[Problem] = []
    if ledger.allowed_signers is not None:
        signers, problems = parse_allowed_signers(ledger.allowed_signers)
    out = {
        run.id: run_receipts(run.blobs, [(r.name, r.data, r.signature) for r in run.receipts], signers)
        for run in ledger.runs.values()
    }
    return out, problems


def receipt_problems(ledger: Ledger, states: Mapping[str, RunReceipts], stale_is_error: bool) -> list[Problem]:
    """Stale and badly signed receipts as problems naming run, receipt and file."""
    out = []
    for run_id, state in states.items():
        for r in state.receipts:
            where = f"runs/{run_id}/{r.name}"
            if r.stale:
                out.append(
                    Problem(
                        where,
                        None,
                        None,
                        f"stale: {r.staleness()}; re-verify the run and "
                        "write a new receipt (benchledger verify), or restore the files",
                        "error" if stale_is_error else "warning",
                    )
                )
            if r.signed is False:
                out.append(Problem(where + ".sig", None, None, f"badly signed: {r.signature_problem}"))
    return out
