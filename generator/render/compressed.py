"""Files a cache keeps for reuse, compressed while kept: at 10,000 runs the History pages and
charts (40 MB of JSON and Markdown) were held as they are to the end of every build, to be
written again only when nothing they show changed. zlib at level 1 keeps them in about a
quarter or less. `serve` keeps them as they are: compressing and expanding 5 MB at 1,000 runs
costs 35 ms of each rebuild, and a `serve` session's memory was never the concern."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class KeptFiles:
    """Path -> bytes, zlib-compressed when `compressed`."""

    files: dict[str, bytes]
    compressed: bool

    @classmethod
    def of(cls, files: Mapping[str, bytes], *, compress: bool) -> KeptFiles:
        if not compress:
            return cls(dict(files), False)
        return cls({path: zlib.compress(data, 1) for path, data in files.items()}, True)

    def unpacked(self) -> dict[str, bytes]:
        if not self.compressed:
            return dict(self.files)
        return {path: zlib.decompress(data) for path, data in self.files.items()}
