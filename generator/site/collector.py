"""The garbage collector around benchledger's own work.

Reading, judging and rendering 1,000 runs allocates millions of small objects that live until
the build ends (the ledger, its summaries, the pages). With the default threshold, a young
collection runs every 700 allocations and every hundredth of them walks every live object: at
1,000 runs, a tenth of generation's time. Almost none of it is garbage in a cycle, so while
benchledger works the young threshold is raised; MkDocs' own build runs with the user's.
What lives for the whole build is frozen (`gc.freeze`) instead: `build` freezes what `check`
read (`cli.publish._check`), the plugin what it generated (`on_config`), and both are thawed
when the plugin's crawl and cache are done (`on_post_build`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

RELAXED = 50_000  # young objects between collections while benchledger works (default 700)


@contextlib.contextmanager
def relaxed() -> Iterator[None]:
    """Collections every RELAXED allocations inside the block; the thresholds as they were after
    it. A collector the user turned off (threshold 0) stays off."""
    before = gc.get_threshold()
    if before[0]:
        gc.set_threshold(max(before[0], RELAXED), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The garbage collector off inside the block (a cache being unpickled: its objects are all
    alive, and collections walking them as they are made cost a third of the load)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
