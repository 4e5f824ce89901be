"""SSH signatures of receipts: the repository's allowed_signers, and whether a signature holds.

Signatures are SSHSIG (`ssh-keygen -Y sign`) over the receipt's exact bytes, namespace
`benchledger-receipt`, verified in Python with the `sshsig` package, with the semantics of
`ssh-keygen -Y verify` at the time the signature is judged: a key line holds when that time is
neither before its `valid-after` nor after its `valid-before` (times without `Z` are local
time, as ssh-keygen reads them). The time is the build's clock (see analysis.receipts), never
a date the signer or a committer wrote.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import Problem

NAMESPACE = "benchledger-receipt"
SUPPORTED_KEYS = ("ssh-ed25519", "ssh-rsa")


@dataclass(frozen=True, kw_only=True)
class Signer:
    """One line of allowed_signers."""

    line: int
    principals: tuple[str, ...]
    key_type: str
    key: object | None  # sshsig PublicKey, None when the key type cannot be verified here
    namespaces: tuple[str, ...] | None
    valid_after: dt.datetime | None
    valid_before: dt.datetime | None
    cert_authority: bool = False  # the key signs certificates, not receipts (ssh-keygen's cert-authority)


@dataclass(frozen=True)
class Judged:
    """A signature as judged at one time: it holds (neither field set), it does not (`problem`,
    "badly signed"), or it matches a listed key whose every line for it had expired by then
    (`expired`: the key's valid-before day; the signature cannot show it was made before it)."""

    problem: str | None = None
    expired: dt.date | None = None


def _when(value: str) -> dt.datetime:
    """ssh-keygen's YYYYMMDD[HHMM[SS]][Z] time format: UTC with Z, local time without."""
    digits = value[:-1] if value[-1:] in ("Z", "z") else value
    formats = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
    if len(digits) not in formats or not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"time {value!r} is not YYYYMMDD[HHMM[SS]][Z]")
    naive = dt.datetime.strptime(digits, formats[len(digits)])
    return naive.replace(tzinfo=dt.UTC) if digits != value else naive.astimezone()


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
        except (ValueError, IndexError, KeyError, TypeError, RuntimeError) as err:
            reason = str(err)[:200] or "the key cannot be read"
            problems.append(
                Problem(
                    file=rel,
                    line=number,
                    message=f"malformed allowed_signers line: {reason}; write "
                    '`principal [namespaces="benchledger-receipt"] ssh-ed25519 AAAA...`',
                )
            )
            continue
        namespaces = tuple(options["namespaces"].split(",")) if "namespaces" in options else None
        principals = tuple(p.strip() for p in parsed.principals.split(","))
        ca = "cert-authority" in options
        signer = Signer(
            line=number,
            principals=principals,
            key_type=parsed.key_type,
            key=key,
            namespaces=namespaces,
            valid_after=after,
            valid_before=before,
            cert_authority=ca,
        )
        signers.append(signer)
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
    receipt: bytes, armored: bytes, verifier: str, signers: Iterable[Signer], when: dt.datetime
) -> Judged:
    """Whether the signature holds at `when`, the time it is judged at (the build's clock:
    never the signer's own `date:`, never a commit date)."""
    problem = _problem(receipt, armored, verifier, signers, when)
    return problem if isinstance(problem, Judged) else Judged(problem)


def _problem(
    receipt: bytes, armored: bytes, verifier: str, signers: Iterable[Signer], when: dt.datetime
) -> str | Judged | None:
    import sshsig
    from sshsig.sshsig import SshsigSignature

    try:
        parsed = SshsigSignature.from_armored(armored)
    except (ValueError, IndexError, UnicodeDecodeError) as err:
        return f"malformed signature: not an SSH signature ({err})"
    namespace = parsed.namespace.decode(errors="replace")
    key_type = _key_type(bytes(parsed.public_key))
    if key_type not in SUPPORTED_KEYS:
        return f"key type {key_type[:40]!r} cannot be verified here; use an ssh-ed25519 or RSA key"
    try:
        sshsig.PublicKey.from_ssh_encoding(bytes(parsed.public_key))
    except (ValueError, IndexError, TypeError, RuntimeError):
        return "malformed signature: its public key cannot be read"
    if namespace != NAMESPACE:
        return f"wrong namespace: signed for {namespace!r}, expected {NAMESPACE!r}"
    try:
        key = sshsig.check_signature(receipt, armored, namespace=NAMESPACE)
    except sshsig.InvalidSignature:
        return "bytes changed: the signature does not match the receipt as it is now"
    except (ValueError, IndexError, TypeError, RuntimeError) as err:
        return f"malformed signature ({err})"
    mine = [s for s in signers if _principal_matches(s.principals, verifier)]
    if not mine:
        return f"unknown principal: allowed_signers lists no key for {verifier!r}"
    holding = [s for s in mine if s.key is not None and s.key == key and not s.cert_authority]
    if not holding and any(s.key is not None and s.key == key for s in mine):
        return (
            "key not allowed: the signing key is listed only as a cert-authority, which vouches for "
            "certificates, not for signatures it makes itself (as ssh-keygen -Y verify)"
        )
    if not holding:
        return f"key not allowed: the signing key is not listed for {verifier!r} in allowed_signers"
    return _validity(holding, when)


def _validity(holding: Sequence[Signer], when: dt.datetime) -> str | Judged | None:
    """ssh-keygen's checks of each allowed_signers line that lists the key: the namespace, then
    `when < valid-after` (not yet valid), then `when > valid-before` (expired)."""
    reasons, expired = [], []
    for s in holding:
        if s.namespaces is not None and not any(fnmatch.fnmatchcase(NAMESPACE, n) for n in s.namespaces):
            reasons.append(f"namespace {NAMESPACE!r} not allowed for this key (line {s.line})")
        elif s.valid_after is not None and when < s.valid_after:
            reasons.append(f"not yet valid: the key is valid after {s.valid_after:%Y-%m-%d} (line {s.line})")
        elif s.valid_before is not None and when > s.valid_before:
            expired.append(s.valid_before)
        else:
            return None
    if expired:
        return Judged(expired=max(expired).date())
    return "; ".join(reasons)
