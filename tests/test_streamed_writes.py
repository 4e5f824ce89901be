"""A generation of many runs writes their files a batch of runs at a time (`pipeline.RUNS_AT_ONCE`),
so a 10,000-run build never holds every run's files at once; what it writes is byte for byte what
one batch writes, and the list of generated files names each batch before it is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import copy_example
from generator.analysis.comparison import Settings
from generator.site import files, pipeline
from generator.site.cache import BuildCache
from generator.site.pipeline import generate_site


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_runs_written_in_batches_equal_runs_written_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, batched = copy_example(tmp_path / "whole"), copy_example(tmp_path / "batched")
    once = generate_site(whole, whole / "site_src", Settings(), BuildCache(), save=False)
    batches: list[int] = []
    real = files.Writer.add

    def add(self: files.Writer, outputs: dict[str, bytes], **kw: object) -> None:
        batches.append(sum(1 for rel in outputs if rel.startswith("runs/") and rel.endswith("/index.md")))
        listed = (
            set(json.loads((self.docs / files.LIST_FILE).read_text()))
            if (self.docs / files.LIST_FILE).exists()
            else set()
        )
        assert not set(self.current) - listed  # every earlier batch listed before this one is written
        real(self, outputs, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(files.Writer, "add", add)
    monkeypatch.setattr(pipeline, "RUNS_AT_ONCE", 5)
    streamed = generate_site(batched, batched / "site_src", Settings(), BuildCache(), save=False)
    runs = len(once.ledger.runs)
    assert runs == 18 and batches == [1, 5, 5, 5, 3]  # the other files first (the runs index), then the runs
    assert _tree(batched / "site_src") == _tree(whole / "site_src")
    assert streamed.summary() == once.summary()
    assert len(streamed.written.written) == len(once.written.written) and streamed.written.removed == []


def test_a_later_batch_that_meets_a_person_s_file_stops_and_leaves_only_listed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.errors import BenchledgerError

    root = copy_example(tmp_path / "pub")
    last = sorted(p.name for p in (root / "runs").iterdir())[-1]
    mine = root / "site_src" / "runs" / last / "index.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# My own page\n")
    docs = root / "site_src"
    before = {p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file()}
    monkeypatch.setattr(pipeline, "RUNS_AT_ONCE", 5)
    with pytest.raises(BenchledgerError) as raised:
        generate_site(root, root / "site_src", Settings(), BuildCache(), save=False)
    assert f"site_src/runs/{last}/index.md" in str(raised.value) and mine.read_text() == "# My own page\n"
    listed = set(json.loads((root / "site_src" / files.LIST_FILE).read_text()))
    written = {p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file()} - before
    assert len(written) > 50 and written - listed == {files.LIST_FILE}  # earlier batches written, all listed
    mine.unlink()
    again = generate_site(root, root / "site_src", Settings(), BuildCache(), save=False)
    assert again.written.removed == [] and (root / "site_src" / "runs" / last / "index.md").is_file()


def test_a_person_s_file_among_the_other_files_stops_it_before_any_run_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.errors import BenchledgerError

    root = copy_example(tmp_path / "pub")
    (root / "site_src" / "methods.md").write_text("# My methods\n")
    monkeypatch.setattr(pipeline, "RUNS_AT_ONCE", 5)
    with pytest.raises(BenchledgerError, match=r"site_src/methods\.md"):
        generate_site(root, root / "site_src", Settings(), BuildCache(), save=False)
    assert not (root / "site_src" / "runs").exists()  # no run's file was written
