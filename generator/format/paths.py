"""Local file-system paths in a run's values: recognised, so an import can reduce them to file
names and `check` can refuse them (FORMAT.md: no path in any file may be absolute)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# A value that is a path on someone's machine: a Windows drive or share, a home folder, or a
# POSIX path under a root that holds local files (an endpoint such as /v1/completions is not one).
LOCAL_PATH = re.compile(
    r"^(?:file://|[A-Za-z]:[\\/]|\\\\[^\\]|~[^\s/\\]*[\\/]|"
    r"/(?:home|Users|mnt|media|var|tmp|opt|data|root|srv|scratch|private|Volumes|models|workspace|nfs|net|"
    r"gpfs|lustre|storage|disk\d*|nvme\d*|ssd\d*|hdd\d*)/)"
    r"|^/\S*/[^/\s]+\.(?:gguf|ggml|bin|safetensors|pt|pth|onnx|json|yaml|yml|csv|txt|jsonl|py)$"
)


# a path with a space in it ("/Users/Ana Smith/m.gguf") ends in a file name; a sentence that only
# starts like a path ("/tmp/ cleanup makes decode 2x faster") does not
NAMED_FILE = re.compile(r"[\\/][^\\/\s][^\\/]*\.[A-Za-z][A-Za-z0-9]{0,11}$")


def is_local_path(value: Any) -> bool:
    """A string that is, as a whole, an absolute path on a local machine."""
    if not isinstance(value, str) or "\n" in value:
        return False
    text = value.strip()
    if not LOCAL_PATH.match(text):
        return False
    return not any(ch.isspace() for ch in text) or bool(NAMED_FILE.search(text))


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
