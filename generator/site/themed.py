"""Generated pages put in the theme's template by the plugin, as MkDocs would: `themed` renders one
page as MkDocs' `_build_page` does (a forked worker renders many, `site.plugin.on_env`), and
`KeptBytecode` keeps the theme's compiled templates in the build cache."""

from __future__ import annotations

from collections.abc import Sequence

import jinja2
import jinja2.bccache
from mkdocs.commands.build import get_context
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page


class KeptBytecode(jinja2.BytecodeCache):
    """The theme's templates compiled once and kept (the build cache's `templates`), so a rebuild
    does not compile them again. Jinja checks each against its template's source before using it."""

    def __init__(self, store: dict[str, bytes]) -> None:
        self.store = store

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = self.store.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.store[bucket.key] = bucket.bytecode_to_string()


def themed(
    env: jinja2.Environment, config: MkDocsConfig, nav: Navigation, doc_files: Sequence[File], page: Page
) -> str:
    """The page in the theme's template, as MkDocs' `_build_page` renders it: the page active,
    its context, the plugins' `on_page_context` (with only known plugins, `built_pages.cacheable`:
    the search plugin's, which may change the content it renders). Run in a forked worker
    only, where what the search plugin indexes is dropped: MkDocs' own turn indexes the page.
    What `on_post_page` then does is `BenchledgerPlugin.on_post_page`'s: it puts this in place."""
    config._current_page = page
    page.active = True
    try:
        context = get_context(nav, doc_files, config, page)
        template = env.get_template(page.meta.get("template", "main.html"))
        context = config.plugins.on_page_context(context, page=page, config=config, nav=nav)
        return template.render(context)
    finally:
        page.active = False
        config._current_page = None
