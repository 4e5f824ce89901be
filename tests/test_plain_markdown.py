"""A generated page whose Markdown is only raw blocks, one-line headings and one-line paragraphs
is written without Markdown's passes (`site.plain_markdown`): the HTML, table of contents,
anchors, links and warnings must be exactly what Markdown gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from generator.cli import app
from generator.render.templating import GENERATED_PREFIX
from generator.site import plain_markdown
from generator.site.page_html import PageConverter

MARK = f"{GENERATED_PREFIX} from runs/: edit that, not this page -->\n\n"  # a generated page's first line


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Path]:
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files

    from builders import copy_example

    root = copy_example(tmp_path_factory.mktemp("plain") / "pub")
    result = CliRunner().invoke(app, ["generate", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    config = load_config(str(root / "mkdocs.yml"))
    return config, get_files(config), root


def _both(converter: PageConverter, text: str, file: Any, config: Any, files: Any) -> tuple[Any, Any, bool]:
    """The page converted by Markdown, and by the plain writer (None when it declined)."""
    converter.plain.on = False
    markdown = converter._convert(text, file, config, files)
    converter.plain.on = True
    plain = converter.plain.convert(text, lambda link: link) is not None
    return markdown, converter._convert(text, file, config, files), plain


def test_every_run_page_of_the_example_is_written_plain_as_markdown_writes_it(
    example: tuple[Any, Any, Path],
) -> None:
    from mkdocs.utils.meta import get_data

    config, files, _ = example
    converter = PageConverter(config, files)
    assert converter.plain.on
    plain, runs = [], []
    for file in files.documentation_pages():
        text = get_data(file.content_string)[0]
        if not text.startswith(GENERATED_PREFIX):
            continue
        markdown, ours, was_plain = _both(converter, text, file, config, files)
        assert ours == markdown, file.src_uri  # the HTML's digest, toc tokens, anchors, links; warned
        assert converter.html(ours[0].html) == converter.html(markdown[0].html)
        plain += [file.src_uri] if was_plain else []
        runs += [file.src_uri] if file.src_uri.startswith("runs/") else []
    assert [name for name in plain if name.startswith("runs/")] == runs
    assert len(runs) == 19  # the runs index and the 18 runs, rates, reruns and receipts included
    assert len(plain) > len(runs)  # claim pages too


_SAFE = [
    "word", "&#40;a&#41;", "[run](../index.md)", "<span>", '"q', "'s", "Run 7", "two  spaces", "s_log", "*", "~",
    "**bold**", "**a&#95;b c**", "`code`", "`a<b & c`", "` `", "[methods](../methods.md)", "[a](#summary)", "[x](missing.md)", "[b](/abs.md)", '<span class="bl-x">in</span>', "&#95;", "&amp;", "&nosuch;",
    ":", "é", "(tok&#47;s)", "http://x.y", '"q"', "'s", "...", "√n", "2", "-",
]  # fmt: skip
_EDGE = [
    "a_b_c", "**", "~~", "_", "``", "`x", "![i](x.png)", "[ref]", "<div>d</div>", "<br>", '<a href="x">a</a>',
    "<!-- c -->", "&", "#", "\\*", "|", "{: .x}", "{", "1.", "2)", "+", ">", "<", "\t", "\u00a0", "\u2028",
    "<http://x.y>", "a@b.c", "!", "*a*", "~~a~~", "_a_", "<span>", "** a**", "**a **", "***a***", "- ", "* ",
]  # fmt: skip


def _line(draw: random.Random) -> str:
    return " ".join(draw.choice(_EDGE if draw.random() < 0.08 else _SAFE) for _ in range(draw.randint(1, 5)))


def _page(draw: random.Random) -> str:
    blocks = [MARK.rstrip("\n")]
    for _ in range(draw.randint(1, 4)):
        kind = draw.randint(0, 8)
        if kind == 0:
            blocks.append("\n".join("#" * draw.randint(1, 7) + " " + _line(draw) for _ in range(draw.randint(1, 2))))
        elif kind == 1:
            blocks.append("## Summary")  # the same id twice
        elif kind == 2:
            blocks.append('<div class="bl-x" markdown="0">\n<p>kept</p>\n</div>')
        elif kind == 3:
            blocks.append(_line(draw) + "\n" + _line(draw))  # never plain: Markdown's
        elif kind in (4, 5):  # a list; two a blank line apart are one loose list
            blocks.append("\n".join("- " + _line(draw) for _ in range(draw.randint(1, 3))))
        else:
            blocks.append(_line(draw))
    return "\n\n".join(blocks) + draw.choice(["", "\n", " \n"])


def test_seeded_random_pages_are_written_plain_only_as_markdown_writes_them(example: tuple[Any, Any, Path]) -> None:
    config, files, _ = example
    converter = PageConverter(config, files)
    file = next(file for file in files.documentation_pages() if file.src_uri.startswith("runs/"))
    draw = random.Random(36)
    plain = 0
    for _ in range(1500):
        text = _page(draw)
        markdown, ours, was_plain = _both(converter, text, file, config, files)
        assert ours == markdown, text
        assert converter.html(ours[0].html) == converter.html(markdown[0].html), text
        plain += was_plain
    assert 150 < plain < 1350  # both ways taken often: the draw tests the grammar's edges


@pytest.mark.parametrize(
    "text",
    [
        f"{MARK}x *a **b****c**\n",  # a run of * pairs a lone * with one of a bold's: <em>
        f"{MARK}x***a****b**\n",
        f"{MARK}- a *b **c****d**\n",
        f"{MARK}x**b***a**b**\n",
        f"{MARK}a*b **x** c **y**_ ~**z**\n",  # Markdown 3.11 writes <strong>~</strong>z**
        f"{MARK}a* **b** c\n",  # any other * _ or ~ beside bold text
        f'{MARK}<div class="x">\n~~~\na\n~~~\n</div>\n',  # fenced code is read before raw blocks
        f"{MARK}<summary />x\n```\n!!! note\n```\n[a](x.md)</summary>\n",
        f"{MARK}<div/x>a</div>\n",  # not block-level to Markdown's postprocessor: kept in a <p>
        f'{MARK}<div\u00a0class="x">a</div>\n',
        "    \n# a\n",  # a first line of spaces is an indented code block
        f"{MARK}a\n\n<!-- c -->\n\nb\n",  # a comment after the first block is kept without a blank line
    ],
)
def test_what_a_review_found_written_otherwise_is_left_to_markdown(example: tuple[Any, Any, Path], text: str) -> None:
    config, files, _ = example
    converter = PageConverter(config, files)
    file = next(file for file in files.documentation_pages() if file.src_uri.startswith("runs/"))
    markdown, ours, plain = _both(converter, text, file, config, files)
    assert not plain
    assert ours == markdown


def test_bold_text_with_no_other_emphasis_mark_is_written_plain(example: tuple[Any, Any, Path]) -> None:
    config, files, _ = example
    converter = PageConverter(config, files)
    file = next(file for file in files.documentation_pages() if file.src_uri.startswith("runs/"))
    text = f"{MARK}- **acceptance** = draft&#95;accepted / **draft** (higher is better)\n"
    markdown, ours, plain = _both(converter, text, file, config, files)
    assert plain
    assert ours == markdown
    assert "<li><strong>acceptance</strong> = draft&#95;accepted / <strong>draft</strong> (higher" in converter.html(
        ours[0].html
    )


@pytest.mark.parametrize(
    ("extension", "settings"),
    [
        ("smarty", {}),
        ("toc", {"permalink": "#"}),
        ("toc", {"toc_depth": 2}),
        ("pymdownx.tilde", {"smart_delete": False}),
    ],
)
def test_other_extensions_or_settings_leave_every_page_to_markdown(
    example: tuple[Any, Any, Path], extension: str, settings: dict[str, Any]
) -> None:
    config, files, _ = example
    config = _with(config, extension, settings)
    converter = PageConverter(config, files)
    assert not converter.plain.on
    page = f'{MARK}# It\'s "quoted"\n\nA [link](../methods.md).\n'
    file = next(file for file in files.documentation_pages() if file.src_uri.startswith("runs/"))
    assert converter.plain.convert(page, lambda link: link) is None
    converted, _ = converter._convert(page, file, config, files)
    if extension == "smarty":
        assert "It&rsquo;s &ldquo;quoted&rdquo;" in converter.html(converted.html)


def _with(config: Any, extension: str, settings: dict[str, Any]) -> Any:
    import copy

    changed = copy.copy(config)
    changed["markdown_extensions"] = [
        *config.markdown_extensions,
        *([] if extension in config.markdown_extensions else [extension]),
    ]
    changed["mdx_configs"] = {**(config.mdx_configs or {}), extension: settings}
    return changed


def test_a_markdown_that_writes_the_canary_otherwise_turns_the_plain_writer_off(
    example: tuple[Any, Any, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Markdown version (here: a permalink with another title) is caught by the canary
    page each build converts both ways, and every page is then Markdown's."""
    from markdown.extensions.toc import TocTreeprocessor

    config, files, _ = example
    monkeypatch.setattr(TocTreeprocessor, "add_permalink", _other_permalink)
    converter = PageConverter(config, files)
    assert not converter.plain.on
    file = next(file for file in files.documentation_pages() if file.src_uri.startswith("runs/"))
    converted, _ = converter._convert(f"{MARK}# Title\n", file, config, files)
    assert 'title="Link here"' in converter.html(converted.html)


def _other_permalink(self: Any, element: Any, anchor: str) -> None:
    import xml.etree.ElementTree as etree

    link = etree.SubElement(element, "a")
    link.text, link.attrib["href"], link.attrib["title"] = "#", "#" + anchor, "Link here"


def test_a_known_setting_is_still_known_in_any_order() -> None:
    extensions = ["md_in_html", "toc", "tables"]
    assert plain_markdown._known(extensions, {"toc": {"permalink": True}})
    assert not plain_markdown._known([*extensions, "footnotes"], {})
    assert not plain_markdown._known(extensions, {"tables": {"use_align_attribute": True}})
