"""A page a person wrote, with what benchledger adds to its Markdown: the front page's glance
panel where `<!-- at a glance -->` stands, and a report's sweep charts and its claims, grids and
limits panels. Generated pages are converted by `page_html` instead."""

from __future__ import annotations

from mkdocs.structure.pages import Page

from ..analysis.comparison import Settings
from ..render.attribution_pages import grids_panel
from ..render.glance import glance, marker_line, place
from ..render.report_panels import insert_panel, limits_panel, report_panel
from ..render.sweeps import insert_sweeps
from .pipeline import Generated


def hand_written(markdown: str, page: Page, generated: Generated, settings: Settings, docs_rel: str) -> str:
    """The page's Markdown with its panels in place (`docs_rel`: docs_dir under the repository)."""
    marker = marker_line(markdown)
    if marker is not None:
        up = "../" * page.file.src_uri.count("/")
        panel = glance(generated.ledger, generated.evaluations, generated.receipts, generated.grids, up)
        markdown = place(markdown, marker, panel)
    path = f"{docs_rel}/{page.file.src_uri}"
    report = next((r for r in generated.ledger.reports if r.path == path), None)
    if report is None:
        return markdown
    if report.path in generated.sweeps:
        up = "../" * page.url.count("/")  # from the page's URL: the charts' data-bl-spec is not rewritten
        markdown = insert_sweeps(markdown, generated.sweeps[report.path], settings.confidence, up)
    evaluations = [generated.evaluations[claim.id] for claim in report.meta.claims]
    grids = [g for g in generated.grids if g.report == report.slug]
    up = "../" * (report.slug.count("/") + 1)
    panels = report_panel(evaluations, report.slug) + grids_panel(grids, up) + limits_panel(report.meta.limits)
    return insert_panel(markdown, panels)
