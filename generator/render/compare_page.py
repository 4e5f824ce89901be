"""The compare page: a reader picks any two runs and sees what differs in their environment
and B / A with its interval for every shared figure, as `benchledger diff A B` prints it.

Nothing is pre-rendered per pair (a benchmark of 1,000 runs has half a million pairs): each
run publishes `compare.json` (its environment and per-trial values, `pairs.pair_data`), and
the bundled compare.js fetches the two chosen runs from this site and computes Welch's ratio
interval on the log scale. Its t quantiles come from scipy at build time (`pairs.t_table`),
interpolated linearly in 1/df (relative error under 1e-6)."""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup

from ..analysis.pairs import T_STEPS, pair_data, t_table
from ..analysis.stats import IDENTICAL_SIDES
from ..ledger.records import Ledger, Run
from . import text as t
from .templating import generated_mark, render

COMPARE = "compare"
RUN_DATA = "compare.json"  # beside each run's page
INLINE_RUNS = 500  # up to this many runs the pickers' options are in the page; past it (about 250 bytes
# a run in both pickers) compare.js fills them from runs.json, which lists every run anyway, so the
# page stays small (at 10,000 runs, 2.4 MB of options otherwise)


def _json(data: Any) -> bytes:
    return (json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode()


def run_data(run: Run) -> bytes:
    """runs/<id>/compare.json."""
    return _json(pair_data(run))


def compare_outputs(ledger: Ledger, confidence: float) -> dict[str, bytes]:
    """compare/index.md and compare/runs.json: the runs to pick from (newest first) and the t table."""
    runs = sorted(ledger.runs.values(), key=lambda r: (r.meta.date, r.id), reverse=True)
    listing = {
        "level": t.level(confidence),
        "t_steps": T_STEPS,
        "t": [round(q, 9) for q in t_table(confidence)],
        "identical": IDENTICAL_SIDES,  # what compare.js prints for a ratio of two constant sides
        "runs": [[r.id, r.meta.title, r.meta.benchmark] for r in runs],
    }
    example = runs[:2]
    page = render(
        "compare.md.j2",
        mark=Markup(generated_mark("the runs")),
        level=t.level(confidence),
        example=" ".join(r.id for r in reversed(example)) if len(example) == 2 else None,
        link=deep_link(*(r.id for r in reversed(example))) if len(example) == 2 else None,
        count=len(runs),
        options=run_options(runs if len(runs) <= INLINE_RUNS else []),
        fill=len(runs) > INLINE_RUNS,
    )
    return {f"{COMPARE}/index.md": page.encode(), f"{COMPARE}/runs.json": _json(listing)}


def run_options(runs: list[Run]) -> Markup:
    """The <option>s of both run pickers, newest first: each run's title and id as text, its id
    as the value (escaped: a title is the publisher's text), after an empty choice. compare.js
    writes the same options from runs.json when the page has none (past INLINE_RUNS runs)."""
    options = ['<option value="">pick a run</option>']
    options += [f'<option value="{t.attr(r.id)}">{t.text(r.meta.title)} ({t.text(r.id)})</option>' for r in runs]
    return Markup("\n".join(options))


def deep_link(a: str, b: str) -> Markup:
    """The page's own address with two runs picked: `?a=RUN&b=RUN`, which compare.js reads."""
    return Markup(f"?a={t.attr(t.path_url(a))}&amp;b={t.attr(t.path_url(b))}")
