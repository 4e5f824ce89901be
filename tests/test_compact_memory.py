"""What a 10,000-run build holds to its end is held compactly, and means exactly what it meant
(bench/build_scale.py measures the memory; here, that nothing changes meaning): linked files'
paths and URLs as MkDocs works them out, packed stamps as the tuples they stand for, interned
strings equal to the originals, rows sharing what repeats."""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.structure.files import File, Files

from generator.forked import interned
from generator.ledger.load import load
from generator.ledger.tables import NONE_BELOW
from generator.site.linked import LinkedFile, link_generated
from generator.site.packed_stamps import PackedStamps
from helpers import measured_run, publication, write_tree


@pytest.mark.parametrize("directory_urls", [True, False])
def test_a_linked_file_has_the_paths_and_url_mkdocs_gives_it_and_keeps_none_of_them(
    tmp_path: Path, directory_urls: bool
) -> None:
    names = ["runs/a b/charts/x.json", "runs/r/files/results.csv", "claims/c/charts/ü.json", "notes/own.png"]
    docs, site = str(tmp_path / "docs"), str(tmp_path / "site")
    plain = [File(name, docs, site, directory_urls) for name in names]
    files = Files([File(name, docs, site, directory_urls) for name in names])
    link_generated(files)
    kinds = [type(f) for f in files]
    assert kinds == [LinkedFile, LinkedFile, LinkedFile, File]  # the publisher's own file: MkDocs copies it
    for mine, theirs in zip(files, plain, strict=True):
        assert (mine.url, mine.abs_src_path, mine.abs_dest_path) == (
            theirs.url,
            theirs.abs_src_path,
            theirs.abs_dest_path,
        )
    linked = next(iter(files))
    assert not {"url", "abs_src_path", "abs_dest_path"} & set(vars(linked))
    assert linked.url == "runs/a%20b/charts/x.json"
    linked.abs_dest_path = "/elsewhere/x.json"  # set by another plugin: kept, as MkDocs keeps it
    assert linked.abs_dest_path == "/elsewhere/x.json"


def test_packed_stamps_read_back_as_the_stamps_written() -> None:
    stamps = PackedStamps()
    stamps["a"] = (b"\x01" * 32, 12, -5, 1_733_000_000_123_456_789, 2**40)
    stamps["b"] = (b"short", 1, 2, 3, 4)  # not a sha256: held as it is
    stamps["c"] = (b"\x02" * 32, 2**64, 0, 0, 0)  # beyond 64 bits: held as it is
    assert dict(stamps) == {
        "a": (b"\x01" * 32, 12, -5, 1_733_000_000_123_456_789, 2**40),
        "b": (b"short", 1, 2, 3, 4),
        "c": (b"\x02" * 32, 2**64, 0, 0, 0),
    }
    assert isinstance(stamps.packed["a"], bytes) and len(stamps.packed["a"]) == 64
    assert stamps.get("missing") is None and "a" in stamps and len(stamps) == 3
    del stamps["a"]
    assert list(stamps) == ["b", "c"]


def test_interned_strings_equal_the_originals_and_are_one_object() -> None:
    first = {"links": ["../x/", "../y/"], "ids": frozenset({"top"}), "toc": [{"id": "top", "children": []}]}
    second = {"links": ["".join(["../", "x/"])], "ids": {"".join(["t", "op"])}, "toc": (("top", 1),)}
    a, b = interned(first), interned(second)
    assert a == first and b == second
    assert a["links"][0] is b["links"][0]
    assert next(iter(a["ids"])) is next(iter(b["ids"])) is a["toc"][0]["id"]
    assert type(b["toc"]) is tuple and type(b["ids"]) is set and type(a["ids"]) is frozenset


def test_rows_of_one_condition_share_its_tuple_and_rows_without_bounds_one_empty_set(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", publication(measured_run()))
    (run,) = load(root).runs.values()
    by_at: dict[tuple[str, ...], set[int]] = {}
    for row in run.results.rows:
        by_at.setdefault(row.at, set()).add(id(row.at))
        assert row.sd_below is NONE_BELOW
    assert len(by_at) == 2 and all(len(ids) == 1 for ids in by_at.values())
    assert len(run.results.rows) > len(by_at)
