"""The build cache's stamps of generated files, each held as 64 packed bytes.

A stamp (`site.files.Stamp`: the sha256 of the bytes written, size, mtime_ns, ctime_ns, inode)
as a tuple of a bytes object and four integers takes about 280 bytes; at 10,000 runs the cache
holds 144,000 of them, to the end of the build. Packed, one bytes object of 64 bytes each (97
with its header): 26 MB less at the peak of that build. A stamp that does not pack (a digest
of another length, a number beyond 64 bits) is held as it is.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, MutableMapping

from .files import Stamp

_PACKED = struct.Struct("<32sQqqQ")


def pack(value: Stamp) -> bytes | Stamp:
    sha, size, mtime, ctime, inode = value
    if len(sha) != 32:
        return value
    try:
        return _PACKED.pack(sha, size, mtime, ctime, inode)
    except struct.error:  # a number beyond 64 bits
        return value


def unpack(held: bytes | Stamp) -> Stamp:
    if isinstance(held, tuple):
        return held
    sha, size, mtime, ctime, inode = _PACKED.unpack(held)
    return (sha, size, mtime, ctime, inode)


class PackedStamps(MutableMapping[str, Stamp]):
    """Docs-relative path -> stamp, each stamp packed; `packed` is what the build cache saves."""

    def __init__(self, packed: dict[str, bytes | Stamp] | None = None) -> None:
        self.packed: dict[str, bytes | Stamp] = packed if packed is not None else {}

    def __getitem__(self, key: str) -> Stamp:
        return unpack(self.packed[key])

    def __setitem__(self, key: str, value: Stamp) -> None:
        self.packed[key] = pack(value)

    def __delitem__(self, key: str) -> None:
        del self.packed[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.packed)

    def __len__(self) -> int:
        return len(self.packed)

    def __contains__(self, key: object) -> bool:
        return key in self.packed

    def __repr__(self) -> str:
        return f"PackedStamps({len(self.packed)} stamps)"
