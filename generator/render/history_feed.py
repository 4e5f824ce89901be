"""history/feed.xml: an Atom feed (RFC 4287) of the publication's changes, newest first.

Each entry's id is a `tag:` URI (RFC 4151) made only of what the change is (the date of its
later run, its series' folder and its two runs), so it never changes when the site moves or
`site_url` is set. Links are absolute under `site_url` when it is set, else relative to the
feed. No clock is read: the feed's `updated` is its newest entry's date. Every text is escaped
for XML, and characters XML 1.0 cannot hold are dropped."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from ..analysis.history import Change, Followed
from ..ledger.records import Run
from .history_pages import HISTORY, dated_changes, series_slug
from .history_words import condition_text, moved_text, ratio_text, title

FEED = f"{HISTORY}/feed.xml"
AUTHORITY = "benchledger"  # the tag: authority; a fixed name, so ids survive a move of the site
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(value: str) -> str:
    return escape(_NOT_XML.sub("", value))


def _attr(value: str) -> str:
    return quoteattr(_NOT_XML.sub("", value))


def entry_id(slug: str, c: Change, date: str) -> str:
    """tag:benchledger,DATE:history/SLUG/BEFORE/AFTER (run ids percent-encoded; a latest-vs-best
    comparison ends in /latest-vs-best)."""
    runs = f"{quote(c.before, safe='')}/{quote(c.after, safe='')}"
    kind = "" if c.kind == "step" else "/latest-vs-best"
    return f"tag:{AUTHORITY},{date}:{HISTORY}/{slug}/{runs}{kind}"


def feed_id(name: str) -> str:
    """The feed's own id: tag:benchledger,1970-01-01:history/feed/SITE-NAME."""
    return f"tag:{AUTHORITY},1970-01-01:{HISTORY}/feed/{quote(name, safe='')}"


def history_feed(followed: Sequence[Followed], runs: Mapping[str, Run], site_url: str | None, name: str) -> bytes:
    """The feed's bytes; `name` is the site's name (its title), `site_url` its address if set."""
    base = site_url.rstrip("/") + "/" if site_url else None
    here = f"{base}{HISTORY}/" if base else ""
    entries = []
    dated = dated_changes(followed, runs)
    for f, c in dated:
        date = str(runs[c.after].meta.date)
        slug = series_slug(f.series)
        summary = (
            f"{title(f.series)} at {condition_text(f.series)}: {c.verdict}, {ratio_text(c)} from run {c.before} "
            f"to run {c.after}. Keys that moved: {moved_text(c)}."
        )
        summary += "".join(f" {n.text} ({n.file})." for n in c.annotations)
        summary += f" Accepted by {c.accepted.file}: {c.accepted.text}." if c.accepted is not None else ""
        headline = f"{c.verdict}: {title(f.series)} at {condition_text(f.series)}, {ratio_text(c)}"
        entries.append(
            "  <entry>\n"
            f"    <id>{_x(entry_id(slug, c, date))}</id>\n"
            f"    <title>{_x(headline)}</title>\n"
            f"    <updated>{date}T00:00:00Z</updated>\n"
            f'    <link rel="alternate" type="text/html" href={_attr(f"{here}{quote(slug)}/")}/>\n'
            f"    <summary>{_x(summary)}</summary>\n"
            "  </entry>\n"
        )
    newest = str(runs[dated[0][1].after].meta.date) if dated else "1970-01-01"  # no clock is read
    head = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"  <id>{_x(feed_id(name))}</id>\n"
        f"  <title>{_x(f'{name}: changes')}</title>\n"
        f"  <updated>{newest}T00:00:00Z</updated>\n"
        f"  <author><name>{_x(name)}</name></author>\n"
        f'  <link rel="self" type="application/atom+xml" href={_attr(f"{here}feed.xml")}/>\n'
        f'  <link rel="alternate" type="text/html" href={_attr(here or "./")}/>\n'
    )
    return (head + "".join(entries) + "</feed>\n").encode()
