"""A rebuild moves the unchanged linked files of the last build back into the site folder
(generator/site/linked.py: `set_aside`, `restorable`) instead of MkDocs emptying the folder and
linking 13,000 files again. Only the very files it would link come back: a file changed in the
site by hand is replaced, a kept folder left by a build cut short is removed, and the site
equals one built into an empty folder."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from builders import copy_example
from generator.cli import app


def build(root: Path, *extra: str) -> None:
    result = CliRunner().invoke(app, ["build", "--repo", str(root), *extra])
    assert result.exit_code == 0, result.output


def tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_a_rebuild_keeps_unchanged_files_and_replaces_one_changed_in_the_site(tmp_path: Path) -> None:
    root = copy_example(tmp_path / "pub")
    build(root)
    site = root / "site"
    folders = sorted({p.parent for p in (site / "runs").glob("*/charts/*.json")})
    chart, other = sorted(folders[0].glob("*.json"))[0], sorted(folders[1].glob("*.json"))[0]
    source = root / "site_src" / chart.relative_to(site)
    kept_before, changed_before = chart.stat().st_ino, source.stat().st_ctime_ns
    assert kept_before == source.stat().st_ino  # linked, not copied
    other.unlink()
    other.write_text('{"edited": "by hand"}')  # a new file, not the one benchledger linked
    stale = site / ".benchledger-kept" / "runs" / "left-by-a-build-cut-short"
    stale.mkdir(parents=True)
    (stale / "x.json").write_text("{}")

    build(root)

    assert not (site / ".benchledger-kept").exists()
    assert other.read_bytes() == (root / "site_src" / other.relative_to(site)).read_bytes()
    assert other.stat().st_ino == (root / "site_src" / other.relative_to(site)).stat().st_ino
    assert chart.stat().st_ino == kept_before
    assert source.stat().st_ctime_ns == changed_before  # moved back with its folder: never linked again
    build(root, "--site-dir", str(tmp_path / "fresh"))
    assert tree(site) == tree(tmp_path / "fresh")


def test_a_kept_folder_planted_as_a_link_is_removed_and_nothing_moves_through_it(tmp_path: Path) -> None:
    root = copy_example(tmp_path / "pub")
    build(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "site" / ".benchledger-kept").symlink_to(outside, target_is_directory=True)
    build(root)
    assert list(outside.iterdir()) == []  # the site's folders were not set aside into it
    assert not (root / "site" / ".benchledger-kept").exists()
    assert (root / "site" / "runs" / "index.html").is_file()
