"""Every internal link of a built site resolves: a crawl of site/ (generator.site.links) over the
example publication and a scaffolded one, and `build --strict` failing on a broken link by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from builders import build_example, four_cells, grid_attribution, grid_report
from generator.cli import app
from generator.cli.site_builders import builder_executable
from generator.site.links import Broken, _parse, anchor_ids, broken_links
from helpers import measured_run, publication, write_tree


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example(tmp_path_factory.mktemp("example") / "pub")


def test_every_internal_link_of_the_example_publication_resolves(example: Path) -> None:
    assert broken_links(example) == []
    grid = (example / "claims" / "grid-who-earned-it" / "index.html").read_text()
    # the cells link their runs' pages and the claims they take apart, as URLs MkDocs wrote
    run = "2026-11-30-grid-nmax2-1t"
    assert f'<a href="../../runs/{run}/">{run.replace("-", "&#45;")}</a>' in grid
    assert 'href="../grid-threads-credit/"' in grid and "index.md" not in grid.split("<article")[1]
    # each cell names its levels in one column, so the table stacks on a phone with its labels
    assert "<td>threads&#61;1, draft&#61;noise&#45;0.02</td>" in grid
    claim = (example / "claims" / "grid-threads-credit" / "index.html").read_text()
    assert 'href="../grid-who-earned-it/"' in claim
    # the front page's glance links the ledger filtered by verdict: each #verdict=... is a real id
    ledger = (example / "claims" / "index.html").read_text()
    home = (example / "index.html").read_text()
    assert 'href="claims/#verdict=contradicted"' in home and 'id="verdict=contradicted"' in ledger


def test_a_page_anchors_are_those_the_crawl_reads_from_it(example: Path) -> None:
    """`anchor_ids` (what a converted page's anchors are taken from) reads only the tags that may
    hold one, and finds what the crawl's full parse finds, on every built page and hostile ones."""
    hostile = [
        '<a name="n" href="x"><b id="b&amp;c">',  # an anchor and a link in one tag; an entity
        '<div name="not-an-anchor" id=bare><A NAME=up>',  # name is an anchor on <a> alone
        '<script>"<a id=in-script>"</script><\u017fcript><a id="after"></script><a id="out">',
        '<STYLE><a id="in-style"></style><!-- <a id="in-comment"> --><p title="a&gt;b" id="late">',
    ]
    pages = [p.read_text() for p in sorted(example.rglob("*.html"))]
    assert len(pages) > 40
    for html in [*pages, *hostile]:
        assert anchor_ids(html) == _parse(html).ids
    assert [anchor_ids(h) for h in hostile[:2]] == [{"n", "b&c"}, {"bare", "up"}]
    assert anchor_ids(hostile[2]) == {"out"} and anchor_ids(hostile[3]) == {"late"}


def test_the_glance_marker_inside_inline_code_stays_as_written(example: Path) -> None:
    guide = (example / "guide" / "publishing" / "index.html").read_text()
    assert "<p>Put <code>&lt;!-- at a glance --&gt;</code> on its own line in any page" in guide
    assert "#verdict=" not in guide  # no glance panel was put in the guide
    assert 'class="bl-verdict' in (example / "index.html").read_text()  # the home page's own marker still is


def test_reported_figures_are_labelled_reported_not_measured(example: Path) -> None:
    copied = (example / "claims" / "shortlist-c8" / "index.html").read_text()  # both runs reported by a blog
    assert "<dt>Reported</dt><dd>&#43;19.0&#37; &#40;reported figures, no interval&#41;</dd>" in copied
    assert "<dt>Measured" not in copied and "<dt>Source</dt><dd>2026&#45;09&#45;06&#45;bailey" in copied
    measured = (example / "claims" / "testbed-throughput-nmax3-vs-nmax2" / "index.html").read_text()
    assert "<dt>Measured</dt>" in measured  # trials measured on the test bed


def test_a_generated_publication_with_a_grid_and_several_conditions_has_no_broken_link(tmp_path: Path) -> None:
    runs = four_cells()
    several = {  # two runs measured at concurrency 1 and 8, and a claim on them
        "a": measured_run("2026-09-02-full-vocab"),
        "b": measured_run("2026-09-02-shortlist", setup={"draft_vocab": 16000, "head_kernel": "lowm"}),
    }
    shortlist = {
        "id": "shortlist-c8",
        "statement": "The shortlist is faster.",
        "metric": "tokens_per_second",
        "baseline": "2026-09-02-full-vocab",
        "candidate": "2026-09-02-shortlist",
        "at": [{"concurrency": 1}, {"concurrency": 8}],
        "varies": ["setup.draft_vocab"],
    }
    claim = {
        "id": "b-did-it",
        "statement": "B raised throughput by a third.",
        "metric": "tokens_per_second",
        "baseline": "2026-09-01-a0-b0",
        "candidate": "2026-09-01-a1-b1",
        "at": {"concurrency": 1},
        "varies": ["setup.b"],
    }
    attribution = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"}, credits="B")
    files = publication(*runs.values(), *several.values(), extra=grid_report(attribution, [claim, shortlist]))
    root = write_tree(tmp_path / "pub", files)
    result = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    site = root / "site"
    assert broken_links(site) == []
    grid = (site / "claims" / "the-grid" / "index.html").read_text()
    assert grid.count('href="../../runs/2026-09-01-a') == 4 and 'href="../b-did-it/"' in grid
    assert 'href="../the-grid/"' in (site / "claims" / "b-did-it" / "index.html").read_text()
    assert 'href="../../runs/2026-09-02-shortlist/"' in (site / "claims" / "shortlist-c8" / "index.html").read_text()


def test_every_page_of_a_paged_runs_index_links_the_trials_and_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the crawl at 1,000 runs: the second page's links to ledger/trials.csv and compare
    were escaped (..&#47;../) and so pointed under runs/."""
    import functools

    from generator.render import runs_index

    monkeypatch.setattr(runs_index, "runs_index", functools.partial(runs_index.runs_index, per_page=1))
    root = write_tree(tmp_path / "pub", publication(measured_run("2026-09-01-a"), measured_run("2026-09-02-b")))
    result = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root), "--no-cache"])
    assert result.exit_code == 0, result.output
    second = (root / "site" / "runs" / "_pages" / "2" / "index.html").read_text()
    assert 'href="../../../ledger/trials.csv"' in second and 'href="../../../compare/"' in second
    assert broken_links(root / "site") == []


