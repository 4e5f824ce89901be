"""The `benchledger` MkDocs plugin: regenerate the publication's pages as real
files on every build, keep generated run pages out of the navigation, and
watch runs/ while serving. Everything else is ordinary MkDocs."""

from __future__ import annotations

import gc
import hashlib
import html
import logging
import os
import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import jinja2
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import Files, InclusionLevel
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from ..analysis.audit import Checked
from ..errors import BenchledgerError
from ..forked import forked
from ..ledger.publication import (
    SITE_CHECKED_ENV,
    SITE_MARKER,
    layout_problems,
    site_folder_problems,
    theme_problems,
)
from ..ledger.records import RUNS_DIR
from ..render.assets import JAVASCRIPT, STYLESHEETS
from ..render.search_entries import search_entries
from ..render.templating import GENERATED_PREFIX
from .built_pages import TEMPLATE, cacheable, page_key, site_key
from .cache import BuildCache
from .collector import relaxed
from .files import mark_site
from .hand_written import hand_written
from .linked import KEPT, drop, link_generated, restamp, restorable, set_aside
from .links import broken_links
from .navigation import auto_nav
from .page_html import Converted, PageConverter, StubPage
from .page_store import encoded
from .pipeline import generate_site
from .plugin_config import PluginConfig, build_epoch, history_from, settings_from
from .search_index import add_search_entries
from .themed import KeptBytecode, themed
from .watching import QUIET_S, fast_watch, source_watches

log = logging.getLogger("mkdocs.plugins.benchledger")
# a run, claim or history series page, or a page of a paged index (runs/_pages/2.md,
# claims/_pages/within-noise-2/index.md): kept out of the nav
RUN_PAGE = re.compile(r"^(runs|claims|history)/([^/]+/index|_pages/[0-9a-z-]+(/index)?)\.md$")
USER_EPOCH = os.environ.get("SOURCE_DATE_EPOCH")  # a value the user set wins


