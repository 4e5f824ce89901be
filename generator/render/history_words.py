"""The words the History pages share, and the cells of their change tables: a series' title,
condition and what sets it apart, a point's figure, a change's ratio, verdict and moved keys
(`render.history_pages`, `render.history_feed` and the search entries use them)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from ..analysis.history import Change, Followed
from ..analysis.series import Series
from ..analysis.wording import pct
from ..format.conditions import condition_label
from . import text as t


def title(series: Series) -> str:
    return f"{series.benchmark}: {series.metric}"


def condition_text(series: Series) -> str:
    return condition_label(series.condition) if series.condition else "one condition"


def distinct(series: Series) -> str:
    """What sets the series apart from the others of its benchmark, metric and condition: its
    value of each key that split them, and its machine."""
    env = dict(series.environment)
    keys = [s.key for s in series.splits]
    shown = [f"{k}={t.recorded(env.get(k, 'null'))}" for k in dict.fromkeys(keys)]
    machine = env.get("host.name")
    return "; ".join(([f"host {machine}"] if machine else []) + shown)


def figure(mean: float, low: float | None, high: float | None, n: int, unit: str | None, level: str) -> str:
    """'36.1 tok/s [35.8, 36.4], n = 5' (a point's value); a reported figure says so."""
    shown = f"{t.number(mean)} {unit}".rstrip() if unit else t.number(mean)
    if n == 0:
        return f"{shown} (reported, trials not reported)"
    if low is None or high is None or low == high:
        return f"{shown}, n = {n:,}"
    return f"{shown} [{t.number(low)}, {t.number(high)}] ({level} CI), n = {n:,}"


def ratio_text(c: Change) -> str:
    """'−10.0% [−12.1%, −7.9%]': the change after / before as a percent, with its 95% interval."""
    return t.minus(f"{pct(c.ratio)} [{pct(c.low)}, {pct(c.high)}]")


def moved_text(c: Change) -> str:
    """The keys that moved between the runs around a change: 'software.engine_version b6116 → b6117'."""
    if not c.moved:
        return "no recorded key differs"
    return "; ".join(f"{m.key} {t.recorded(m.before)} → {t.recorded(m.after)}" for m in c.moved)


def kind_text(c: Change) -> str:
    return "step" if c.kind == "step" else "latest against the best earlier segment"


def latest_change(f: Followed) -> Change | None:
    """The change whose later run comes last in the series (a step before a latest-vs-best)."""
    position = {run: i for i, p in enumerate(f.series.points) for run in p.runs}
    ordered = sorted(f.changes, key=lambda c: (position[c.after], c.kind != "step"))
    return ordered[-1] if ordered else None


def run_link(run: str, up: str) -> Markup:
    return t.link(run, f"{up}runs/{t.path_url(run)}/")


def _pair(c: Change, up: str) -> Markup:
    """The two runs around a change, each linked, and the link to their compare page."""
    compare = f"{up}compare/?a={t.attr(t.path_url(c.before))}&amp;b={t.attr(t.path_url(c.after))}"
    return Markup(
        f'{run_link(c.before, up)} → {run_link(c.after, up)}<br><span class="bl-sub">'
        f'<a href="{compare}">compare these two runs</a></span>'
    )


CHANGE_COLUMNS = ("Runs", "Verdict", "After / before", "Keys that moved")


def change_rows(changes: Sequence[Change], up: str) -> list[tuple[object, ...]]:
    return [(_pair(c, up), verdict_cell(c), ratio_text(c), moved_cell(c)) for c in changes]


def verdict_cell(c: Change) -> Markup:
    """The verdict in bold, what it compared, and the history file that accepts it, if one does."""
    cell = Markup(f"<strong>{t.text(c.verdict)}</strong><br>") + Markup(
        f'<span class="bl-sub">{t.text(kind_text(c))}</span>'
    )
    if c.accepted is not None:
        cell += Markup(f'<br><span class="bl-sub">{t.text(accepted_text(c))}</span>')
    return cell


def accepted_text(c: Change) -> str:
    assert c.accepted is not None
    return f"accepted by {c.accepted.file}: {c.accepted.text}"


def moved_cell(c: Change) -> Markup:
    """The keys that moved, then each annotation at the change's first run after."""
    notes = "".join(f'<br><span class="bl-sub">{t.text(f"{n.text} ({n.file})")}</span>' for n in c.annotations)
    return t.text(moved_text(c)) + Markup(notes)
