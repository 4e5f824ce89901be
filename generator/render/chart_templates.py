"""Chart templates: each chart's Vega-Lite spec built once per builder and labels, with each
run's rows (and an axis domain and ticks) put in place of marks, so Altair is imported and run
only for a kind of chart the build has not drawn before."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..format.signed import in_range

DATA = "table"
DOMAIN_MARK = (0.000123456, 98765.4321)  # stands for the axis domain in the cached template
TICKS_MARK = (0.000234567, 87654.321)  # stands for the axis ticks in the cached template


def _finite(value: Any) -> Any:
    """JSON has no Infinity or NaN: a non-finite number, or one past 1e300 (a bound out of range,
    `format.signed.in_range`), is drawn as missing."""
    return None if isinstance(value, float) and not in_range(value) else value


@dataclass
class ChartTemplates:
    """Each chart's Vega-Lite spec without data, built once per builder and labels. Whoever
    renders owns one and passes it down (the build cache keeps it between builds, so a build
    that draws no new kind of chart never imports Altair)."""

    known: dict[str, str] = field(default_factory=dict)  # "<builder> <labels as JSON>" -> its spec
    compact: dict[str, str] = field(default_factory=dict)  # the same key -> its spec as `spec` writes it

    def template(self, builder: Callable[..., Any], *labels: Any) -> str:
        """The Vega-Lite spec of `builder(*labels)` without data."""
        key = _key(builder, labels)
        known = self.known.get(key)
        if known is None:
            known = self.known[key] = json.dumps(builder(*labels).to_dict(validate=True))
        return known

    def spec(
        self,
        builder: Callable[..., Any],
        labels: tuple[Any, ...],
        rows: Sequence[dict[str, Any]],
        domain: tuple[float, float] | None = None,
        ticks: Sequence[float] | None = None,
    ) -> bytes:
        """The chart's Vega-Lite JSON with its rows inlined (the page never fetches data), and the
        axis domain and ticks put in place of DOMAIN_MARK and TICKS_MARK (so one template serves
        every domain). Keys sorted, no spaces: the template is written so once, and the rows
        take the place of a mark."""
        key = _key(builder, labels)
        text = self.compact.get(key)
        if text is None:
            template = {**json.loads(self.template(builder, *labels)), "datasets": _ROWS_MARK}
            text = self.compact[key] = _compact(template)
        if domain is not None:
            text = text.replace(_DOMAIN_TEXT, _compact(list(domain)))
        if ticks is not None:
            text = text.replace(_TICKS_TEXT, _compact(list(ticks)))
        try:
            if not all(in_range(v) for row in rows for v in row.values() if isinstance(v, float)):
                raise ValueError("out of range")
            data = json.dumps({DATA: rows}, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except ValueError:  # a non-finite number or one out of range: drawn as missing
            data = _compact({DATA: [{k: _finite(v) for k, v in row.items()} for row in rows]})
        return text.replace(_ROWS_TEXT, data, 1).encode()


def _key(builder: Callable[..., Any], labels: tuple[Any, ...]) -> str:
    """A chart template's key: its builder and labels (`ChartTemplates.known` and `.compact`)."""
    return f"{builder.__name__} {json.dumps(labels)}"


_ROWS_MARK = "benchledger: the chart's rows go here"


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


_ROWS_TEXT, _DOMAIN_TEXT, _TICKS_TEXT = _compact(_ROWS_MARK), _compact(list(DOMAIN_MARK)), _compact(list(TICKS_MARK))
