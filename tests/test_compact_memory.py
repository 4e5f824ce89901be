"""What a 10,000-run build holds to its end is held compactly, and means exactly what it meant
(bench/build_scale.py measures the memory; here, that nothing changes meaning): linked files'
paths and URLs as MkDocs works them out, packed stamps as the tuples they stand for, interned
strings equal to the originals, rows sharing what repeats."""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import NamedTuple

import pytest
from markupsafe import Markup
from mkdocs.structure.files import File, Files
from typer.testing import CliRunner

from builders import copy_example
from generator.cli import app
from generator.forked import interned
from generator.ledger.load import load
from generator.ledger.tables import NONE_BELOW
from generator.site.linked import LinkedFile, link_generated
from generator.site.packed_stamps import PackedStamps
from helpers import measured_run, publication, write_tree


class Pair(NamedTuple):
    first: str
    second: str


@pytest.mark.parametrize("directory_urls", [True, False])
def test_a_linked_file_has_the_paths_and_url_mkdocs_gives_it_and_keeps_none_of_them(
    tmp_path: Path, directory_urls: bool
) -> None:
    names = ["runs/a b/charts/x.json", "runs/r/files/results.csv", "claims/c/charts/ü.json", "notes/own.png"]
    docs, site = str(tmp_path / "docs"), str(tmp_path / "site")
    plain = [File(name, docs, site, directory_urls) for name in names]
    files = Files([File(name, docs, site, directory_urls) for name in names])
    asked = [(f.name, f.url, f.abs_src_path, f.abs_dest_path) for f in files]  # cached, as MkDocs caches them
    assert all(set(vars(f)) >= {"name", "url", "abs_src_path", "abs_dest_path"} for f in files)
    link_generated(files)
    kinds = [type(f) for f in files]
    assert kinds == [LinkedFile, LinkedFile, LinkedFile, File]  # the publisher's own file: MkDocs copies it
    assert [(f.name, f.url, f.abs_src_path, f.abs_dest_path) for f in files] == asked
    for mine, theirs in zip(files, plain, strict=True):
        assert (mine.name, mine.url, mine.abs_src_path, mine.abs_dest_path) == (
            theirs.name,
            theirs.url,
            theirs.abs_src_path,
            theirs.abs_dest_path,
        )
    linked = next(iter(files))
    assert not {"name", "url", "abs_src_path", "abs_dest_path"} & set(vars(linked))
    assert linked.url == "runs/a%20b/charts/x.json"
    linked.abs_dest_path = "/elsewhere/x.json"  # set by another plugin: kept, as MkDocs keeps it
    assert linked.abs_dest_path == "/elsewhere/x.json"
    del linked.abs_dest_path  # how a plugin makes MkDocs work it out again
    assert linked.abs_dest_path == plain[0].abs_dest_path


def test_paths_another_plugin_set_before_benchledgers_files_are_kept(tmp_path: Path) -> None:
    docs, site = str(tmp_path / "docs"), str(tmp_path / "site")
    moved, asked = File("runs/r/charts/x.json", docs, site, True), File("runs/r/charts/y.json", docs, site, True)
    moved.url, moved.abs_dest_path, moved.abs_src_path = "", f"{site}/elsewhere/x.json", None
    asked_for = (asked.url, asked.abs_dest_path)  # read, as MkDocs caches them: the same worked out again
    link_generated(Files([moved, asked]))
    assert type(moved) is LinkedFile and (moved.url, moved.abs_dest_path, moved.abs_src_path) == (
        "",
        f"{site}/elsewhere/x.json",
        None,
    )
    assert (asked.url, asked.abs_dest_path) == asked_for and not {"url", "abs_dest_path"} & set(vars(asked))


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
    kept = [Markup("<b>x</b>"), Pair("a", "b"), OrderedDict(a=1)]  # not the exact types: left as they are
    assert all(x is y for x, y in zip(interned(kept), kept, strict=True))


