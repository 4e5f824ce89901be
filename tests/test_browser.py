"""The built site in a real browser: charts drawn, no console errors, no request leaving
127.0.0.1, instant navigation, the claim beside its correction, hostile text kept inert.

Needs Debian's chromium and the playwright package (driven with executable_path, no
browser download). Screenshots go to $BENCHLEDGER_SCREENSHOTS (default: a temp folder,
printed by the test session).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from generator.analysis.reproduction import STATES as REPRODUCTION_STATES
from generator.cli import app
from helpers import MANIFEST, RESULTS, measured_run, publication, write_tree

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
A, B = "2026-09-01-full-vocab", "2026-09-01-shortlist"
SLOWER = RESULTS.replace("104.1", "99.1").replace("103.5", "98.2").replace("104.8", "98.9").replace("102.9", "97.5")
MKDOCS = """\
site_name: browser fixture
docs_dir: site_src
theme: {name: material, font: false, features: [navigation.instant]}
plugins: [search, benchledger]
nav:
  - Home: index.md
  - Reports: [reports/seed.md]
  - Claims: claims/index.md
  - Runs: runs/index.md
"""


def report(title: str, claims: list[dict[str, Any]], limits: list[str], swept: bool = True) -> str:
    meta = {"title": title, "date": "2026-09-06", "claims": claims, "limits": limits}
    sweep = f"<!-- sweep tokens_per_second: {A}, {B} -->" if swept else ""
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + f"---\n\n<!-- claims -->\n\nProse.\n\n{sweep}\n"


def claims(statement: str = "The shortlist is faster.") -> list[dict[str, Any]]:
    first = {
        "id": "shortlist-c8",
        "date": "2026-09-02",
        "statement": statement,
        "metric": "tokens_per_second",
        "baseline": A,
        "candidate": B,
        "at": {"concurrency": 8},
        "varies": ["setup.draft_vocab"],
        "claimed": "+20%",
    }
    fix = {
        **first,
        "id": "shortlist-c8-matched",
        "corrects": "shortlist-c8",
        "date": "2026-09-06",
        "statement": "With matched kernels the gain is gone.",
    }
    del fix["claimed"]
    return [first, fix]


def build(root: Path) -> Path:
    result = CliRunner().invoke(app, ["build", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    return root / "site"


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("BENCHLEDGER_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = measured_run(B, setup={"draft_vocab": 16000, "head_kernel": "stock"})
    b[f"runs/{B}/results.csv"] = SLOWER
    b[f"runs/{B}/manifest.yaml"] = MANIFEST.replace("draft_head_gemm: stock", "draft_head_gemm: lowm")
    files = publication(
        measured_run(A, setup={"draft_vocab": 248320, "head_kernel": "stock"}),
        b,
        extra={
            "mkdocs.yml": MKDOCS,
            "site_src/reports/seed.md": report("A speedup credited to the wrong idea", claims(), ["One box."]),
        },
    )
    return build(write_tree(tmp_path_factory.mktemp("browser") / "pub", files))


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """The folder on 127.0.0.1 for the duration of the block: its base URL."""
    url, httpd = serve(folder)
    try:
        yield url
    finally:
        httpd.shutdown()
        httpd.server_close()


def serve(folder: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}", httpd


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


class Watched:
    """A page that records console errors and every request's host."""

    def __init__(self, browser: Any, width: int = 1280) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.hosts: set[str] = set()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.hosts.add(r.url.split("/")[2] if "://" in r.url else r.url))

    def charts_drawn(self) -> int:
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('div.bl-chart')].every(n => n.getAttribute('data-bl-drawn') "
            "&& n.getAttribute('data-bl-drawn') !== 'pending')",
            timeout=20000,
        )
        states = self.page.eval_on_selector_all(
            "div.bl-chart", "ns => ns.map(n => [n.getAttribute('data-bl-drawn'), !!n.querySelector('svg, canvas')])"
        )
        assert all(state == ["yes", True] for state in states), states
        return len(states)


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    url, httpd = serve(site)
    yield url
    httpd.shutdown()
    httpd.server_close()


PAGES = ["", "runs/", f"runs/{A}/", "claims/", "claims/shortlist-c8/", "reports/seed/"]


@pytest.mark.parametrize("path", PAGES)
def test_every_chart_is_drawn_without_errors_or_outside_requests(
    browser: Any, server: str, path: str, screenshots: Path
) -> None:
    watched = Watched(browser)
    watched.page.goto(f"{server}/{path}")
    drawn = watched.charts_drawn()
    if path in (f"runs/{A}/", "claims/shortlist-c8/"):
        assert drawn >= 2
    watched.page.screenshot(
        path=str(screenshots / f"{path.strip('/').replace('/', '_') or 'home'}.png"), full_page=True
    )
    assert watched.errors == []
    assert watched.hosts <= {server.split("/")[2]}, watched.hosts
    watched.page.close()


def test_instant_navigation_redraws_charts(browser: Any, server: str) -> None:
    watched = Watched(browser)
    watched.page.goto(f"{server}/claims/")
    watched.page.click("a[href*='shortlist-c8/']")
    watched.page.wait_for_url("**/claims/shortlist-c8/")
    assert watched.charts_drawn() >= 2
    watched.page.click(f"a[href*='runs/{A}/']")
    watched.page.wait_for_url(f"**/runs/{A}/")
    assert watched.charts_drawn() >= 2
    watched.page.go_back()
    watched.page.wait_for_url("**/claims/shortlist-c8/")
    assert watched.charts_drawn() >= 2
    assert watched.errors == []
    watched.page.close()


@pytest.mark.parametrize(("width", "beside"), [(1280, True), (390, False)])
def test_claim_and_correction_side_by_side_then_stacked(
    browser: Any, server: str, width: int, beside: bool, screenshots: Path
) -> None:
    watched = Watched(browser, width)
    watched.page.goto(f"{server}/claims/shortlist-c8/")
    first, second = (watched.page.locator(".bl-card").nth(i).bounding_box() for i in range(2))
    assert first and second
    if beside:
        assert abs(first["y"] - second["y"]) < 2 and second["x"] >= first["x"] + first["width"] - 1
    else:
        assert second["y"] >= first["y"] + first["height"] - 1
    watched.page.screenshot(path=str(screenshots / f"claim-{width}px.png"), full_page=True)
    watched.page.close()


HOSTILE = (
    '<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> [link](javascript:window.pwned=3) '
    "![img](javascript:window.pwned=4) <!-- comment --> a|b"
)


