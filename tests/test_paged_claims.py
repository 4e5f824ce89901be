"""A publication of many claims: the claims index pages through them and gives each verdict pages
of its own (a filter on one page would count that page only), and a report's panel lists its
first claims after counting all of them (issue 36: no page over 300 KB at 1,000 claims)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from helpers import generate

EXAMPLE = Path(__file__).parents[1]  # this repository's own publication: 15 claims, 6 verdicts
HEADLINE = re.compile(r'data-bl-headline="([^"]+)"')
CLAIM_LINK = re.compile(r'<td data-label="Claim"><a href="(?:\.\./\.\./)?([^"/]+)/">')


@pytest.fixture(scope="module")
def judged() -> tuple[dict[str, bytes], dict[str, str]]:
    """The example's pages with the index paged at 4 claims, and each claim's verdict (headline)."""
    from generator.analysis.audit import audit
    from generator.analysis.claims import evaluate_publication
    from generator.analysis.comparison import Settings
    from generator.render import claims_index

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claims_index, "PER_PAGE", 4)
        pages = generate(EXAMPLE)
    checked = audit(EXAMPLE, stale_is_error=False)
    evaluations, _ = evaluate_publication(checked.ledger, Settings(), {}, {})
    return pages, {claim_id: ev.headline for claim_id, ev in evaluations.items()}


def _rows(page: bytes) -> list[tuple[str, str]]:
    """Each row of a claims table: (claim id, verdict)."""
    text = page.decode()
    body = text[text.index("<tbody>") : text.index("</tbody>")]
    rows = body.split("</tr>")[:-1]
    return [(CLAIM_LINK.findall(r)[0], HEADLINE.findall(r)[0].replace("&#45;", "-").replace("-", " ")) for r in rows]


def test_up_to_a_page_of_claims_the_index_is_one_page_filtered_by_its_buttons() -> None:
    pages = generate(EXAMPLE)
    assert [k for k in pages if k.startswith("claims/_pages/")] == []
    index = pages["claims/index.md"].decode()
    assert (
        '<button type="button" class="md-button md-button--primary" id="verdict=all" data-bl-verdict="all">all (15)</button>'
        in index
    )
    assert "bl-filter-links" not in index and len(_rows(pages["claims/index.md"])) == 15


def test_past_a_page_every_claim_is_listed_once_and_each_verdict_on_pages_of_its_own(
    judged: tuple[dict[str, bytes], dict[str, str]],
) -> None:
    pages, verdicts = judged
    counts = Counter(verdicts.values())
    assert counts == {
        "no trial data": 6,
        "supported": 4,
        "contradicted": 2,
        "inconclusive": 1,
        "misattributed": 1,
        "overstated": 1,
    }
    made = sorted(k for k in pages if k.startswith("claims/_pages/"))
    assert made == [
        "claims/_pages/2/index.md",
        "claims/_pages/3/index.md",
        "claims/_pages/4/index.md",
        "claims/_pages/contradicted/index.md",
        "claims/_pages/inconclusive/index.md",
        "claims/_pages/misattributed/index.md",
        "claims/_pages/no-trial-data-2/index.md",
        "claims/_pages/no-trial-data/index.md",
        "claims/_pages/overstated/index.md",
        "claims/_pages/supported/index.md",
    ]
    every = ["claims/index.md", "claims/_pages/2/index.md", "claims/_pages/3/index.md", "claims/_pages/4/index.md"]
    listed = [row for path in every for row in _rows(pages[path])]
    assert [len(_rows(pages[path])) for path in every] == [4, 4, 4, 3]
    assert sorted(listed) == sorted(verdicts.items())  # each claim once, under the verdict it has
    for verdict, n in counts.items():
        slug = verdict.replace(" ", "-")
        own = [f"claims/_pages/{slug}/index.md"] + ([f"claims/_pages/{slug}-2/index.md"] if n > 4 else [])
        rows = [row for path in own for row in _rows(pages[path])]
        assert sorted(rows) == sorted((c, v) for c, v in verdicts.items() if v == verdict)
    # the same counts on every page, the page's own choice in bold, every other a link
    second = pages["claims/_pages/2/index.md"].decode()
    assert (
        '<p class="bl-filter-links">Show: <strong aria-current="page">all &#40;15&#41;</strong> · '
        '<a href="../../_pages/contradicted/" data-bl-verdict="contradicted">contradicted &#40;2&#41;</a> · '
    ) in second
    nothing = pages["claims/_pages/no-trial-data-2/index.md"].decode()
    assert "# Claims: no trial data, page 2 of 2\n" in nothing.replace("&#58;", ":")
    assert '<a href="../../" data-bl-verdict="all">all &#40;15&#41;</a>' in nothing
    assert '<strong aria-current="page">no trial data &#40;6&#41;</strong>' in nothing
    assert "Only the 6 claims whose verdict is **no trial data**, of 15 claims in this\npublication's" in nothing
    assert "Claims 5–6 of 6 · page [1](../../_pages/no-trial-data/index.md) · **2**\n" in nothing
    assert (
        "Claims 5–8 of 15 · page [1](../../index.md) · **2** · [3](../../_pages/3/index.md) · "
        "[4](../../_pages/4/index.md) · [next](../../_pages/3/index.md)\n"
    ) in second
    assert 'data-bl-verdict="all">all' not in pages["claims/index.md"].decode()  # bold there, not a link


def test_the_front_page_links_each_verdict_to_its_pages_once_the_index_is_paged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from generator.analysis.audit import audit
    from generator.analysis.claims import evaluate_publication
    from generator.analysis.comparison import Settings
    from generator.render import claims_index
    from generator.render.glance import glance

    checked = audit(EXAMPLE, stale_is_error=False)
    evaluations, grids = evaluate_publication(checked.ledger, Settings(), {}, {})
    one = glance(checked.ledger, evaluations, {}, grids, "")
    assert "(claims/index.md#verdict=no-trial-data)" in one and "_pages" not in one
    monkeypatch.setattr(claims_index, "PER_PAGE", 14)
    paged = glance(checked.ledger, evaluations, {}, grids, "")
    assert "#verdict=" not in paged
    assert re.findall(r"\]\((claims/_pages/[a-z-]+/index\.md)\)", paged) == [
        "claims/_pages/supported/index.md",
        "claims/_pages/contradicted/index.md",
        "claims/_pages/overstated/index.md",
        "claims/_pages/misattributed/index.md",
        "claims/_pages/inconclusive/index.md",
        "claims/_pages/no-trial-data/index.md",
    ]


def test_a_report_of_more_claims_than_its_panel_lists_counts_every_one() -> None:
    from generator.analysis.audit import audit
    from generator.analysis.claims import evaluate_publication
    from generator.analysis.comparison import Settings
    from generator.render.report_panels import report_panel

    checked = audit(EXAMPLE, stale_is_error=False)
    evaluations, _ = evaluate_publication(checked.ledger, Settings(), {}, {})
    [report] = [r for r in checked.ledger.reports if r.slug == "play-1-testbed"]
    mine = [evaluations[c.id] for c in report.meta.claims]
    assert len(mine) == 6
    full = report_panel(mine, report.slug)
    assert "This report makes" not in full and full.count("](../claims/") == 6
    cut = report_panel(mine, report.slug, most=4)
    assert (
        "This report makes 6 claims: 1 contradicted, 1 overstated, 1 inconclusive, 3 supported. The panel lists 4 "
        "of them, those that do not hold first, each verdict in the report's order. Every claim has its own page, "
        "and [the claims index](../claims/index.md) lists them all, by verdict too."
    ) in cut
    listed = re.findall(r"\]\(\.\./claims/([^/]+)/index\.md\)", cut)
    order = ["contradicted", "overstated", "inconclusive", "supported"]
    expected = sorted(mine, key=lambda ev: order.index(ev.headline))[:4]  # stable: the report's order within
    assert listed == [ev.claim.id for ev in expected]
    assert [ev.headline for ev in expected] == ["contradicted", "overstated", "inconclusive", "supported"]
    assert expected[3].claim.id == next(ev.claim.id for ev in mine if ev.headline == "supported")
