"""Local file-system paths in a run's values: recognised, so an import can reduce them to file
names and `check` can refuse them (FORMAT.md: no path in any file may be absolute)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# A value that is a path on someone's machine: a Windows drive or share, a home folder, or a
# POSIX path under a root that holds local files (an endpoint such as /v1/completions is not one).
LOCAL_PATH = re.compile(
    r"^(?:[A-Za-z]:[\\/]|\\\\[^\\]|~[\\/]|/(?:home|Users|mnt|media|var|tmp|opt|data|root|srv|scratch|private|"
    r"Volumes|models|workspace|nfs|net|gpfs|lustre|storage|disk\d*|nvme\d*|ssd\d*|hdd\d*)/)"
    r"|^/\S*/[^/\s]+\.(?:gguf|ggml|bin|safetensors|pt|pth|onnx|json|yaml|yml|csv|txt|jsonl|py)$"
)


def is_local_path(value: Any) -> bool:
    """A string that is, as a whole, an absolute path on a local machine."""
    return isinstance(value, str) and "\n" not in value and bool(LOCAL_PATH.match(value.strip()))


def file_name(value: str) -> str:
    """The last part of a path, whichever separator it uses."""
    return re.split(r"[\\/]", value.strip().rstrip("\\/"))[-1] or value


def local_paths(data: Any, at: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every (location, value) in a nested mapping or list whose value is a local path."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from local_paths(value, (*at, str(key)))
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            yield from local_paths(value, (*at, i))
    elif is_local_path(data):
        yield at, data