# What a hostile server's error body or a careless publisher's notes would put on a page.
REMOTE = (
    "![tracker](https://evil.example/t.png) [your account](https://evil.example/login) <img src=https://evil.example/x>"
)


def test_hostile_text_stays_inert_and_literal(browser: Any, tmp_path: Path, screenshots: Path) -> None:
    b = measured_run(
        B,
        title=f"Title {HOSTILE}",
        notes=f"Notes {HOSTILE}\n\nline two | cell\n\n{REMOTE}",
        setup={"draft_vocab": HOSTILE, "head_kernel": "stock"},
    )
    label = "8|<script>window.pwned=5</script>"
    b[f"runs/{B}/results.csv"] = SLOWER.replace(",8,", f',"{label}",')
    a = measured_run(A, setup={"draft_vocab": 248320, "head_kernel": "stock"})
    a[f"runs/{A}/results.csv"] = RESULTS.replace(",8,", f',"{label}",')
    b[f"runs/{B}/manifest.yaml"] = MANIFEST + f"extra: {yaml.safe_dump(HOSTILE).strip()}\n"
    hostile_claims = claims(statement=f"Claim {HOSTILE}")
    for claim in hostile_claims:
        claim["at"] = {"concurrency": label}
    files = publication(
        a,
        b,
        extra={
            "mkdocs.yml": MKDOCS,
            "site_src/reports/seed.md": report(f"Report {HOSTILE}", hostile_claims, [f"Limit {HOSTILE}"], swept=False),
        },
    )
    root = write_tree(tmp_path / "pub", files)
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert "Traceback" not in result.output and result.exit_code == 0, result.output
    url, httpd = serve(build(root))
    try:
        compare = f"compare/?a={A}&b={B}"
        for path in ("runs/", f"runs/{B}/", "claims/", "claims/shortlist-c8/", "reports/seed/", compare):
            watched = Watched(browser)
            watched.page.goto(f"{url}/{path}")
            watched.charts_drawn()
            if path == compare:  # the hostile title, setup value and condition label arrive as JSON, shown as text
                watched.page.wait_for_selector("table[data-bl-table='figures']")
                assert f"Title {HOSTILE}" in (watched.page.text_content("select[name=b]") or "")
            assert watched.page.evaluate("() => window.pwned") is None, path
            assert "<script>window.pwned=1</script>" in watched.page.inner_text("body"), path
            assert watched.hosts <= {url.split("/")[2]}, (path, watched.hosts)  # nothing third-party loaded
            if path == f"runs/{B}/":
                text = watched.page.inner_text("body")
                assert "[image: tracker] (https://evil.example/t.png)" in text
                assert "your account (https://evil.example/login)" in text
                rel = watched.page.get_attribute("a[href='https://evil.example/login']", "rel")
                assert rel == "nofollow noopener noreferrer"
            watched.page.screenshot(
                path=str(screenshots / f"hostile-{path.strip('/').replace('/', '_')}.png"), full_page=True
            )
            watched.page.close()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_attribution_grid_page_draws_its_effects_and_cells(browser: Any, tmp_path: Path, screenshots: Path) -> None:
    from builders import four_cells, grid_attribution, grid_report

    runs = four_cells()
    attribution = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"}, credits="B")
    files = publication(*runs.values(), extra=grid_report(attribution))
    site = build(write_tree(tmp_path / "pub", files))
    with served(site) as url:
        watched = Watched(browser)
        watched.page.goto(f"{url}/claims/the-grid/")
        assert watched.charts_drawn() == 2
        text = watched.page.inner_text("article")
        assert (
            "misattributed" in text
            and "The gain comes from A: setting it to a1 instead of a0 changes tokens_per_second by +27.7%" in text
        )
        lines = watched.page.eval_on_selector_all(
            "div.bl-chart svg path[aria-roledescription='line mark']", "n => n.length"
        )
        assert lines == 2  # one line per level of B in the interaction plot
        watched.page.screenshot(path=str(screenshots / "claims_the-grid.png"), full_page=True)
        assert watched.errors == []
        assert watched.hosts <= {url.split("/")[2]}, watched.hosts
        watched.page.close()


def test_the_front_page_glance_counts_match_the_ledger_and_filter_it(
    browser: Any, tmp_path: Path, screenshots: Path
) -> None:
    b = measured_run(B, setup={"draft_vocab": 16000, "head_kernel": "stock"})
    b[f"runs/{B}/results.csv"] = SLOWER
    files = publication(
        measured_run(A, setup={"draft_vocab": 248320, "head_kernel": "stock"}),
        b,
        extra={
            "mkdocs.yml": MKDOCS,
            "site_src/index.md": "# Home\n\n<!-- at a glance -->\n\nProse.\n",
            "site_src/reports/seed.md": report("A speedup credited to the wrong idea", claims(), ["One box."]),
        },
    )
    root = write_tree(tmp_path / "pub", files)
    site = build(root)
    ledger = json.loads((site / "ledger" / "claims.json").read_text())
    verdicts = sorted({c["verdict"] for c in ledger})
    with served(site) as url:
        watched = Watched(browser)
        watched.page.goto(f"{url}/")
        text = watched.page.inner_text("article")
        assert "2 claims from 1 report over 2 runs. 2 judged on measured trials: 2 contradicted." in text
        for verdict in verdicts:
            count = sum(c["verdict"] == verdict for c in ledger)
            assert f"{verdict} {count}" in text
        assert "Corrected: The shortlist is faster contradicted" in text  # the claim's own pill beside it
        assert "Runs: 2 unverified" in text
        watched.page.screenshot(path=str(screenshots / "home_glance.png"), full_page=True)
        watched.page.click(f"article a[href*='#verdict={verdicts[0].replace(' ', '-')}']")
        watched.page.wait_for_url("**/claims/**")
        watched.page.wait_for_function("() => document.querySelector('.bl-filter[data-bl-ready]')")
        shown = watched.page.eval_on_selector_all(
            "article table tbody tr",
            "rows => rows.filter(r => !r.hidden).map(r => r.querySelector('.bl-verdict').textContent)",
        )
        assert shown and set(shown) == {verdicts[0]}, shown
        assert watched.errors == []
        assert watched.hosts <= {url.split("/")[2]}, watched.hosts
        watched.page.close()


