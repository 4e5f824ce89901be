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


# -- words that mean what they say (issue 33, item 9) ------------------------------------------

EXAMPLE = ROOT  # this repository's own publication


def _visible_text(page: str) -> str:
    """What a reader reads of a built page: its text, without scripts, styles and code (a code
    block quotes a file format as it is written, such as an allowed_signers line's "principal(s)")."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        hidden = ("script", "style", "template", "pre", "code")

        def __init__(self) -> None:
            super().__init__()
            self.depth, self.parts = 0, []

        def handle_starttag(self, tag: str, _attrs: object) -> None:
            self.depth += tag in self.hidden

        def handle_endtag(self, tag: str) -> None:
            self.depth -= tag in self.hidden

        def handle_data(self, data: str) -> None:
            if not self.depth:
                self.parts.append(data)

    reader = Text()
    reader.feed(page)
    return " ".join(reader.parts)


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from builders import build_example

    return build_example(tmp_path_factory.mktemp("example") / "pub")


def test_no_page_of_the_example_says_null_or_s_or_writes_no_trials_as_a_count(example_site: Path) -> None:
    """Crawled page by page: a missing value reads "not recorded", counts are pluralised ("3 keys",
    never "key(s)"; a unit "(s)" after a space is seconds), and a side without trials is never
    "0 / 0" or "reported / reported"."""
    import re

    pages = sorted(example_site.rglob("*.html"))
    assert len(pages) > 40
    found = []
    for page in pages:
        text = _visible_text(page.read_text())
        for wrong in (r"\bnull\b", r"\w\(s\)", r" 0 / 0\b", r"reported / reported"):
            found += [f"{page.relative_to(example_site)}: {m.group()!r}" for m in re.finditer(wrong, text)]
    assert found == []
    run = _visible_text((example_site / "runs" / "2026-11-30-grid-nodraft-2t" / "index.html").read_text())
    assert "Warmup 1 trial run and discarded before trial 1" in run
    assert "host: 6 keys" in run and "9 files" in run
    assert "draft not recorded" in run  # model.draft: null in the manifest


def _example() -> dict[str, bytes]:
    from helpers import generate

    return generate(EXAMPLE)


@pytest.fixture(scope="module")
def example_pages() -> dict[str, bytes]:
    return _example()


def test_a_side_without_trials_reads_trials_not_reported_in_the_forest_table(example_pages: dict[str, bytes]) -> None:
    page = example_pages["claims/shortlist-c8/index.md"].decode()
    n = '<td data-label="n &#40;baseline &#47; candidate&#41;">'  # the forest table's n column
    assert f"{n}trials not reported</td>" in page
    assert f"{n}0 / 0</td>" not in page


def test_a_decrease_carries_the_minus_sign_and_nothing_claimed_reads_not_stated(
    example_pages: dict[str, bytes],
) -> None:
    ledger = example_pages["claims/index.md"].decode()
    row = next(line for line in ledger.splitlines() if 'href="testbed-drafting-matched/"' in line)
    # the effect, then what is claimed ("-": a bare sign)
    effect = '<td data-label="Effect">−34.7&#37; &#91;−39.2&#37;, −30.0&#37;&#93;</td>'
    assert effect + '<td data-label="Claimed">a decrease</td>' in row
    assert "&#45;34.7" not in row and '<td data-label="Claimed">&#45;</td>' not in row
    overstated = next(line for line in ledger.splitlines() if 'href="testbed-throughput-nmax4-vs-nmax3/"' in line)
    assert '<td data-label="Claimed">−16&#37;</td>' in overstated  # claimed: "-16%"
    unclaimed = next(line for line in ledger.splitlines() if 'href="testbed-spec-vs-nodraft/"' in line)
    claimed = '<td data-label="Claimed">'
    assert f"{claimed}not stated</td>" in unclaimed and f"{claimed}–</td>" not in unclaimed
    card = example_pages["claims/testbed-drafting-matched/index.md"].decode()
    assert "<dt>Claimed</dt><dd>a decrease &#40;direction&#41;</dd>" in card
    assert "<dt>Claimed</dt><dd>not stated &#40;direction&#58; the metric&#39;s better&#41;</dd>" in card
    assert "Supported&#58; the 95&#37; interval of the ratio runs from −39.2&#37; to −30.0&#37;" in card


def test_grid_sentences_name_the_factor_and_its_levels_in_plain_words(example_pages: dict[str, bytes]) -> None:
    grid = example_pages["claims/grid-who-earned-it/index.md"].decode()
    assert (
        "The gain comes from draft&#58; setting it to none instead of noise&#45;0.02 changes "
        "tokens&#95;per&#95;second by &#43;"
    ) in grid
    assert "credited to draft &#40;noise" not in grid and "an even share &#40;" not in grid
    assert "what it would give if the 2 factors that changed shared the gain of &#43;156.1&#37; equally" in grid


def test_flags_are_coloured_by_what_they_mean(example_pages: dict[str, bytes]) -> None:
    from generator.render.verdict_text import flag_kind

    assert [
        flag_kind(f) for f in ("unverified run", "corrected (misattributed)", "stale run", "unmatched conditions")
    ] == [
        "info",
        "corrected",
        "problem",
        "caution",
    ]
    card = example_pages["claims/grid-threads-credit/index.md"].decode()
    assert '<span class="bl-flag bl-flag--info">unverified run</span>' in card
    assert '<span class="bl-flag bl-flag--caution">unmatched conditions</span>' in card
    assert '<span class="bl-flag bl-flag--problem">credit misattributed by the grid' in card
    assert '<span class="bl-flag">' not in card  # every flag says what kind it is
    css = (ROOT / "generator/render/assets/benchledger.css").read_text()
    assert ".bl-flag--corrected { color: #00696f; }" in css


def test_the_page_helpers_write_signs_plurals_and_counts_one_way() -> None:
    from generator.render import text as t

    assert t.minus("-5.1% [-7.7%, -2.4%]; noise-0.02 on 2026-11-30") == "−5.1% [−7.7%, −2.4%]; noise-0.02 on 2026-11-30"
    assert [t.plural(1, "key"), t.plural(3, "key"), t.plural(1200, "trial")] == ["1 key", "3 keys", "1,200 trials"]
    assert [t.n_pair(5, 6), t.n_pair(None, 5), t.n_pair(None, None)] == [
        "5 / 6",
        "not reported / 5",
        "trials not reported",
    ]
    assert [t.claimed(None), t.claimed("-"), t.claimed("+"), t.claimed("-16%")] == [
        "not stated",
        "a decrease",
        "an increase",
        "−16%",
    ]
    assert [t.scalar(None), t.recorded("null"), t.percent(-0.051)] == ["not recorded", "not recorded", "−5.1%"]


def test_diff_prints_trials_not_reported_for_two_reported_runs() -> None:
    a, b = "2026-09-06-bailey-spark-full-vocab", "2026-09-06-bailey-spark-shortlist-16k"
    printed = CliRunner().invoke(app, ["diff", a, b, "--repo", str(ROOT)], env={"COLUMNS": "400"}).stdout
    assert "│ trials not reported │" in printed and "reported / reported" not in printed


def test_no_supported_interval_starts_inside_the_shaded_band_of_a_forest_plot(example_pages: dict[str, bytes]) -> None:
    """The shaded band is 1 ± min_effect, the margin supported and contradicted are judged by, so
    no supported interval reaches into it (before, the shade was the wider within-noise band, and
    a supported interval started inside it); the wider band is dashed, and the key says which is which."""
    import json

    import vl_convert as vlc

    charts = [name for name in example_pages if name.endswith(("charts/forest.json", "charts/effects.json"))]
    assert len(charts) >= 10
    supported = 0
    for name in charts:
        spec = json.loads(example_pages[name])
        shades = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "rect"]
        [(band,)] = [shade["data"]["values"] for shade in shades]
        margin = band["hi"] - 1  # min_effect: the settings' 5%, or a claim's own
        assert band["lo"] == pytest.approx(1 - margin) and margin in (pytest.approx(0.05), pytest.approx(0.01)), name
        for row in spec["datasets"]["table"]:
            if row["verdict"] == "supported" and row.get("low") is not None:
                supported += 1
                assert row["low"] > band["hi"] or row["high"] < band["lo"], (name, row)
        texts: list[str] = []
        _legend(vlc.vegalite_to_scenegraph(spec)["scenegraph"], texts)
        shown = f"smaller than worth calling (±{margin:.1%}, shaded): supported and contradicted lie wholly outside"
        assert shown in texts, (name, texts)
        assert "band of no difference" not in texts
    assert supported >= 5


def _legend(node: dict[str, object], out: list[str]) -> None:
    for child in node.get("items", []):  # type: ignore[attr-defined]
        if child.get("role") == "legend-label":
            out += [str(item["text"]) for item in child.get("items", [])]
        _legend(child, out)
