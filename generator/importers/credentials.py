"""Credentials in a tool's output: a key, token or password found by its name or in text (a
URL's userinfo, a bearer token, `--api-key=...`) refuses the import, since the original file is
published under raw/."""

from __future__ import annotations

import re
from typing import Any

from ..errors import BenchledgerError, Problem

SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "pwd", "authorization", "bearer", "credential", "credentials", "cookie"}
)
SECRET_JOINED = ("apikey", "accesskey", "privatekey", "secretkey", "sessionkey")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# userinfo with a password, or a user name long enough to be a token (https://ghp_...@host);
# ssh://git@host is neither. A scheme is tried only where a run of scheme characters begins
# (the lookbehind), so a 100,000-letter value is scanned once, not once per letter: linear.
_USERINFO = re.compile(
    r"(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#\s@:]*:[^/?#\s@]+|[^/?#\s@:]{20,})@"
)
_BEARER = re.compile(r"\bbearer\s+[A-Za-z0-9._~+/=-]{12,}", re.I)
_ASSIGNED = re.compile(r"^-{0,2}([A-Za-z0-9_.-]+)[=:]\s*(.+)$")
_QUERY = re.compile(r"[?&]([^=&#\s]+)=([^&#\s]+)")


def secret_name(name: str) -> bool:
    """A key, header, flag or variable name that holds a credential: api_key, openai_api_key,
    X-Api-Key, hf_token, bearer_token, client_secret, password, Authorization, --api-key...
    (the name's last word, or api key and the like anywhere in it: `tokens`, `max_tokens`,
    `tokenizer`, `time_to_first_token_ms` are not credentials)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    joined = "".join(words)
    return bool(words) and (words[-1] in SECRET_WORDS or any(s in joined for s in SECRET_JOINED))


def redacted(value: str) -> bool:
    text = value.strip().strip("\"'")
    return not text.strip("*") or text in ("None", "null") or "redacted" in text.lower() or text.startswith("${")


def secret_in_text(text: str) -> bool:
    """A credential inside a string: userinfo in a URL, a bearer token, a secret query
    parameter, or `NAME=value` / `Header: value` with a secret name."""
    if _USERINFO.search(text) or _BEARER.search(text):
        return True
    if any(secret_name(k) and not redacted(v) for k, v in _QUERY.findall(text)):
        return True
    assigned = _ASSIGNED.match(text.strip())
    return assigned is not None and secret_name(assigned.group(1)) and not redacted(assigned.group(2))


def credential_paths(document: Any) -> list[str]:
    """JSON paths of credentials in a parsed document, however deeply nested: a string under a
    secret key (in nested objects and header maps), the item after a secret flag in an
    argument list (`--api-key VALUE`), and any string holding one (secret_in_text)."""
    found: list[str] = []
    stack: list[tuple[Any, str, bool]] = [(document, "$", False)]  # node, its path, named secret
    while stack:
        node, path, named = stack.pop()
        if isinstance(node, str):
            if (named and not redacted(node)) or secret_in_text(node):
                found.append(path)
        elif isinstance(node, dict):
            stack += [(value, f"{path}.{key}", named or secret_name(str(key))) for key, value in node.items()]
        elif isinstance(node, list):
            for i, value in enumerate(node):
                flag = node[i - 1] if i > 0 else None
                after_flag = isinstance(flag, str) and flag.startswith("-") and secret_name(flag)
                stack.append((value, f"{path}[{i}]", named or after_flag))
    return sorted(found)


def refuse_credentials(name: str, document: Any) -> None:
    """An input holding a credential is refused: its original is published under raw/."""
    found = list(credential_paths(document))
    if found:
        message = (
            "holds a credential; the original file is published under raw/, so remove or redact it "
            '(e.g. "***") and import again'
        )
        raise BenchledgerError([Problem(file=name, field=where, message=message) for where in found])
