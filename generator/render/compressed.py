"""Files a cache keeps for reuse, compressed while kept: at 10,000 runs the History pages and
charts (40 MB of JSON and Markdown) were held as they are to the end of every build, to be
written again only when nothing they show changed. zlib at level 1 keeps them in about a tenth."""

from __future__ import annotations

import zlib
from collections.abc import Mapping

Compressed = dict[str, bytes]  # path -> its bytes, zlib-compressed


def compressed(files: Mapping[str, bytes]) -> Compressed:
    return {path: zlib.compress(data, 1) for path, data in files.items()}


def decompressed(files: Compressed) -> dict[str, bytes]:
    return {path: zlib.decompress(data) for path, data in files.items()}
