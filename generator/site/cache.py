"""The build cache: what one build can reuse from the last, owned by whoever builds
(the MkDocs plugin instance, which `serve` keeps across rebuilds).

Every entry belongs to a run folder or a generated file that exists now: `prune()`
drops the rest after each build, so the cache never holds more than one copy of
the current publication. Deleting it (a new `BuildCache()`) only costs time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.receipts import RunReceipts
from ..errors import Problem
from ..ledger.records import Run
from ..ledger.runs import Signature
from ..render.outputs import run_outputs

RenderKey = tuple[str, RunReceipts | None, float]  # run digest, receipt state, confidence
Stamp = tuple[int, int, int, int]  # id of the bytes written, size, mtime_ns, inode


@dataclass
class BuildCache:
    parsed: dict[Path, tuple[Signature, Run | None, list[Problem]]] = field(default_factory=dict)
    rendered: dict[str, tuple[RenderKey, dict[str, bytes]]] = field(default_factory=dict)
    written: dict[Path, Stamp] = field(default_factory=dict)

    def run_outputs(self, run: Run, receipts: RunReceipts | None, confidence: float) -> dict[str, bytes]:
        """The run's rendered files, reused while its bytes, receipts and confidence are unchanged."""
        key = (run.digest, receipts, confidence)
        cached = self.rendered.get(run.id)
        if cached is not None and cached[0] == key:
            return cached[1]
        out = run_outputs(run, receipts, confidence)
        self.rendered[run.id] = (key, out)
        return out

    def prune(self, run_ids: set[str]) -> None:
        """Forget runs that are not part of the publication any more (the writer forgets
        the files it no longer writes)."""
        for gone in set(self.rendered) - run_ids:
            del self.rendered[gone]
