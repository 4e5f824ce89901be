"""The vega-embed bundle (vega, vega-lite and vega-embed in one local script, from
vl-convert), generated once per vl-convert version and cached in the user's cache folder."""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path


def cache_dir() -> Path:
    """The user's cache folder for benchledger."""
    base = os.environ.get("BENCHLEDGER_CACHE") or os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "benchledger" if base else Path.home() / ".cache" / "benchledger"


@functools.cache
def vega_bundle() -> bytes:
    """vega, vega-lite and vega-embed in one local script (vl-convert), cached per version."""
    import vl_convert

    version = getattr(vl_convert, "__version__", "unknown")
    path = cache_dir() / f"vega-embed-{version}.js"
    if path.is_file():
        return path.read_bytes()
    data = vl_convert.javascript_bundle().encode()  # type: ignore[call-arg]
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError:  # a cache folder that cannot be written: the next build makes the bundle again
        with contextlib.suppress(OSError):
            tmp.unlink()
    return data