def test_a_scaffolded_publication_has_no_broken_link(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["init", str(tmp_path / "pub")])
    assert result.exit_code == 0, result.output
    build = CliRunner().invoke(app, ["build", "--strict", "--repo", str(tmp_path / "pub")])
    assert build.exit_code == 0, build.output
    assert broken_links(tmp_path / "pub" / "site") == []


BROKEN_PAGE = """\
# Home

<a href="runs/no-such-run/">a run that is not there</a>
<a href="claims/#no-such-anchor">an anchor that is not there</a>
<a href="https://example.org/elsewhere/">an outside link is not crawled</a>
<a href="#home">an anchor of this page</a>
"""


@pytest.mark.parametrize("builder", ["mkdocs", "properdocs", "zensical"])
def test_build_strict_fails_naming_page_and_target_of_a_broken_link(tmp_path: Path, builder: str) -> None:
    if builder != "mkdocs" and builder_executable(builder) is None:
        pytest.skip(f"{builder} is not installed (pip install {builder}); CI installs it")
    files = publication(measured_run(), extra={"site_src/index.md": BROKEN_PAGE})
    root = write_tree(tmp_path / "pub", files)
    result = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root), "--builder", builder])
    assert result.exit_code == 1, result.output
    if builder == "properdocs":  # the plugin warns inside the subprocess, whose output is not captured here
        assert "properdocs build failed" in result.output
        return
    assert "index.html: broken link to runs/no-such-run/ (no file runs/no-such-run/index.html)" in result.output
    assert "index.html: broken link to claims/#no-such-anchor (no id 'no-such-anchor' on claims/index.html)" in (
        result.output
    )
    assert "example.org" not in result.output and "#home" not in result.output
    if builder == "zensical":  # no plugin runs: benchledger crawls the site after zensical built it
        return
    relaxed = CliRunner().invoke(app, ["build", "--repo", str(root)])
    assert relaxed.exit_code == 0, relaxed.output  # without --strict: warnings, still built
    assert "WARNING -  benchledger: index.html: broken link to runs/no-such-run/" in relaxed.output


