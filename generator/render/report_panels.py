"""What the plugin adds to a report page: the panel of its claims (statement, verdict, effect,
flags), its limits, and where they go in the report's Markdown."""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.claims import Evaluation
from . import text as t
from .glance import HEADLINES
from .verdict_text import effect, flags, verdict_badges

PANEL_ROWS = 200  # claims a report's panel lists; past it the panel counts them all and lists some


def report_panel(evaluations: Sequence[Evaluation], slug: str = "", most: int | None = None) -> str:
    """The claims panel of a report page: statement, verdict and effect of each claim. Links
    climb out of the report's own folder (reports/ or a sub-folder of it). A report of more than
    `most` claims lists `most` of them after a line that counts every claim by verdict: those
    that do not hold first (contradicted, overstated, ... in the front page's order), supported
    ones last, each verdict in the report's order; the line links each verdict's pages of the
    claims index. Reordering the front matter cannot push a contradicted claim off the panel
    while a supported one stays."""
    if not evaluations:
        return ""
    most = PANEL_ROWS if most is None else most
    up = "../" * (slug.count("/") + 1)
    more = ""
    if len(evaluations) > most:
        order = {v: i for i, v in enumerate((*HEADLINES[1:], HEADLINES[0]))}  # supported last
        counts: dict[str, int] = {}
        for ev in evaluations:
            counts[ev.headline] = counts.get(ev.headline, 0) + 1
        ranked = sorted(counts, key=lambda v: (order.get(v, len(order)), v))
        tally = ", ".join(f"{counts[v]:,} {t.text(v)}" for v in ranked)
        evaluations = sorted(evaluations, key=lambda ev: order.get(ev.headline, len(order)))[:most]
        more = (
            f"This report makes {sum(counts.values()):,} claims: {tally}. The panel lists {most:,} of them, "
            "those that do not hold first, each verdict in the report's order. Every claim has its own page, "
            f"and [the claims index]({up}claims/index.md) lists them all, by verdict too.\n\n"
        )
    rows = "".join(
        f"| [{t.text(ev.claim.statement)}]({up}claims/{ev.claim.id}/index.md) | {verdict_badges(ev)} | "
        f"{t.text(effect(ev))} | {t.text(flags(ev))} |\n"
        for ev in evaluations
    )
    return (
        f"\n\n**Claims in this report** ([how verdicts are computed]({up}methods.md))\n\n"
        + more
        + '<div class="bl-stack bl-stack--panel" markdown="1">\n\n'
        "| Claim | Verdict | Effect | Flags |\n| --- | --- | --- | --- |\n" + rows + "\n</div>\n"
    )


def limits_panel(limits: Sequence[str]) -> str:
    """The report's own `limits:`, shown on the report page beside its claims."""
    if not limits:
        return ""
    items = "".join(f"- {t.text(limit)}\n" for limit in limits)
    return f"\n\n**Limits of this report**\n\n{items}\n"


def insert_panel(markdown: str, panel: str) -> str:
    """Put the panel where `<!-- claims -->` stands, else after the first H1, else on top."""
    if "<!-- claims -->" in markdown:
        return markdown.replace("<!-- claims -->", panel, 1)
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join([*lines[: i + 1], panel, *lines[i + 1 :]])
    return panel + markdown
