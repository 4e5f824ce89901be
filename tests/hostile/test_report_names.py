"""A report's file name is untrusted like its front matter: it names links on claim pages, grid
pages and the front page, where Markdown would otherwise read it as a link or raw HTML."""

from __future__ import annotations

import re
from pathlib import Path

from builders import claim, repo_with
from helpers import cli

NAME = "s) [j](javascript:alert(31)) <img src=x onerror=alert(32)> ("


def test_a_hostile_report_file_name_stays_text_and_its_link_resolves(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim()])
    reports = root / "site_src" / "reports"
    (reports / "seed.md").rename(reports / f"{NAME}.md")
    code, out = cli("build", "--strict", "--repo", str(root))  # --strict: every internal link resolves
    assert code == 0, out
    page = (root / "site" / "claims" / "shortlist-c8" / "index.html").read_text()
    assert "onerror=" not in page.replace("onerror=alert(32)&gt;", "") and "<img src=x" not in page
    assert not re.search(r"href=\"javascript:", page)
    links = re.findall(r'<a href="([^"]*reports/[^"]*)"', page)
    assert links and all(link.startswith("../../reports/s%29%20%5Bj%5D%28javascript") for link in links), links
    built = root / "site" / "reports"
    assert [p.name for p in built.iterdir() if p.is_dir()] == [NAME]
