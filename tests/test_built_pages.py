"""Small things a reader sees on built pages: excluded trials struck through (<del>, not a
literal ~~8.895~~), in this repository's publication, a scaffolded one and one whose
mkdocs.yml never asked for the extension."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import measured_run, publication, write_tree

ROOT = Path(__file__).parents[1]
RUN = "2026-09-01-measured"


@pytest.mark.parametrize("config", ["mkdocs.yml", "generator/authoring/new_publication/mkdocs.yml"])
def test_the_strikethrough_extension_is_enabled_without_subscripts(config: Path) -> None:
    extensions = yaml.safe_load((ROOT / config).read_text())["markdown_extensions"]
    assert {"pymdownx.tilde": {"subscript": False}} in extensions


def test_excluded_trials_are_struck_through_even_when_mkdocs_yml_does_not_ask(tmp_path: Path) -> None:
    run = measured_run(RUN, excluded=[{"trial": 2, "reason": "thermal throttle"}])
    files = publication(run, extra={"site_src/notes.md": "# Notes\n\nAbout ~5% to ~6% faster.\n"})
    root = write_tree(tmp_path / "pub", files)  # helpers' mkdocs.yml lists no markdown extension
    result = CliRunner().invoke(app, ["build", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    page = (root / "site" / "runs" / RUN / "index.html").read_text()
    assert "<del>30.8</del> (excluded: thermal throttle)" in page
    assert "~~" not in page
    notes = (root / "site" / "notes" / "index.html").read_text()
    assert "<p>About ~5% to ~6% faster.</p>" in notes  # a lone tilde stays a tilde, no subscript


def test_the_glance_marker_counts_only_on_its_own_line_outside_code() -> None:
    from generator.render.glance import MARKER, marker_line, place

    assert marker_line(f"# Home\n\n{MARKER}\n") == 2
    assert marker_line(f"Put `{MARKER}` on its own line.\n") is None  # inline code, with text around it
    assert marker_line(f"```markdown\n{MARKER}\n```\n\n~~~\n{MARKER}\n~~~\n") is None  # fenced examples
    assert marker_line(f"````\n```\n{MARKER}\n````\n{MARKER}\n") == 4  # a longer fence closes only with its own
    assert marker_line(f"    {MARKER}\n") is None  # an indented code block
    assert place(f"a\n{MARKER}\nb", 1, "PANEL") == "a\nPANEL\nb"


def test_a_blank_line_in_a_code_block_of_run_notes_survives_the_page() -> None:
    """Run notes become one HTML block Markdown passes through whole (no blank line in it); a blank
    line inside their code stays a blank line for the reader."""
    import html
    import re

    import markdown

    from generator.render.text import notes

    rendered = notes("Setup:\n\n```\nline1\n\nline2\n\n\nline3\n```\n\nDone.\n")
    page = markdown.markdown(f"# Run\n\n{rendered}\n\nAfter.\n", extensions=["md_in_html", "tables"])
    [code] = re.findall(r"<pre><code>(.*?)</code></pre>", page, flags=re.DOTALL)
    assert html.unescape(code) == "line1\n\nline2\n\n\nline3\n"
    assert "<p>Done.</p>" in page and "<p>After.</p>" in page
