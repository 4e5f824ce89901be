"""History in a real browser: a series page draws its chart without errors or outside
requests, never scrolls sideways at 1280 or 390 px, and is photographed at both widths
($BENCHLEDGER_SCREENSHOTS); the index and the Changes page fit a phone too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_browser import CHROMIUM, Watched, browser, build, screenshots, serve  # noqa: F401 (fixtures)
from test_history_pages import FIRST, NOTES, _files

from helpers import write_tree

pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
MKDOCS = """\
site_name: history fixture
docs_dir: site_src
theme: {name: material, font: false, features: [navigation.instant]}
plugins: [search, benchledger]
"""


@pytest.fixture(scope="module")
def history_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    files = {**_files(), "history/known.yaml": NOTES, "mkdocs.yml": MKDOCS, "site_src/index.md": "# Home\n"}
    site = build(write_tree(tmp_path_factory.mktemp("history-browser") / "pub", files))
    url, httpd = serve(site)
    yield url
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_series_page_draws_its_history_on_a_desktop_and_a_phone(
    browser: Any,  # noqa: F811
    history_site: str,
    width: int,
    screenshots: Path,  # noqa: F811
) -> None:
    watched = Watched(browser, width)
    watched.page.goto(f"{history_site}/history/{FIRST}/")
    assert watched.charts_drawn() == 1
    marks = watched.page.eval_on_selector_all("div.bl-chart svg path[aria-roledescription]", "ns => ns.length")
    assert marks > 0
    watched.page.screenshot(path=str(screenshots / f"history-series-{width}.png"), full_page=True)
    wide = watched.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, wide
    assert watched.errors == [] and watched.hosts <= {"127.0.0.1:" + history_site.rsplit(":", 1)[1]}
    for path in ("history/", "history/changes/"):
        watched.page.goto(f"{history_site}/{path}")
        watched.page.screenshot(path=str(screenshots / f"history-{path.strip('/').replace('/', '-')}-{width}.png"))
        assert watched.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 1, path
    assert watched.errors == []
    watched.page.close()