class BenchledgerPlugin(BasePlugin[PluginConfig]):
    """Defines on_startup, so `mkdocs serve` keeps one instance (and its build cache) across rebuilds."""

    def __init__(self) -> None:
        self.cache: BuildCache | None = None
        self.checked: Checked | None = None  # the audit `benchledger build` made just before, for one build
        self.converter: PageConverter | None = None  # made per build, from the final markdown settings
        self.dirty = False
        self.known_only = False  # are the plugins all known (`built_pages.cacheable`)? set per build
        self.serving = False  # `serve`: the build cache is saved as it stops, not after every rebuild
        self.watcher: Any = None  # serve's watch of runs/ through the kernel's file events (`fast_watch`)
        self.written: set[str] = set()  # the files under docs_dir this build's generation wrote
        self.built_whole = False  # has this instance built the site once (every file linked)?
        # built page under the site -> the sha256 of what MkDocs wrote there, kept across `serve`'s
        # rebuilds: a dirty rebuild leaves the pages it does not build as they were
        self.digests: dict[str, str] = {}
        self.converted: dict[str, Converted] = {}  # generated page -> its HTML, until MkDocs asks for it

    def on_startup(self, *, command: str, dirty: bool) -> None:
        """Its presence keeps this instance alive across rebuilds; a dirty build (`serve --dirty`)
        converts only the pages MkDocs reads again, so the others' HTML is not forgotten."""
        self.dirty = dirty
        self.serving = command == "serve"

    def on_shutdown(self) -> None:
        """`serve` keeps the build cache in memory between rebuilds and saves it once, as it stops."""
        if self.watcher is not None:
            self.watcher.stop()
        if self.cache is not None:
            self.cache.save()

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        docs_dir = Path(config.docs_dir).resolve()
        self.settings = settings_from(self.config)
        self.cache = self.cache or BuildCache.for_publication(self.root)
        self.cache.serving = self.serving
        custom = config.theme.custom_dir
        overlaps = layout_problems(self.root, docs_dir, Path(config.site_dir))
        overlaps += theme_problems(self.root, Path(custom) if custom else None)
        if not overlaps and self.checked is None and os.environ.get(SITE_CHECKED_ENV) != "1":
            # a plain `mkdocs build` (benchledger build checked the folder already, with --force if given)
            overlaps = [
                replace(
                    p,
                    message=p.message.replace(
                        "Pass --force to empty it", "Empty it yourself (or run benchledger build --force)"
                    ),
                )
                for p in site_folder_problems(Path(config.site_dir), "site_dir")
            ]
        if overlaps:  # before MkDocs empties the site folder
            raise PluginError("benchledger found problems:\n" + "\n".join(map(str, overlaps)))
        try:
            checked, self.checked = self.checked, None  # a later rebuild (serve) reads the runs again
            history = history_from(self.config, config)
            generated = generate_site(
                self.root, docs_dir, self.settings, self.cache, checked=checked, save=False, history=history
            )
        except BenchledgerError as err:
            raise PluginError("benchledger found problems:\n" + str(err)) from None
        ledger, self.generated = generated.ledger, generated
        self.written = set(generated.written.written)  # the files this generation wrote
        followed = generated.history.series if generated.history is not None else ()
        self.search = search_entries(ledger, generated.evaluations, generated.grids, followed)
        log.info("benchledger: %s", generated.summary())
        for path in JAVASCRIPT:
            if path not in [str(s) for s in config.extra_javascript]:
                config.extra_javascript.append(path)
        if "md_in_html" not in config.markdown_extensions:  # generated pages fold details in <details>
            config.markdown_extensions.append("md_in_html")
        if "pymdownx.tilde" not in config.markdown_extensions:  # excluded trials are ~~struck through~~
            config.markdown_extensions.append("pymdownx.tilde")
            config.mdx_configs["pymdownx.tilde"] = {"subscript": False}
        for path in STYLESHEETS:
            if path not in config.extra_css:
                config.extra_css.append(path)
        if config.theme.name == "material" and config.theme.get("font") is not False:
            log.info("benchledger: theme.font set to false so no page loads Google Fonts")
            config.theme["font"] = False
        self.docs_rel = docs_dir.relative_to(self.root).as_posix()
        if not config.nav:  # reports appear as they are added, newest first; a written nav is kept
            config.nav = auto_nav(ledger, docs_dir, self.docs_rel)
        os.environ["SOURCE_DATE_EPOCH"] = USER_EPOCH or str(build_epoch(ledger))  # for MkDocs' sitemap
        # The ledger and the cache live until the build ends: the garbage collector need not walk
        # them on every collection MkDocs triggers (at 1,000 runs, 0.3 s of a build). Unfrozen after.
        gc.freeze()
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        """The site folder is marked as a site benchledger builds before MkDocs empties it (MkDocs
        keeps dot-files), so even a build that fails half-way leaves a folder `build --site-dir`
        may empty again without --force."""
        self.converter, self.converted = None, {}
        self.known_only = cacheable(config)
        self.deferring = self.known_only and not self.dirty  # generated pages' content read from the store in on_env
        self.contents: dict[str, str] = {}  # generated page -> its converted HTML's digest, while deferred
        self.unchanged: dict[str, str] = {}  # generated page -> the digest of the page the theme made of it
        self.keys: dict[str, str] = {}  # generated page -> its key, for the HTML the theme makes now
        site = Path(config.site_dir)
        self.kept: Path | None = None
        try:
            ours = (site / SITE_MARKER).is_file() and not site.is_symlink()  # a site benchledger built
            site.mkdir(parents=True, exist_ok=True)
            mark_site(site)
        except OSError as err:
            raise PluginError(f"benchledger: site_dir: {site} cannot be written ({err.strerror}); fix it") from None
        if ours and not self.dirty:  # MkDocs empties it next: unchanged linked files are set aside
            try:
                self.kept = set_aside(site)
            except OSError:  # what was not moved is emptied as before, and linked again
                self.kept = site / KEPT

    @event_priority(-75)  # after the search plugin has written its index
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """The search index gets the entries of run, claim and grid pages; every internal link of
        the built site is crawled; each broken one is a warning, so `build --strict` fails naming
        the page and the target. What `on_config` froze stays frozen until the end: a full
        collection here would walk the whole ledger and cache (0.2 s at 1,000 runs) to free nothing."""
        try:
            self.restore_epoch()
            if self.kept is not None:
                drop(self.kept)
            for file in self.files.documentation_pages():  # every page themed: their tables of contents
                if isinstance(file.page, StubPage):  # are read no more (a theme may draw every page's
                    file.page.toc = get_toc([])  # on each; 97,000 headings at 10,000 runs, 40 MB)
            add_search_entries(Path(config.site_dir), self.search, self.files)
            root = urlsplit(config.site_url or "/").path or "/"
            crawled = self.cache.crawled if self.cache is not None else None
            with relaxed():
                links = self.cache.links if self.cache is not None and self.serving else None
                broken = broken_links(Path(config.site_dir), root, crawled, self.digests, links)
            for link in broken:
                log.warning("benchledger: %s", link)
            self.built_whole = True
            if self.converter is not None and not self.dirty:
                self.converter.forget_others()
            if self.cache is not None:
                restamp(Path(config.docs_dir).resolve(), self.files, self.cache.written)
                if not self.serving:
                    self.cache.save()  # once per build, with the pages just crawled
        finally:
            gc.unfreeze()

    def on_build_error(self, *, error: Exception) -> None:
        """The cache is not saved: a generation cut short may have remembered pages it never wrote."""
        gc.unfreeze()
        self.restore_epoch()
        kept = getattr(self, "kept", None)
        if kept is not None:
            drop(kept)

    def restore_epoch(self) -> None:
        """SOURCE_DATE_EPOCH goes back to the user's value (or none): a later build or subprocess
        of the same process (serve, tests, another builder) must not take ours for the user's."""
        if USER_EPOCH is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = USER_EPOCH

    def on_nav(self, nav: Navigation, /, *, config: MkDocsConfig, files: Files) -> Navigation:
        """Every generated page not converted before, or written again by this generation, is
        converted now, ahead of MkDocs' reading of the pages one by one, by forked workers when
        there are many."""
        self.nav = nav
        self.converter = self.new_converter(config, files)
        remembered = self.converter.remembered
        # a page not written by this generation is most likely unchanged since it was converted:
        # `convert` reads it (as MkDocs does) and checks
        fresh = [f for f in files.documentation_pages() if f.src_uri not in remembered or f.src_uri in self.written]
        self.converter.prepare(fresh, config, files)
        return nav

    @event_priority(-100)  # after every other plugin's on_env, once every page's title is known
    def on_env(self, env: jinja2.Environment, /, *, config: MkDocsConfig, files: Files) -> jinja2.Environment:
        """A generated page whose key (`site.built_pages`) is the one it was built with before
        gets a template that renders nothing, and `on_post_page` puts its remembered HTML in place."""
        if self.cache is not None:  # compiled once, kept in the build cache
            env.bytecode_cache = KeptBytecode(self.cache.templates)
        converter = self.converter
        if converter is None or not self.deferring or env.loader is None:
            for name, digest in self.contents.items():  # (none unless deferring)
                self.page(files, name).content = converter.html(digest) if converter is not None else ""
            return env
        site = site_key(config, self.nav, files)
        todo: list[tuple[Page, str]] = []
        for name in sorted(converter.seen):
            file = files.get_file_from_path(name)
            if file is None or file.page is None or not file.inclusion.is_included():
                continue
            key = page_key(site, file.page, self.contents.get(name))
            built = converter.reusable(name, key)
            if built is not None:
                self.unchanged[name] = self.digests[file.dest_uri] = built
            else:
                todo.append((file.page, key))
        contents = self.contents
        for name, digest in contents.items():  # what the search plugin reads, in this process
            if name not in self.search:
                self.page(files, name).content = converter.html(digest)

        def content(page: Page) -> Page:
            """The page with the HTML the theme puts in it, read from the page store where it is
            themed (a worker: 11,000 pages are not all held here at 10,000 runs)."""
            name = page.file.src_uri
            if name in contents and name in self.search:
                page.content = converter.html(contents[name])
            return page

        pages = [page for page, _ in todo]
        if pages:  # compiled here, before a fork, not by every worker
            env.get_template("main.html")
        made = partial(themed, env, config, self.nav, files.documentation_pages())

        def theme(page: Page) -> str:
            digest = converter.store.put(made(content(page)))
            if page.file.src_uri in self.search:
                page.content = ""  # read for this page alone: a worker does not keep 5,000 of them
            return digest

        done = forked(theme, pages, what="pages in the theme")
        if done is None:  # MkDocs renders them in its turn
            for page in pages:
                content(page)
        outputs: list[str | None] = list(done) if done is not None else [None] * len(todo)
        for (page, key), output in zip(todo, outputs, strict=True):
            if output is None:  # MkDocs renders it, in its turn
                self.keys[page.file.src_uri] = key
            else:
                self.unchanged[page.file.src_uri] = self.digests[page.file.dest_uri] = output
                converter.built(page.file.src_uri, key, output)
        env.loader = jinja2.ChoiceLoader([jinja2.DictLoader({TEMPLATE: ""}), env.loader])
        for name in self.unchanged:
            self.page(files, name).meta["template"] = TEMPLATE
        return env

    @staticmethod
    def page(files: Files, name: str) -> Page:
        page = files.src_uris[name].page
        assert page is not None  # a page MkDocs read
        return page

    @event_priority(-100)  # the page as every plugin left it
    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str:
        name = page.file.src_uri
        if name in self.unchanged and self.converter is not None:
            return self.converter.html(self.unchanged.pop(name))
        key = self.keys.pop(name, None)
        if key is not None and self.converter is not None:
            digest = self.digests[page.file.dest_uri] = self.converter.store.put(output)
            self.converter.built(name, key, digest)
        elif output.strip():  # what MkDocs writes: the crawl need not read it back
            self.digests[page.file.dest_uri] = hashlib.sha256(encoded(output)).hexdigest()
        return output

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files:
        self.files = files
        for file in files:
            if RUN_PAGE.match(file.src_uri):
                file.inclusion = InclusionLevel.NOT_IN_NAV
        # chart specs and downloads: linked into the site, not copied; by a dirty rebuild (serve
        # --dirty), only those generation wrote, once this instance has built the site whole
        link_generated(files, self.written if self.built_whole else None)
        if self.kept is not None:  # folders of them unchanged since the last build are moved back whole
            restorable(self.kept, Path(config.site_dir), files)
        return files

    def on_page_markdown(self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        title = page.meta.get("title")
        if markdown.startswith(GENERATED_PREFIX):
            # MkDocs takes a title only from an H1 that opens the page; ours follows the mark.
            # The heading text is already escaped, so it is used as it is.
            heading = next((line[2:] for line in markdown.splitlines() if line.startswith("# ")), None)
            if heading:
                page.meta["title"] = heading
            if page.file.src_uri in self.search:  # indexed from its records in on_post_build
                page.meta["search"] = {"exclude": True}
            return self.convert(markdown, page, config, files)
        if isinstance(title, str):
            page.meta["title"] = html.escape(title)
        return hand_written(markdown, page, self.generated, self.settings, self.docs_rel)

    def convert(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """A generated page is converted here, once (or found converted by `on_nav`), and reaches
        MkDocs' Markdown as an empty stub; `on_page_content` puts its HTML in place."""
        if self.converter is None:
            self.converter = self.new_converter(config, files)
        self.converted[page.file.src_uri] = self.converter.convert(markdown, page, config, files)
        if type(page) is Page and cacheable(config):  # no other plugin adds to the stub
            page.__class__ = StubPage  # so it is not converted
        return ""

    def new_converter(self, config: MkDocsConfig, files: Files) -> PageConverter:
        if self.cache is None:
            return PageConverter(config, files)
        return PageConverter(config, files, self.cache.pages, self.cache.store)

    def on_page_content(self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        """A generated page's HTML in place of the empty stub's; or, when its theme output may be
        reused (`on_env` decides), nothing yet: `on_env` reads it from the page store only for
        a page that is rendered again or that the search plugin reads."""
        converted = self.converted.pop(page.file.src_uri, None)
        if converted is None or self.converter is None:
            return html
        page.links_to_anchors = converted.links_to_anchors(files)  # MkDocs checks them after every page is read
        page.toc = converted.toc
        # with only known plugins (none adds to it; MkDocs asks `in`), not a copy of 11,000 sets
        page.present_anchor_ids = cast(set[str], converted.anchors) if self.known_only else set(converted.anchors)
        if self.deferring:
            self.contents[page.file.src_uri] = converted.html
            return ""
        return self.converter.html(converted.html)

    def on_serve(
        self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Callable[..., Any]
    ) -> LiveReloadServer:
        """Watch runs/, and every source under docs_dir but the pages benchledger writes there:
        a build writing its own pages must not wake the watcher for a second, useless build.
        MkDocs polls what it watches every half second, taking a snapshot of the whole folder
        each time: for runs/ (4,000 files at 1,000 runs) 65 ms of a core, and a save waited a
        quarter second on average before its rebuild. runs/ is watched through the kernel's
        file events instead (`fast_watch`) where it can be."""
        self.watcher = fast_watch(server, self.root / RUNS_DIR)
        if self.watcher is not None:  # a save is seen at once: MkDocs' wait for quiet (0.1 s) can be shorter
            server.build_delay = min(server.build_delay, QUIET_S)
        docs = Path(config.docs_dir).resolve()
        server.unwatch(str(docs))
        for path, recursive in source_watches(docs):
            server.watch(str(path), recursive=recursive)
        return server