def test_charts_follow_the_palette_toggle_into_dark_mode(browser: Any, server: str, screenshots: Path) -> None:
    watched = Watched(browser)
    watched.page.goto(f"{server}/claims/shortlist-c8/")
    watched.charts_drawn()
    label = "div.bl-chart g.role-axis-label text"
    light = watched.page.eval_on_selector(label, "n => getComputedStyle(n).fill")
    watched.page.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
    watched.page.wait_for_function(
        "() => [...document.querySelectorAll('div.bl-chart')].every(n => n.getAttribute('data-bl-scheme') === 'dark')"
    )
    watched.page.wait_for_function(
        f"(before) => getComputedStyle(document.querySelector({label!r})).fill !== before", arg=light
    )
    dark = watched.page.eval_on_selector(label, "n => getComputedStyle(n).fill")
    assert dark == "rgb(255, 255, 255)" and light != dark, (light, dark)
    watched.page.screenshot(path=str(screenshots / "claim_dark.png"), full_page=True)
    assert watched.errors == []
    watched.page.close()


def test_a_sweep_chart_draws_measured_loads_only_with_no_band(browser: Any, server: str) -> None:
    watched = Watched(browser)
    watched.page.goto(f"{server}/runs/{A}/")
    watched.charts_drawn()
    sweep = "div.bl-chart[data-bl-spec='charts/tokens_per_second-sweep.json']"
    count = "(n, mark) => n.querySelectorAll(`path[aria-roledescription='${mark}']`).length"
    bands = watched.page.eval_on_selector(sweep, count, "area mark")
    points = watched.page.eval_on_selector(sweep, count, "circle")
    assert bands == 0 and points == 2  # no band between loads, a point at concurrency 1 and 8
    watched.page.goto(f"{server}/reports/seed/")  # the report's <!-- sweep --> directive: both runs, one chart
    watched.charts_drawn()
    sweep = "div.bl-chart[data-bl-spec*='ledger/sweeps/seed/1.json']"
    bands = watched.page.eval_on_selector(sweep, count, "area mark")
    points = watched.page.eval_on_selector(sweep, count, "circle")
    assert bands == 0 and points == 4  # no band, each run a point at concurrency 1 and 8
    assert f"candidate: {B}" not in watched.page.inner_text("article")  # series are named by run id alone
    assert B in (watched.page.text_content("article details") or "")  # folded, yet in the page
    assert watched.errors == []
    watched.page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_run_page_headline_cards_fit_the_column(browser: Any, server: str, width: int, screenshots: Path) -> None:
    watched = Watched(browser, width=width)
    watched.page.goto(f"{server}/runs/{A}/")
    watched.charts_drawn()
    cards = watched.page.eval_on_selector_all(".bl-headline .bl-stat", "ns => ns.map(n => n.innerText)")
    assert cards[0].startswith("tokens_per_second\n31.06 tok/s\n[")  # the mean at concurrency=1, first
    beyond = watched.page.evaluate(
        "() => { const r = document.querySelector('article').getBoundingClientRect().right;"
        " return Math.max(...[...document.querySelectorAll('.bl-stat, .bl-chart')]"
        ".map(n => n.getBoundingClientRect().right - r)); }"
    )
    assert beyond <= 1, beyond  # cards and charts stay inside the content column
    unboxed = watched.page.evaluate(
        "() => [...document.querySelectorAll('article table')].filter(t => {"
        " const box = t.closest('.md-typeset__scrollwrap'); return !box || getComputedStyle(box).overflowX !== 'auto'; })"
        ".length"
    )
    assert unboxed == 0  # a wide table scrolls inside its own box
    wide = watched.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, wide  # the page itself never scrolls sideways
    watched.page.screenshot(path=str(screenshots / f"run_{width}.png"), full_page=True)
    assert watched.errors == []
    watched.page.close()


