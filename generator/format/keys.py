"""Dotted keys: how nested manifests and setups are compared, and KEY=VALUE options."""

from __future__ import annotations

from typing import Any

import yaml


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings and lists as dotted keys: {'a': {'b': [1]}} -> {'a.b.0': 1}.

    An empty mapping or list is kept as its own value so it is not lost.
    """
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}.{i}" if prefix else str(i)))
        return out
    return {prefix: value}


def as_yaml(value: Any) -> str:
    """A flattened value as the publisher would write it in YAML: null, true, false, 8, text
    (never Python's None, True, False)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


MAX_INT_DIGITS = 4300  # Python's limit for writing an integer in decimal (sys.int_info)


def parse_assignment(item: str) -> tuple[str, object] | None:
    """'concurrency=8' -> ('concurrency', 8): the value read as a YAML scalar (a number, a
    boolean, else the text as written). A whole number of more than MAX_INT_DIGITS decimal
    digits (0x followed by 5,000 digits) is kept as the text as written: no file could record
    it as a number. None when the item is not KEY=VALUE."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        return None
    text = value.strip()
    try:
        parsed = yaml.safe_load(text) if text else ""
    except (yaml.YAMLError, ValueError):  # ValueError: 2026-02-30, an integer of thousands of digits
        parsed = text
    if isinstance(parsed, int) and not isinstance(parsed, bool) and abs(parsed) >= 10**MAX_INT_DIGITS:
        parsed = text
    return key.strip(), parsed if isinstance(parsed, str | int | float | bool) else text