def test_the_crawl_resolves_relative_paths_folders_fragments_and_chart_specs(tmp_path: Path) -> None:
    site = write_tree(
        tmp_path / "site",
        {
            "index.html": '<h1 id="top">Home</h1><a href="a/">a</a><a href="a/index.html#x">x</a>'
            '<a href="mailto:me@example.org">m</a><a href="//cdn.example/x.js">cdn</a>'
            '<script>var s = \'<a href="nowhere/">\';</script><!-- <a href="gone/"> -->',
            "a/index.html": '<p id="x">x</p><a href="../#top">up</a><a href="..">root</a><a href="../../out">out</a>'
            '<div class="bl-chart" data-bl-spec="charts/gone.json"></div><img src="pic%20one.png">'
            "<a href='../a/#nope'>single quotes</a><a href=\"../index.html#to&#112;\">entity</a>",
            "a/pic one.png": "",
        },
    )
    assert broken_links(site) == [
        Broken("a/index.html", "../../out", "points outside the site"),
        Broken("a/index.html", "charts/gone.json", "no file a/charts/gone.json"),
        Broken("a/index.html", "../a/#nope", "no id 'nope' on a/index.html"),
    ]
    (site / "404.html").write_text('<a href="/repo/a/#x">served under /repo/</a><a href="/repo/b/">b</a>')
    served = [b for b in broken_links(site, "/repo") if b.page == "404.html"]
    assert served == [Broken("404.html", "/repo/b/", "no file b/index.html")]


def test_the_crawl_parses_again_only_the_pages_whose_bytes_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build cache keeps each page's links by the hash of its bytes: a page whose bytes
    changed is parsed again (and its new broken link found), a removed page is forgotten, and
    links to it from unchanged pages are found broken."""
    from generator.site import links

    site = tmp_path / "site"
    write_tree(
        site,
        {
            "index.html": '<a href="a/">a</a> <a href="b/#top">b</a>',
            "a/index.html": '<h1 id="a">A</h1><a href="../b/">b</a>',
            "b/index.html": '<h1 id="top">B</h1>',
        },
    )
    parsed: list[int] = []
    parse = links._parse
    monkeypatch.setattr(links, "_parse", lambda html: parsed.append(1) or parse(html))
    crawled: links.Crawled = {}
    assert broken_links(site, crawled=crawled) == [] and len(parsed) == 3
    assert broken_links(site, crawled=crawled) == [] and len(parsed) == 3  # nothing parsed again
    (site / "a" / "index.html").write_text('<h1 id="a">A</h1><a href="../b/#gone">b</a>')
    assert broken_links(site, crawled=crawled) == [Broken("a/index.html", "../b/#gone", "no id 'gone' on b/index.html")]
    assert len(parsed) == 4
    (site / "b" / "index.html").unlink()
    assert [str(b) for b in broken_links(site, crawled=crawled)] == [
        "a/index.html: broken link to ../b/#gone (no file b/index.html)",
        "index.html: broken link to b/#top (no file b/index.html)",
    ]
    assert sorted(crawled) == ["a/index.html", "index.html"] and len(parsed) == 4


def test_a_link_to_the_page_itself_is_resolved_per_page_and_linked_folders_are_followed(tmp_path: Path) -> None:
    """Found in review: a link with no path but leading whitespace (" #x", which browsers and
    urlsplit read as #x) was resolved once per folder, so a page's own anchor was looked up on its
    neighbour; and a linked folder's files were not found."""
    site = tmp_path / "site"
    write_tree(
        site,
        {
            "r/a.html": '<a href=" #x">x</a>',
            "r/b.html": '<h2 id="x">X</h2><a href=" #x">x</a>',
            "real/index.html": '<h1 id="p">P</h1>',
            "real/p.html": '<h1 id="p">P</h1>',
            "index.html": '<a href="alias/p.html#p">p</a><a href="alias/">a</a><a href="alias">b</a>',
        },
    )
    (site / "alias").symlink_to(site / "real", target_is_directory=True)
    assert [str(b) for b in broken_links(site)] == ["r/a.html: broken link to  #x (no id 'x' on r/a.html)"]