def test_the_runs_index_pages_through_1000_runs(browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
    from build_scale import MKDOCS as SCALE_MKDOCS
    from build_scale import make_publication

    from generator.render import claims_index, report_panels

    # its 100 claims (99 inconclusive, 1 within noise) paged at 40, its one report's panel cut at 30
    monkeypatch.setattr(claims_index, "PER_PAGE", 40)
    monkeypatch.setattr(report_panels, "PANEL_ROWS", 30)

    root = tmp_path / "big"
    make_publication(root, 1000)
    (root / "mkdocs.yml").write_text(SCALE_MKDOCS.format(plugin=", benchledger"))
    site = build(root)
    pages = [site / "runs" / "index.html", site / "runs" / "_pages" / "2" / "index.html"]
    assert all(p.is_file() for p in pages) and not (site / "runs" / "_pages" / "3").exists()
    assert max(p.stat().st_size for p in pages) < 500_000
    with served(site) as url:
        watched = Watched(browser)
        watched.page.goto(f"{url}/runs/")
        text = watched.page.inner_text("article")
        assert "Runs 1–500 of 1,000 · page 1 · 2 · next" in text
        first = watched.page.eval_on_selector_all("article tbody tr", "rows => rows.length")
        watched.page.click("article a:has-text('next')")
        watched.page.wait_for_url("**/runs/_pages/2/")
        assert "Runs 501–1,000 of 1,000" in watched.page.inner_text("article")
        second = watched.page.eval_on_selector_all("article tbody tr", "rows => rows.length")
        assert (first, second) == (500, 500)
        watched.page.click("article tbody tr a")
        watched.page.wait_for_url("**/runs/*/")
        assert watched.page.url.rstrip("/").rsplit("/", 1)[1].startswith("20")  # a run page, by id
        # Past 500 runs the compare page holds no run options (it would weigh 250 KB here, 2.4 MB
        # at 10,000): compare.js writes them from runs.json, newest first, as the page would.
        compare = (site / "compare" / "index.html").read_text()
        assert '<option value="2026' not in compare and len(compare.encode()) < 100_000
        listing = [r[0] for r in json.loads((site / "compare" / "runs.json").read_text())["runs"]]
        newest, oldest = listing[0], listing[-1]
        watched.page.goto(f"{url}/compare/?a={oldest}&b={newest}")
        watched.page.wait_for_selector("table[data-bl-table='figures']")
        picker = "select[name=b] option"
        assert watched.page.eval_on_selector_all(picker, "o => o.map(x => x.value)") == ["", *listing]
        title = {r[0]: r[1] for r in json.loads((site / "compare" / "runs.json").read_text())["runs"]}[newest]
        assert watched.page.eval_on_selector_all(picker, "o => o[1].textContent") == f"{title} ({newest})"
        assert (watched.page.input_value("select[name=a]"), watched.page.input_value("select[name=b]")) == (
            oldest,
            newest,
        )
        # Past a page of claims: every claim once over the index's pages, each verdict on its own
        # pages, and the one-page index's #verdict= address taken to that verdict's page.
        seen: list[str] = []
        watched.page.goto(f"{url}/claims/")
        for number in (1, 2, 3):
            text = watched.page.inner_text("article")
            assert f"Claims {40 * number - 39}–{min(40 * number, 100)} of 100" in text
            assert "Show: all (100) · inconclusive (99) · within noise (1)" in text
            seen += watched.page.eval_on_selector_all("article tbody tr td a", "a => a.map(x => x.href)")
            if number < 3:
                watched.page.click("article p a:has-text('next')")
                watched.page.wait_for_url(f"**/claims/_pages/{number + 1}/")
        assert len(seen) == len(set(seen)) == 100
        watched.page.goto(f"{url}/claims/#verdict=within-noise")
        watched.page.wait_for_url("**/claims/_pages/within-noise/")
        shown = watched.page.eval_on_selector_all("article tbody tr .bl-verdict", "v => v.map(x => x.textContent)")
        assert shown == ["within noise"]
        watched.page.goto(f"{url}/claims/")
        watched.page.evaluate("() => { window.location.hash = '#verdict=within-noise'; }")  # on the page itself
        watched.page.wait_for_url("**/claims/_pages/within-noise/")
        watched.page.click("article p a:has-text('inconclusive (99)')")
        watched.page.wait_for_url("**/claims/_pages/inconclusive/")
        assert "Claims 1–40 of 99 · page 1 · 2 · 3 · next" in watched.page.inner_text("article")
        watched.page.goto(f"{url}/reports/scale/")
        text = watched.page.inner_text("article")
        assert "This report makes 100 claims: 1 within noise, 99 inconclusive. The panel lists 30 of them," in text
        assert watched.page.eval_on_selector_all(".bl-stack--panel tbody tr", "rows => rows.length") == 30
        assert watched.errors == []
        assert watched.hosts <= {url.split("/")[2]}, watched.hosts
        watched.page.close()


def test_the_compare_page_shows_a_changed_manifest_key_and_the_ratios_diff_prints(
    browser: Any, server: str, site: Path, screenshots: Path
) -> None:
    result = CliRunner().invoke(app, ["diff", A, B, "--json", "--repo", str(site.parent)])
    assert result.exit_code == 0, result.output
    expected = json.loads(result.stdout)  # stdout alone: a warning on stderr is not part of the JSON
    watched = Watched(browser)
    watched.page.goto(f"{server}/runs/{B}/")
    watched.page.click("a:has-text('this run with any other')")
    watched.page.wait_for_url(f"**/compare/?a={B}")
    # the address's run is picked once runs.json has loaded ("yes"; "pending" until then): read it
    # then, whatever the machine's speed
    watched.page.wait_for_function("() => document.querySelector('.bl-compare[data-bl-ready=\"yes\"]')")
    assert watched.page.input_value("select[name=a]") == B
    watched.page.select_option("select[name=a]", A)
    watched.page.select_option("select[name=b]", B)
    watched.page.click("button:has-text('Compare')")
    watched.page.wait_for_selector("table[data-bl-table='figures']")
    assert watched.page.url.endswith(f"/compare/?a={A}&b={B}")
    rows = "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    environment = watched.page.eval_on_selector_all("table[data-bl-table='environment'] tbody tr", rows)
    assert ["kernels.draft_head_gemm", "stock", "lowm"] in environment
    assert environment == [[d["key"], d["baseline"], d["candidate"]] for d in expected["differences"]]
    figures = watched.page.eval_on_selector_all("table[data-bl-table='figures'] tbody tr", rows)

    def pct(r: float) -> str:
        from generator.format.signed import change

        return change(r)  # the page and the CLI write a change one way: no change is "0.0%"

    assert [row[:5] for row in figures] == [
        [
            f["metric"],
            ", ".join(f"{k}={v}" for k, v in f["at"].items()),
            f"{f['n_baseline']} / {f['n_candidate']}",
            pct(f["ratio"]),
            f"[{pct(f['ci_low'])}, {pct(f['ci_high'])}]",
        ]
        for f in expected["figures"]
    ]
    # a slowdown reads as worse by the metric's `better`; a change whose interval spans 0 reads as unclear
    assert [
        "tokens_per_second",
        "concurrency=8",
        "5 / 5",
        "-4.2%",
        "[-7.1%, -1.1%]",
        "worse (higher is better)",
    ] in figures
    assert {row[5] for row in figures} <= {
        "worse (higher is better)",
        "better (higher is better)",
        "unclear: the interval includes no change",
        "no direction declared",
    }
    worse = watched.page.eval_on_selector("td.bl-cue--worse", "n => getComputedStyle(n).color")
    assert worse == "rgb(198, 40, 40)"
    assert f"In a terminal, benchledger diff {A} {B} prints the same figures." in watched.page.inner_text("article")
    watched.page.select_option("select[name=a]", B)  # the other way round: the terminal hint follows the pair shown
    watched.page.select_option("select[name=b]", A)
    watched.page.click("button:has-text('Compare')")
    watched.page.wait_for_url(f"**/compare/?a={B}&b={A}")
    watched.page.wait_for_selector("table[data-bl-table='figures']")
    assert f"In a terminal, benchledger diff {B} {A} prints the same figures." in watched.page.inner_text("article")
    flipped = watched.page.eval_on_selector_all("table[data-bl-table='figures'] tbody tr", rows)
    assert [
        "tokens_per_second",
        "concurrency=8",
        "5 / 5",
        "+4.4%",
        "[+1.2%, +7.7%]",
        "better (higher is better)",
    ] in flipped
    watched.page.screenshot(path=str(screenshots / "compare.png"), full_page=True)
    watched.page.goto(f"{server}/compare/?a={A}&b=../../etc")
    watched.page.wait_for_selector(".bl-compare-status:has-text('No run')")
    assert watched.errors == []
    assert watched.hosts <= {server.split("/")[2]}, watched.hosts
    watched.page.close()


# The example publication, read as a reader would: axe-core's colour-contrast rule in both of
# Material's palettes, and screenshots at a desktop and a phone width in each.
AXE_PACKAGE = "axe_playwright_python"  # in the test extras: it ships axe-core's axe.min.js
READ = {
    "home": "",
    "ledger": "claims/",
    "claim": "claims/grid-threads-credit/",
    "grid": "claims/grid-who-earned-it/",
    "run": "runs/2026-11-29-testbed-nmax2/",
    "runs": "runs/",
    "compare": "compare/?a=2026-11-29-testbed-nodraft&b=2026-11-29-testbed-nmax2",
    "report": "reports/who-earned-it/",
}
PALETTES = ("default", "slate")


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from builders import build_example

    return build_example(tmp_path_factory.mktemp("example") / "pub")


@pytest.fixture(scope="module")
def example(example_site: Path) -> Iterator[str]:
    with served(example_site) as url:
        yield url


def open_in(browser: Any, url: str, palette: str, width: int) -> Watched:
    """A page of the site in a palette (Material keeps the reader's choice on <body>), charts drawn."""
    watched = Watched(browser, width)
    watched.page.goto(url)
    watched.page.evaluate("s => document.body.setAttribute('data-md-color-scheme', s)", palette)
    scheme = "dark" if palette == "slate" else "light"
    watched.page.wait_for_function(
        "s => [...document.querySelectorAll('div.bl-chart')].every(n => n.getAttribute('data-bl-scheme') === s)",
        arg=scheme,
        timeout=20000,
    )
    if "compare/" in url:
        watched.page.wait_for_selector("table[data-bl-table='figures']")
    return watched


def contrast_violations(page: Any) -> list[str]:
    """axe-core's color-contrast rule over the whole page: each failing node and its ratio."""
    spec = importlib.util.find_spec(AXE_PACKAGE)
    assert spec and spec.origin, f"pip install axe-playwright-python (pyproject's test extras) for {AXE_PACKAGE}"
    page.add_script_tag(path=str(Path(spec.origin).parent / "axe.min.js"))
    found = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'rule', values: ['color-contrast']}, resultTypes: ['violations']})"
        ".then(r => r.violations.flatMap(v => v.nodes.map(n => n.target.join(' ') + ': ' + n.any.map(a => a.message).join('; '))))"
    )
    return list(found)


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("name", ["home", "ledger", "claim", "grid", "run", "runs", "compare"])
def test_every_label_reaches_wcag_aa_contrast_in_both_palettes(
    browser: Any, example: str, name: str, palette: str
) -> None:
    watched = open_in(browser, f"{example}/{READ[name]}", palette, 1280)
    assert watched.page.locator(".bl-verdict, .bl-receipt, .bl-cue--worse").count() > 0  # labels to judge
    assert contrast_violations(watched.page) == []
    assert watched.errors == []
    watched.page.close()


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots_of_the_pages_a_reader_opens(
    browser: Any, example: str, width: int, palette: str, screenshots: Path
) -> None:
    for name, path in READ.items():
        watched = open_in(browser, f"{example}/{path}", palette, width)
        shot = screenshots / f"example-{name}-{width}-{'dark' if palette == 'slate' else 'light'}.png"
        watched.page.screenshot(path=str(shot), full_page=True)
        wide = watched.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 1, (name, wide)  # the page never scrolls sideways; a wide table scrolls in its box
        assert watched.errors == [], name
        watched.page.close()


