"""The plugin's settings in mkdocs.yml, read as the CLI reads them, and the build's timestamp."""

from __future__ import annotations

import datetime as dt

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError

from ..analysis.comparison import Settings
from ..analysis.history_settings import HistorySettings
from ..errors import BenchledgerError
from ..ledger.records import Ledger


class PluginConfig(Config):
    """Each option unset means Settings' default (one place holds the defaults)."""

    min_effect = c.Optional(c.Type((int, float)))
    noise = c.Optional(c.Type((int, float)))
    confidence = c.Optional(c.Type((int, float)))
    history = c.Optional(c.Type(bool))
    history_along = c.Optional(c.Type(list))


def settings_from(config: PluginConfig) -> Settings:
    """The verdict parameters of the plugin configuration, read as the CLI reads them."""
    given = {"confidence": config.confidence, "min_effect": config.min_effect, "noise": config.noise}
    try:
        return Settings.parse(given, "mkdocs.yml")
    except BenchledgerError as err:
        raise PluginError(f"benchledger: {err}") from None


def history_from(config: PluginConfig, mkdocs: MkDocsConfig) -> HistorySettings:
    """The history settings of the plugin configuration, read as the CLI reads them."""
    given = {"history": config.history, "history_along": config.history_along}
    try:
        return HistorySettings.parse(given, "mkdocs.yml", site_url=mkdocs.site_url or None, site_name=mkdocs.site_name)
    except BenchledgerError as err:
        raise PluginError(f"benchledger: {err}") from None


def build_epoch(ledger: Ledger) -> int:
    """A build timestamp taken from the inputs (the newest run or report date), never the clock."""
    dates = [run.meta.date for run in ledger.runs.values()]
    dates += [r.meta.date for r in ledger.reports if r.meta.date is not None]
    newest = max(dates, default=dt.date(1970, 1, 1))
    return int(dt.datetime.combine(newest, dt.time(), dt.UTC).timestamp())