def test_rows_of_one_condition_share_its_tuple_and_rows_without_bounds_one_empty_set(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", publication(measured_run()))
    (run,) = load(root).runs.values()
    by_at: dict[tuple[str, ...], set[int]] = {}
    for row in run.results.rows:
        by_at.setdefault(row.at, set()).add(id(row.at))
        assert row.sd_below is NONE_BELOW
    assert len(by_at) == 2 and all(len(ids) == 1 for ids in by_at.values())
    assert len(run.results.rows) > len(by_at)


def _example_with(tmp_path: Path, theme: str, extra: str = "") -> Path:
    """The example publication with its Material theme block replaced by `theme`, and `extra` settings."""
    root = copy_example(tmp_path / "pub")
    lines = (root / "mkdocs.yml").read_text().splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("theme:"))
    end = next(k for k in range(start + 1, len(lines)) if lines[k] and not lines[k].startswith(" "))
    lines[start:end] = [theme, *extra.splitlines()]
    (root / "mkdocs.yml").write_text("\n".join(lines) + "\n")
    return root


def _build(root: Path) -> None:
    result = CliRunner().invoke(app, ["build", "--repo", str(root)])
    assert result.exit_code == 0, result.output


def test_a_theme_that_draws_every_pages_toc_on_each_page_draws_them_whole_on_every_page(tmp_path: Path) -> None:
    """readthedocs with collapse_navigation: false puts each nav page's headings in every page's
    nav; generated pages' tables of contents are let go only once every page is themed."""
    root = _example_with(tmp_path, "theme: {name: readthedocs, collapse_navigation: false}")
    _build(root)
    site = root / "site"
    headings = re.compile(r'<li class="toctree-l2"><a class="reference internal" href="[./]*methods/#([^"]+)"')
    shown = {p.relative_to(site).as_posix(): headings.findall(p.read_text()) for p in site.rglob("*.html")}
    methods = shown.pop("methods/index.html")
    assert len(methods) == 0 and "404.html" in shown  # its own page links them as "#..."
    assert shown["index.html"][:3] == ["parameters-in-force", "the-unit-of-replication", "per-run-statistics"]
    assert {name: shown[name] for name in shown if name != "404.html"} == {
        name: shown["index.html"] for name in shown if name != "404.html"
    }
    assert any(name.startswith("runs/") for name in shown)  # built after methods/: drawn whole too


def test_a_hook_may_add_to_a_generated_pages_anchors(tmp_path: Path) -> None:
    """With a plugin or hook benchledger does not know, a generated page's anchors are a set it
    may add to, as MkDocs gives it."""
    root = _example_with(tmp_path, "theme: {name: material, font: false}", "hooks: [alias_hook.py]")
    (root / "alias_hook.py").write_text(
        "def on_page_content(html, page, config, files):\n"
        "    page.present_anchor_ids.add('legacy-alias')\n"
        "    return html\n"
    )
    _build(root)
    assert (root / "site" / "claims" / "index.html").is_file()


def test_history_files_kept_for_reuse_are_compressed_and_come_back_byte_for_byte(tmp_path: Path) -> None:
    from generator.analysis.comparison import Settings
    from generator.site.cache import BuildCache
    from generator.site.pipeline import generate_site

    root = copy_example(tmp_path / "pub")
    cache = BuildCache()
    generate_site(root, root / "site_src", Settings(), cache)
    key, held = cache.history["pages"]
    kept = held.files
    written = {rel: (root / "site_src" / rel).read_bytes() for rel in kept}
    assert {"history/index.md", "history/changes.md", "ledger/history.json"} <= set(kept)
    assert sum(map(len, kept.values())) < sum(map(len, written.values())) / 4
    assert held.compressed and held.unpacked() == written
    for rel in written:
        (root / "site_src" / rel).unlink()
    generate_site(root, root / "site_src", Settings(), cache)  # reused, not rendered: the same bytes again
    assert cache.history["pages"][0] == key
    assert {rel: (root / "site_src" / rel).read_bytes() for rel in kept} == written
    serving = BuildCache(serving=True)  # serve keeps them as they are: no zlib in each rebuild
    generate_site(root, root / "site_src", Settings(), serving)
    assert not serving.history["pages"][1].compressed and serving.history["pages"][1].files == written