ON_SCREEN = """() => {
  const cells = [...document.querySelectorAll('article .bl-stack td, article .bl-verdict, article .bl-receipt')]
    .filter(n => n.offsetParent !== null);
  const off = cells.filter(n => { const r = n.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth + 1; });
  return [cells.length, off.map(n => n.textContent.trim())];
}"""


@pytest.mark.parametrize("name", ["ledger", "runs", "compare", "grid", "claim", "report"])
def test_on_a_phone_every_cell_of_a_verdict_table_is_on_screen(browser: Any, example: str, name: str) -> None:
    """390 px: the ledger's Effect, Claimed and Flags, the runs' Source and Receipts, the
    compare page's B / A and interval, the grid's effect verdicts stack into rows, none hidden."""
    watched = open_in(browser, f"{example}/{READ[name]}", "default", 390)
    shown, off = watched.page.evaluate(ON_SCREEN)
    assert shown >= 12 and off == [], (name, off)
    labels = watched.page.eval_on_selector(
        "article .bl-stack tbody tr", "r => [...r.cells].map(c => getComputedStyle(c, '::before').content)"
    )
    expected = {
        "ledger": ['"Date"', '"Claim"', '"Verdict"', '"Effect"', '"Claimed"', '"Flags"'],
        "runs": ['"Run"', '"Receipts"', '"Source"', '"Trials"', '"Date"', '"Setup"'],
        "compare": ['"key"', '"A"', '"B"'],
        "grid": ['"Effect"', '"Ratio"', '"Interval"', '"Verdict"'],
        "claim": [
            '"Claim"',
            '"Condition"',
            '"Verdict"',
            '"Ratio"',
            '"Interval"',
            '"Level"',
            '"Within-noise band"',
            '"n (baseline / candidate)"',
        ],
        "report": ['"Claim"', '"Verdict"', '"Effect"', '"Flags"'],
    }
    assert labels == expected[name]  # each value says which column it came from
    assert watched.errors == []
    watched.page.close()


def test_the_runs_index_shows_receipts_and_source_without_scrolling_at_1280(browser: Any, example: str) -> None:
    watched = open_in(browser, f"{example}/runs/", "default", 1280)
    heads = watched.page.eval_on_selector_all("article thead th", "ns => ns.map(n => n.textContent)")
    assert heads[:4] == ["Run", "Receipts", "Source", "Trials"]
    hidden = watched.page.evaluate(
        "() => [...document.querySelectorAll('article tbody tr')].flatMap(r => [...r.cells].slice(0, 3)).filter(c => {"
        " const box = c.closest('.md-typeset__scrollwrap').getBoundingClientRect();"
        " return c.getBoundingClientRect().right > box.right + 1; }).length"
    )
    assert hidden == 0
    watched.page.close()


