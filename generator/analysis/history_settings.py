"""What a publication asks of history: whether it is computed at all (`history`, default on)
and which keys beyond `series.ALONG` move along a series rather than define it
(`history_along`). Read from mkdocs.yml's plugin settings, by the plugin and the CLI alike."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import BenchledgerError, Problem
from .series import ALONG

DOTTED = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_][A-Za-z0-9_\-]*)*$")


@dataclass(frozen=True)
class HistorySettings:
    enabled: bool = True
    along: tuple[str, ...] = ()  # the publication's own along-keys, beside series.ALONG
    site_url: str | None = None  # mkdocs.yml's site_url: the feed's links are absolute under it
    site_name: str = "benchledger"  # mkdocs.yml's site_name: the feed's title

    @property
    def along_keys(self) -> tuple[str, ...]:
        """Every along-key: the default ones, then the publication's."""
        return (*ALONG, *(k for k in self.along if k not in ALONG))

    @classmethod
    def parse(
        cls,
        given: Mapping[str, object],
        where: str,
        prefix: str = "plugins.benchledger.",
        *,
        site_url: str | None = None,
        site_name: str = "benchledger",
    ) -> HistorySettings:
        """`history` (true or false) and `history_along` (a list of dotted keys) of `given`
        (missing or None: the defaults), or a BenchledgerError naming the file, the field, the
        value's kind and the fix (never the repr of a structure: YAML aliases make it any size)."""
        enabled = given.get("history")
        if enabled is not None and not isinstance(enabled, bool):
            raise _error(where, prefix + "history", f"{_kind(enabled)} is not true or false; e.g. history: false")
        along = given.get("history_along")
        if along is None:
            along = []
        if not isinstance(along, list):
            raise _error(
                where, prefix + "history_along", f"{_kind(along)} is not a list of keys; e.g. [software.commit_date]"
            )
        for i, key in enumerate(along):
            if not isinstance(key, str) or not DOTTED.match(key):
                why = f"{_kind(key)} is not a dotted key such as setup.model_revision"
                raise _error(where, f"{prefix}history_along[{i}]", why)
        return cls(
            enabled=True if enabled is None else enabled, along=tuple(along), site_url=site_url, site_name=site_name
        )


def _kind(value: object) -> str:
    if isinstance(value, str):
        return repr(value[:40])
    if isinstance(value, bool | int | float):
        return repr(value)
    return f"a {type(value).__name__}"


def _error(where: str, field: str, message: str) -> BenchledgerError:
    return BenchledgerError(Problem(file=where, field=field, message=message))
