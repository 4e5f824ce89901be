"""Generated pages skip MkDocs' per-page Markdown: the plugin converts them itself
(`site.page_html`), and what it makes must be what a plain conversion makes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from generator.cli import app
from generator.render.templating import GENERATED_PREFIX
from generator.site.page_html import PageConverter, raw_blocks

RUN = "2026-09-01-measured"  # the `repo` fixture's run


def test_every_generated_page_of_the_example_converts_as_plain_mkdocs_does(tmp_path: Path) -> None:
    """HTML, table of contents and anchors of each generated page, against MkDocs' own render of
    the same Markdown with the same extensions (links rewritten, headings with permalinks)."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.pages import Page

    from builders import copy_example

    root = copy_example(tmp_path / "pub")
    result = CliRunner().invoke(app, ["generate", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    config = load_config(str(root / "mkdocs.yml"))
    files = get_files(config)
    converter = PageConverter(config, files)
    compared = 0
    for file in files.documentation_pages():
        page = Page(None, file, config)
        page.read_source(config)
        assert page.markdown is not None
        if not page.markdown.startswith(GENERATED_PREFIX):
            continue
        page.render(config, files)
        ours = converter.convert(page.markdown, page, config, files)
        assert converter.html(ours.html) == page.content, file.src_uri
        assert str(ours.toc) == str(page.toc), file.src_uri
        assert ours.anchors == page.present_anchor_ids, file.src_uri
        compared += 1
    assert compared > 30


def _stashed(text: str) -> tuple[list[str], list[str]]:
    kept: list[str] = []

    def store(block: str) -> str:
        kept.append(block)
        return f"@{len(kept)}"

    return raw_blocks(text.split("\n"), lambda tag: tag in ("div", "table", "p", "details"), store), kept


def test_a_whole_raw_block_between_blank_lines_is_put_aside_unparsed() -> None:
    lines, kept = _stashed("# T\n\n<table>\n<tr><td>a</td></tr>\n</table>\n\ntext\n")
    assert kept == ["<table>\n<tr><td>a</td></tr>\n</table>\n"]
    assert lines == ["# T", "", "@1", "", "", "text", ""]


def test_blocks_that_follow_each_other_line_by_line_are_each_put_aside() -> None:
    lines, kept = _stashed('\n<div markdown="0">\n<div>a</div>\n</div>\n<p class="note">b</p>\n\n## H\n')
    assert kept == ['<div markdown="0">\n<div>a</div>\n</div>', '<p class="note">b</p>\n']
    assert lines == ["", "@1", "", "@2", "", "", "## H", ""]


@pytest.mark.parametrize(
    "text",
    [
        "<div>\na\n</div>\nfollowed at once\n",  # no blank line after it
        "para\n<div>a</div>\n\n",  # no blank line before it
        '<div markdown="1">\n*a*\n</div>\n',  # Markdown inside: md_in_html's
        "<div>\n\n</div>\n",  # a blank line inside
        "<div><!-- </div> -->\n</div>\n",  # a comment's tags are not counted
        "<div>\n<div>\n</div>\n",  # never closed
        "```\n\n<div>a</div>\n\n```\n",  # inside a fence
        "<span>a</span>\n",  # not block-level
        "<div>a</div> tail\n",  # text after the close
        '<div data-a="1" MarKdown = "block">\na\n</div>\n',  # the attribute in any case, spaced
        "<div>\n<div markdown=1>a</div>\n</div>\n",  # on an inner element, on a later line
        "<div>a</div>\n<\u017fcript>x</script>\n",  # ſ: a regex that ignores case reads it as s
        "<div markdown=0\n>x</div>\n",  # a 0 that ends its line is no markdown="0": Markdown's
        "<div markdown='0\n'>x</div>\n",
    ],
)
def test_what_cannot_be_proved_a_whole_block_is_left_to_markdown(text: str) -> None:
    assert _stashed(text)[1] == []


def test_markdown_as_part_of_another_word_or_set_to_0_is_no_markdown_attribute() -> None:
    text = '<div data-xmarkdown="1" markdown="0">\n<p>a</p>\n</div>\n'
    assert _stashed(text)[1] == [text]


def test_chart_specs_and_downloads_reach_the_site_without_a_second_copy(repo: Path) -> None:
    """Linked from the file benchledger wrote into docs_dir (one copy on disk), same bytes."""
    result = CliRunner().invoke(app, ["build", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    specs = sorted((repo / "site_src" / "runs").glob("*/charts/*.json"))
    downloads = sorted((repo / "site_src" / "runs").glob("*/files/*"))
    assert specs and downloads
    for source in specs + downloads:
        built = repo / "site" / source.relative_to(repo / "site_src")
        assert built.read_bytes() == source.read_bytes()
        assert os.path.samefile(built, source), built
    page = repo / "site" / "index.html"
    assert os.stat(page).st_nlink == 1  # pages are MkDocs' own files


def _site(root: Path) -> dict[str, str]:
    folder = root / "site"
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_build_after_one_change_is_byte_identical_to_a_build_from_scratch(tmp_path: Path) -> None:
    """The second build reuses the pages the cache remembers (HTML, search entries, run pages)
    and renders the changed run again; a build of the changed publication with no cache agrees."""
    from helpers import RESULTS, measured_run, publication, write_tree

    runs = [measured_run(run_id) for run_id in ("2026-09-01-a", "2026-09-01-b", "2026-09-01-c")]
    changed = RESULTS.replace("104.1", "94.1")
    first = write_tree(tmp_path / "cached", publication(*runs))
    assert CliRunner().invoke(app, ["build", "--repo", str(first)]).exit_code == 0
    (first / "runs" / "2026-09-01-b" / "results.csv").write_text(changed)
    again = CliRunner().invoke(app, ["build", "--repo", str(first)])
    assert again.exit_code == 0, again.output
    assert "1 of 3 runs rendered" in again.output
    runs[1]["runs/2026-09-01-b/results.csv"] = changed
    fresh = write_tree(tmp_path / "fresh", publication(*runs))
    scratch = CliRunner().invoke(app, ["build", "--no-cache", "--repo", str(fresh)])
    assert scratch.exit_code == 0, scratch.output
    assert _site(first) == _site(fresh)
    assert "94.1" in (first / "site" / "runs" / "2026-09-01-b" / "index.html").read_text()


def test_run_pages_stay_cached_when_the_site_and_its_links_are_removed(repo: Path) -> None:
    """Removing the built site (or a plain MkDocs build emptying it) removes the links to the
    chart specs, which changes their change time: the cache reads them back and keeps them."""
    import shutil

    for _ in range(2):
        result = CliRunner().invoke(app, ["build", "--repo", str(repo)])
        assert result.exit_code == 0, result.output
        shutil.rmtree(repo / "site")
    again = CliRunner().invoke(app, ["build", "--repo", str(repo)])
    assert again.exit_code == 0, again.output
    assert "0 of 1 runs rendered" in again.output


def test_a_page_added_to_the_nav_reaches_every_generated_page_built_before(repo: Path) -> None:
    """The theme's output of a generated page is reused only while the nav (and the rest of its
    key) is unchanged: a new nav entry is drawn on the run pages built before it."""
    assert CliRunner().invoke(app, ["build", "--repo", str(repo)]).exit_code == 0
    page = repo / "site" / "runs" / RUN / "index.html"
    assert "Added later" not in page.read_text()
    (repo / "site_src" / "later.md").write_text("# Added later\n")
    mkdocs = repo / "mkdocs.yml"
    mkdocs.write_text(mkdocs.read_text() + "  - Added later: later.md\n")
    assert CliRunner().invoke(app, ["build", "--repo", str(repo)]).exit_code == 0
    assert "Added later" in page.read_text()