# Every table on every page, every folded section open: the table against its own box (Material
# makes a table an inline-block that scrolls), against the scroll wrapper around it (Material's
# .md-typeset__scrollwrap, compare.js's .bl-scroll), against the container that wrapper sits in
# (its content box: Material lets the wrapper bleed into the padding, never the table), against
# every box between it and the article that clips or scrolls, and against the article's column.
OVERFLOW = """() => {
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  const article = document.querySelector('article');
  const inner = n => { const r = n.getBoundingClientRect(), s = getComputedStyle(n);
    return [r.left + n.clientLeft + parseFloat(s.paddingLeft), r.left + n.clientLeft + n.clientWidth - parseFloat(s.paddingRight)]; };
  const headings = [...article.querySelectorAll('h1, h2, h3, summary')];
  const name = (t, i) => {
    const before = headings.filter(h => h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    const heads = [...t.querySelectorAll('th')].map(h => h.textContent.trim()).join(' | ').slice(0, 60);
    return `table ${i + 1} under "${before ? before.textContent.replace('¶', '').trim().slice(0, 50) : ''}" [${heads}]`;
  };
  const box = n => n.tagName.toLowerCase() + (n.className ? '.' + String(n.className).trim().split(/ +/).join('.') : '');
  return [...article.querySelectorAll('table')].map((t, i) => {
    if (t.offsetParent === null) { return ''; }
    const found = [], r = t.getBoundingClientRect();
    const wide = (n, what) => { const [left, right] = inner(n);
      if (r.right > right + 1 || r.left < left - 1) { found.push(`${Math.round(r.width)} px > ${what} ${box(n)} ${Math.round(right - left)} px`); } };
    if (t.scrollWidth > t.clientWidth + 1) { found.push(`scrollWidth ${t.scrollWidth} > its clientWidth ${t.clientWidth}`); }
    const wrap = t.closest('.md-typeset__scrollwrap, .bl-scroll');
    if (wrap && wrap.scrollWidth > wrap.clientWidth + 1) { found.push(`${box(wrap)} scrollWidth ${wrap.scrollWidth} > clientWidth ${wrap.clientWidth}`); }
    wide((wrap || t).parentElement, 'container');
    for (let n = (wrap || t).parentElement.parentElement; n && article.contains(n) && n !== article; n = n.parentElement) {
      if (getComputedStyle(n).overflowX !== 'visible') { wide(n, 'clipping box'); } }
    wide(article, 'column');
    return found.length ? `${name(t, i)}: ${found.join('; ')}` : '';
  }).filter(line => line);
}"""
# Material has wrapped every table of the page (compare.js wraps its own in .bl-scroll: they may
# come before the first poll, and Material never wraps them)
WRAPPED = (
    "() => [...document.querySelectorAll('article table:not([class])')]"
    ".every(t => t.closest('.md-typeset__table, .bl-scroll'))"
)


def pages_of(site: Path) -> list[str]:
    """Every page of a built site as a path under its root (directory URLs), and the compare
    page with two runs picked (alone, it is a form with no table)."""
    pages = sorted(p.relative_to(site).as_posix().removesuffix("index.html") for p in site.rglob("*.html"))
    return [*pages, READ["compare"]]


def test_no_table_on_any_page_is_wider_than_its_column_at_1280_or_390(browser: Any, example_site: Path) -> None:
    """1280 x 900 and 390 x 844, every page of the example site: no table scrolls sideways in
    Material's wrapper, none is cut off by its column, none overflows its own box."""
    paths = pages_of(example_site)
    assert len(paths) >= 40  # the crawl found the site
    with served(example_site) as url:
        offending = [found for size in ((1280, 900), (390, 844)) for found in overflowing(browser, url, paths, size)]
    assert offending == [], f"{len(offending)} overflowing:\n" + "\n".join(offending)


