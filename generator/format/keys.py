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


def parse_assignment(item: str) -> tuple[str, object] | None:
    """'concurrency=8' -> ('concurrency', 8): the value read as a YAML scalar (a number, a
    boolean, else the text as written). None when the item is not KEY=VALUE."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        return None
    text = value.strip()
    try:
        parsed = yaml.safe_load(text) if text else ""
    except (yaml.YAMLError, ValueError):  # ValueError: 2026-02-30, an integer of thousands of digits
        parsed = text
    return key.strip(), parsed if isinstance(parsed, str | int | float | bool) else text
