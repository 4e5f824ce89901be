"""A generated page whose theme output cannot have changed is not rendered through the theme
again: the build cache keeps each generated page's final HTML, keyed by everything the theme's
template reads of it and of the site, and the plugin writes it in place.

The key holds the page (URL, title, meta, HTML, table of contents, its neighbours in the nav),
the whole nav (titles and URLs, read once every page's title is known), the site's files, the
theme (its settings, and the size and modification time of every file of its folders and of
custom_dir, as MkDocs' own dirty builds judge a file, but the icons of an installed Material,
whose version the key holds), the site's settings the
templates read, the build date MkDocs hands them and the versions of MkDocs and Material. Other
plugins may change a page's template context in ways no key can hold, so the cache is used only
when the publication's plugins are benchledger's, the search plugin and MkDocs' own: with any
other plugin every page is rendered as before.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

RememberedOutput = dict[str, tuple[str, str]]  # generated page -> (its key, the HTML MkDocs wrote)
TEMPLATE = "benchledger-unchanged.html"  # renders nothing: the page's remembered HTML replaces it
KNOWN_PLUGINS = {"search", "material/search", "benchledger"}
SETTINGS = (
    "site_name", "site_url", "site_description", "site_author", "repo_url", "repo_name", "edit_uri",
    "copyright", "extra", "extra_css", "extra_javascript", "use_directory_urls", "markdown_extensions",
)  # fmt: skip


def cacheable(config: MkDocsConfig) -> bool:
    """May theme output be reused under this configuration (its plugins are all known)?"""
    return set(config.plugins) <= KNOWN_PLUGINS


def site_key(config: MkDocsConfig, nav: Navigation, files: Files) -> str:
    """What every page's theme output depends on besides the page itself."""
    digest = hashlib.sha256()
    for name in ("mkdocs", "mkdocs-material"):
        try:
            digest.update(f"{name} {importlib.metadata.version(name)}\0".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{name} -\0".encode())
    digest.update(repr([(name, config.get(name)) for name in SETTINGS]).encode())
    digest.update(repr(sorted((str(k), repr(v)) for k, v in config.theme.items())).encode())
    digest.update(os.environ.get("SOURCE_DATE_EPOCH", "").encode())
    for folder in config.theme.dirs:  # custom_dir and the theme's own: each file's size and time
        for path in sorted(_theme_files(Path(folder))):
            try:
                info = path.stat()
            except OSError:  # a dangling link: its name alone
                info = os.stat_result((0,) * 10)
            digest.update(f"{path.as_posix()}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    for file in files.documentation_pages():
        digest.update(f"{file.src_uri}\0{file.url}\0".encode())
    digest.update(repr(_nav(nav.items)).encode())
    return digest.hexdigest()


def _theme_files(folder: Path) -> Iterable[Path]:
    """A theme folder's files, but the 14,000 icons of an installed Material (`.icons/` under
    the package, whose version the key holds): stat-ing them took a fifth of a rebuild."""
    try:
        import material

        package = Path(material.__file__).resolve().parent
    except ImportError:  # another theme
        package = None
    skip_icons = package is not None and folder.resolve().is_relative_to(package)
    for top, dirs, files in os.walk(folder):
        if skip_icons and top == str(folder):
            dirs[:] = [d for d in dirs if d != ".icons"]
        for name in [*dirs, *files]:
            yield Path(top) / name


def _nav(items: Iterable[Any]) -> list[Any]:
    return [
        (type(item).__name__, str(item.title), getattr(item, "url", None), _nav(getattr(item, "children", None) or []))
        for item in items
    ]


def page_key(site: str, page: Page, content: str | None = None) -> str:
    """What the theme output of one page depends on, with the site's key; `content`, the sha256
    of the page's HTML when the page does not hold it yet (the plugin reads it from its page
    store only for a page it renders again)."""
    neighbours = [(p.url, str(p.title)) if p is not None else None for p in (page.previous_page, page.next_page)]
    parts = (site, page.url, str(page.title), repr(sorted(page.meta.items())), str(page.toc), repr(neighbours))
    digest = hashlib.sha256("\0".join(parts).encode())
    digest.update((f"stored {content}" if content is not None else f"held {page.content or ''}").encode())
    return digest.hexdigest()