def overflowing(browser: Any, url: str, paths: list[str], size: tuple[int, int]) -> list[str]:
    """What OVERFLOW finds on each page at one viewport size, one browser page for them all."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    for unneeded in (
        "**/assets/benchledger/{vega,charts}.js",
        "**/search/*",
        "**/workers/*",
    ):  # a chart has its own box
        page.route(unneeded, lambda route: route.abort())
    found: list[str] = []
    for path in paths:
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        page.wait_for_function(WRAPPED)
        if path.startswith("compare/?"):
            page.wait_for_selector("table[data-bl-table='figures']")
        found += [f"{size[0]}px /{path}: {line}" for line in page.evaluate(OVERFLOW)]
    page.close()
    return found


# The first row of a table: each cell's label (data-label, shown before it on a phone), its text,
# and whether the reader can see all of it: inside the window and inside every box around it
# that clips or scrolls (Material's scroll wrapper clipped "n" and "Min – Max" at 1280 px).
FIRST_ROW = """(kind) => [...document.querySelector(`article table[data-bl-table='${kind}'] tbody tr`).cells].map(c => {
  const r = c.getBoundingClientRect();
  let seen = r.left >= 0 && r.right <= window.innerWidth + 1;
  for (let n = c.parentElement; n && n !== document.body; n = n.parentElement) {
    if (getComputedStyle(n).overflowX !== 'visible') {
      const b = n.getBoundingClientRect(); seen = seen && r.left >= b.left - 1 && r.right <= b.left + n.clientWidth + 1; } }
  const before = getComputedStyle(c, '::before').content;
  return [c.dataset.label, c.textContent, seen, before];
})"""


@pytest.mark.parametrize("width", [1280, 390])
def test_n_and_the_interval_show_in_the_summary_and_the_ratio_table(browser: Any, example: str, width: int) -> None:
    """The run's Summary and the claim's "Ratio and interval": every cell in view, n, the
    interval and the range whole; on a phone each cell is a labelled line of a card."""
    found = {}
    for name, kind in (("run", "summary"), ("claim", "forest")):
        watched = open_in(browser, f"{example}/{READ[name]}", "default", width)
        found[kind] = watched.page.evaluate(FIRST_ROW, kind)
        watched.page.close()
    summary, forest = ({label: (text, seen) for label, text, seen, _ in found[k]} for k in ("summary", "forest"))
    assert list(summary) == ["Condition", "Metric", "n", "Median", "Mean [95% CI]", "CV", "Min – Max"]
    assert summary["n"] == ("5", True) and summary["Min – Max"] == ("820.1 – 921.3", True)
    assert summary["Mean [95% CI]"] == ("872.4 [824.4, 923.1]", True)
    assert forest["n (baseline / candidate)"] == ("5 / 5", True) and forest["Interval"][1]
    assert all(seen for _, seen in [*summary.values(), *forest.values()]), found
    labelled = [before == f'"{label}"' for label, _, _, before in [*found["summary"], *found["forest"]]]
    assert all(labelled) if width == 390 else not any(labelled)  # labels only where the row is a card


CLAIM_VERDICTS = ["no trial data", "contradicted", "overstated", "supported", "within noise", "inconclusive"]
GRID_VERDICTS = ["interacts", "misattributed", "supported", "inconclusive", "no trial data"]
STATES = ["unverified", "verified", "dual-verified", "stale", *REPRODUCTION_STATES,
          "signed", "unsigned", "badly signed", "expired"]  # fmt: skip
EVERY_LABEL = """(names) => {
  const p = document.createElement('p');
  p.id = 'bl-every-label';
  const span = (kind, name) => `<span class="${kind} ${kind}--${name.replaceAll(' ', '-')}">${name}</span>`;
  p.innerHTML = span('bl-verdict', 'supported') + ' · ' + span('bl-verdict', 'misattributed') + ' ' +
    names.verdicts.map(v => span('bl-verdict', v)).join(' ') + ' ' + names.states.map(s => span('bl-receipt', s)).join(' ');
  document.querySelector('article').prepend(p);
  return [...p.children].map(n => [n.textContent, getComputedStyle(n).backgroundColor, getComputedStyle(n).color]);
}"""


@pytest.mark.parametrize("palette", PALETTES)
def test_every_verdict_and_state_has_its_own_colour_a_text_label_and_aa_contrast(
    browser: Any, example: str, palette: str, screenshots: Path
) -> None:
    """The combined badge of a claim a grid takes apart ("supported · misattributed"), every
    claim and grid verdict and every receipt or rerun state, put on a claim page and judged."""
    watched = open_in(browser, f"{example}/{READ['claim']}", palette, 1280)
    verdicts = list(dict.fromkeys(CLAIM_VERDICTS + GRID_VERDICTS))
    shown = watched.page.evaluate(EVERY_LABEL, {"verdicts": verdicts, "states": STATES})
    assert [s[0] for s in shown] == ["supported", "misattributed", *verdicts, *STATES]  # each says what it is
    background = {text: bg for text, bg, _ in shown[2 : 2 + len(verdicts)]}
    for kind in (CLAIM_VERDICTS, GRID_VERDICTS):
        assert len({background[v] for v in kind}) == len(kind), background  # no two alike on one page
    assert background["misattributed"] == "rgb(163, 58, 0)" and background["interacts"] == "rgb(0, 109, 117)"
    assert all(fg == "rgb(255, 255, 255)" for _, _, fg in shown[: 2 + len(verdicts)])
    first, second = (watched.page.locator("#bl-every-label span").nth(i).bounding_box() for i in range(2))
    assert first and second and abs(first["y"] - second["y"]) < 1  # the pair reads as one line
    watched.page.locator("#bl-every-label").screenshot(
        path=str(screenshots / f"every-label-{'dark' if palette == 'slate' else 'light'}.png")
    )
    assert contrast_violations(watched.page) == []
    watched.page.close()


def test_the_compare_page_knows_no_run_named_after_an_object_property(browser: Any, example: str) -> None:
    """A run id may be any lowercase word; a plain object would 'know' constructor, the one
    property of Object.prototype a run id can spell."""
    name = "constructor"
    watched = Watched(browser)
    watched.page.goto(f"{example}/compare/?a={name}&b=2026-11-29-testbed-nmax2")
    watched.page.wait_for_function("() => document.querySelector('.bl-compare[data-bl-ready]')")
    watched.page.wait_for_function("() => /No run/.test(document.querySelector('.bl-compare').textContent)")
    assert f"No run {name} in this publication." in watched.page.inner_text(".bl-compare")
    watched.page.close()


def test_the_compare_page_reads_two_reported_figures_as_diff_prints_them(browser: Any, example: str) -> None:
    """A reported run has one figure a source gave per condition, not trials: its count reads
    "trials not reported" (never "1" or "reported / reported"), B / A is the figures' ratio marked as reported, and the interval
    cell says why there is none, in the page's words and diff's alike."""
    a, b = "2026-09-06-bailey-spark-full-vocab", "2026-09-06-bailey-spark-shortlist-16k"
    repo = Path(__file__).resolve().parents[1]  # the example publication the page was built from
    result = CliRunner().invoke(app, ["diff", a, b, "--json", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    [figure] = json.loads(result.stdout)["figures"]
    assert figure["point_ratio"] == pytest.approx(104 / 87.4) and figure["ratio"] is None
    watched = Watched(browser)
    watched.page.goto(f"{example}/compare/?a={a}&b={b}")
    watched.page.wait_for_selector("table[data-bl-table='figures']")
    rows = watched.page.eval_on_selector_all(
        "table[data-bl-table='figures'] tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    expected = ["tokens_per_second", "concurrency=8", "trials not reported", "+19.0% (as reported)"]
    assert rows == [[*expected, "no interval: A and B are reported, not trials", "–"]]
    printed = CliRunner().invoke(app, ["diff", a, b, "--repo", str(repo)], env={"COLUMNS": "400"}).stdout
    assert " │ ".join([*expected, "no interval: A and B are reported, not trials"]) in printed
    assert watched.errors == []
    watched.page.close()


def test_a_deep_link_to_the_compare_page_shows_the_ratios_diff_computes(browser: Any, example_site: Path) -> None:
    """`compare/?a=X&b=Y` on the example site picks both runs in the page's own lists and shows
    B / A and its interval as `benchledger diff X Y --json` computes them, figure by figure."""
    from generator.format.signed import change

    a, b = "2026-11-29-testbed-nodraft", "2026-11-29-testbed-nmax2"
    result = CliRunner().invoke(app, ["diff", a, b, "--json", "--repo", str(example_site.parent)])
    assert result.exit_code == 0, result.output
    spread = [f for f in json.loads(result.stdout)["figures"] if f["ratio"] is not None and f["ci_low"] != f["ci_high"]]
    assert len(spread) >= 2
    with served(example_site) as url:
        watched = Watched(browser)
        watched.page.goto(f"{url}/compare/?a={a}&b={b}")
        watched.page.wait_for_selector("table[data-bl-table='figures']")
        assert (watched.page.input_value("select[name=a]"), watched.page.input_value("select[name=b]")) == (a, b)
        rows = watched.page.eval_on_selector_all(
            "table[data-bl-table='figures'] tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )
        shown = {(row[0], row[1]): row[3:5] for row in rows}
        for f in spread:
            label = ", ".join(f"{k}={v}" for k, v in f["at"].items())
            interval = f"[{change(f['ci_low'])}, {change(f['ci_high'])}]"
            assert shown[(f["metric"], label)] == [change(f["ratio"]), interval]
        assert watched.errors == []
        watched.page.close()


def test_picking_runs_on_the_compare_page_updates_its_address(browser: Any, example: str) -> None:
    """Each pick is kept in location.search (history.replaceState), so the view can be shared;
    an unknown id in the address is named, never inserted as markup."""
    a, b = "2026-11-29-testbed-nodraft", "2026-11-29-testbed-nmax2"
    watched = Watched(browser)
    watched.page.goto(f"{example}/compare/")
    watched.page.wait_for_function("() => document.querySelector('.bl-compare[data-bl-ready=\"yes\"]')")
    assert watched.page.evaluate("() => location.search") == ""
    watched.page.select_option("select[name=a]", a)
    assert watched.page.evaluate("() => location.search") == f"?a={a}"
    assert watched.page.inner_text(".bl-compare-status") == "Pick a run for B."
    watched.page.select_option("select[name=b]", b)
    watched.page.wait_for_selector("table[data-bl-table='figures']")
    assert watched.page.evaluate("() => location.search") == f"?a={a}&b={b}"
    watched.page.reload()  # the address alone brings the same view back
    watched.page.wait_for_selector("table[data-bl-table='figures']")
    assert watched.page.input_value("select[name=b]") == b
    watched.page.goto(f"{example}/compare/?a={a}&b=%3Cimg%20src%3Dx%20onerror%3Dwindow.pwned%3D1%3E")
    watched.page.wait_for_selector(".bl-compare-status:has-text('No run')")
    hostile = "<img src=x onerror=window.pwned=1>"
    assert watched.page.inner_text(".bl-compare-status") == f"No run {hostile} in this publication."
    assert watched.page.evaluate("() => window.pwned") is None
    assert watched.errors == []
    watched.page.close()


def test_the_claims_filter_is_kept_in_the_address_and_restored_from_it(browser: Any, example: str) -> None:
    """A verdict picked on the claims page is written to the address (#verdict=no-trial-data,
    history.replaceState); reloading that address shows the same rows, and "all" clears it."""
    watched = Watched(browser)
    watched.page.goto(f"{example}/claims/")
    watched.page.wait_for_function("() => document.querySelector('.bl-filter[data-bl-ready]')")
    visible = (
        "() => [...document.querySelectorAll('.bl-stack--ledger table tbody tr')].filter(r => !r.hidden)"
        ".map(r => r.querySelector('[data-bl-headline]').getAttribute('data-bl-headline'))"
    )
    everything = watched.page.evaluate(visible)
    button = "button[data-bl-verdict='no trial data']"
    count = int(watched.page.inner_text(button).removeprefix("no trial data (").removesuffix(")"))
    watched.page.click(button)
    assert watched.page.evaluate("() => location.hash") == "#verdict=no-trial-data"
    chosen = watched.page.evaluate(visible)
    assert chosen == ["no-trial-data"] * count and len(everything) > count > 0
    watched.page.reload()
    watched.page.wait_for_function("() => document.querySelector('.bl-filter[data-bl-ready]')")
    assert watched.page.evaluate(visible) == chosen
    pressed = watched.page.eval_on_selector(".bl-filter .md-button--primary", "b => b.getAttribute('data-bl-verdict')")
    assert pressed == "no trial data"
    watched.page.click("button[data-bl-verdict='all']")
    assert watched.page.evaluate("() => location.href").endswith("/claims/")  # no fragment for every claim
    assert watched.page.evaluate(visible) == everything
    assert watched.errors == []
    watched.page.close()


def test_the_compare_page_prints_no_interval_of_no_width(browser: Any, example: str) -> None:
    """Every trial of draft_tokens at concurrency 1 gave 430 in one run and 520 in the other: the
    page printed "+19.6% [+19.6%, +19.6%]" (a sum of five equal logs is not five times the log).
    Now the ratio is 520 / 430 and the interval cell says why it has none, as diff prints it."""
    a, b = "2026-11-29-testbed-nmax3", "2026-11-29-testbed-nmax4"
    repo = Path(__file__).resolve().parents[1]
    watched = Watched(browser)
    watched.page.goto(f"{example}/compare/?a={a}&b={b}")
    watched.page.wait_for_selector("table[data-bl-table='figures']")
    rows = watched.page.eval_on_selector_all(
        "table[data-bl-table='figures'] tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    expected = ["draft_tokens", "concurrency=1", "5 / 5", "+19.6%", "exact: every trial identical on both sides"]
    assert [*expected, "no direction declared"] in rows
    assert not [r for r in rows if r[4].startswith("[") and r[4].count(r[3]) == 2], "an interval of no width"
    printed = CliRunner().invoke(app, ["diff", a, b, "--repo", str(repo)], env={"COLUMNS": "400"}).stdout
    assert expected in [[cell.strip() for cell in line.split("│")[1:-1]] for line in printed.splitlines()]
    assert watched.errors == []
    watched.page.close()


# What a reader types, and a page it must find: reports are indexed from their HTML, run, claim
# and grid pages from their records (the plugin's own entries; the search plugin skips their HTML).
SEARCHED = {
    "GEMM": ["reports/wrong-idea/", "claims/shortlist-c8-matched/"],
    "2026-11-29-testbed-nmax2": ["runs/2026-11-29-testbed-nmax2/"],
    "DGX Spark": ["runs/2026-09-06-bailey-spark-full-vocab/", "runs/2026-09-06-bailey-spark-shortlist-16k/"],
    "misattributed": ["claims/grid-who-earned-it/"],
    "contradicted": ["claims/testbed-spec-vs-nodraft/"],
}


@pytest.mark.parametrize("query", SEARCHED)
def test_search_finds_runs_claims_and_grids_by_id_gpu_and_verdict(browser: Any, example: str, query: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{example}/", wait_until="networkidle")  # the search worker has read the index
    page.fill("input[data-md-component='search-query']", query)  # the whole query at once, then a key
    page.keyboard.press("End")  # that Material reads it by
    shown = "() => [...document.querySelectorAll('.md-search-result__item > a')].map(n => new URL(n.href).pathname.slice(1))"
    with contextlib.suppress(playwright.TimeoutError):  # the assertion below says what was found instead
        page.wait_for_function(f"want => want.every(p => ({shown})().includes(p))", arg=SEARCHED[query])
    found = page.evaluate(shown)
    page.close()
    assert set(SEARCHED[query]) <= set(found), found
    if query.startswith("2026-"):
        assert found[0] == SEARCHED[query][0]  # an id finds its own page first
