"""The publication commands: check, generate, build, serve (the site folder and the builders
they hand the publication to: `site_builders`; the ledger's tables: `export`)."""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import Problem
from .common import (
    Repo,
    check_epoch,
    docs_dir_of,
    fail,
    find_config,
    history_settings,
    mkdocs_yaml,
    reported,
    shown,
    verdict_settings,
)
from .site_builders import (
    BUILDERS,
    ZENSICAL_LIMITS,
    check_site_dir,
    crawl,
    external_build,
    mark_built_site,
    mkdocs_logging,
)

if TYPE_CHECKING:
    from ..analysis.audit import Checked
    from ..ledger.records import Ledger
    from ..site.cache import BuildCache
    from ..site.pipeline import Generated

app = typer.Typer()


def site_warnings(repo: Path) -> list[Problem]:
    """What would make `build` publish something else than `check` checked: no mkdocs.yml, a
    mkdocs.yml that does not run the benchledger plugin, or one that leaves docs_dir to MkDocs'
    default (docs/) while benchledger reads site_src/."""
    if not (repo / "mkdocs.yml").is_file():
        return [
            Problem(
                file="mkdocs.yml",
                message="is missing; benchledger init writes one (MkDocs needs it to build)",
                severity="warning",
            )
        ]
    config = mkdocs_yaml(repo)
    found = []
    plugins = config.get("plugins") or []
    names = [next(iter(p)) if isinstance(p, dict) and p else p for p in plugins] if isinstance(plugins, list) else []
    if "benchledger" not in names:
        message = "benchledger is not listed, so the build generates no ledger pages; add `- benchledger` under plugins"
        found.append(Problem(file="mkdocs.yml", field="plugins", message=message, severity="warning"))
    if "docs_dir" not in config:
        message = "not set: MkDocs builds docs/ while benchledger reads site_src/; add `docs_dir: site_src`"
        found.append(Problem(file="mkdocs.yml", field="docs_dir", message=message, severity="warning"))
    return found


def _check(
    repo: Path, quiet: bool = False, allow_stale: bool = False, *, freeze: bool = False
) -> tuple[BuildCache, Checked]:
    """Check the publication; the build cache it read and what it found, for the generation
    that follows to reuse (neither reads the runs again). `freeze`: the garbage collector leaves
    what was read alone from then on (`gc.freeze`; the caller thaws it)."""
    from ..analysis.audit import Checked, audit
    from ..site.cache import BuildCache
    from ..site.collector import relaxed

    docs = docs_dir_of(repo)
    verdict_settings(repo, None, None)  # the plugin's settings, read as the build will read them
    cache = BuildCache.for_publication(repo)
    rel = docs.relative_to(repo.resolve()).as_posix()
    with relaxed():
        checked = audit(repo, rel, stale_is_error=not allow_stale, cache=cache.parsed)
        if freeze:  # before the young threshold is back, when a full collection would walk it all
            gc.freeze()
    for problem in [*site_warnings(repo), *checked.problems]:
        if problem.severity == "warning":
            typer.echo(f"Warning: {shown(str(problem))}", err=True)
    if checked.errors:
        found = len(checked.errors)
        typer.echo(f"{checked.ledger.summary()}: {found} {'problem' if found == 1 else 'problems'}", err=True)
        fail(checked.errors)
    feed = feed_warning(repo, checked.ledger, cache)
    if feed is not None:
        typer.echo(f"Warning: {shown(str(feed))}", err=True)
    for problem in acceptance_warnings(repo, checked.ledger, cache):
        typer.echo(f"Warning: {shown(str(problem))}", err=True)
    if not quiet:
        typer.echo(f"{checked.ledger.summary()}: no problems")
    return cache, Checked(repo.resolve(), docs, checked)


def feed_warning(repo: Path, ledger: Ledger, cache: BuildCache | None = None) -> Problem | None:
    """A warning when history finds changes and mkdocs.yml sets no site_url: the Atom feed's
    links are then relative, which most feed readers cannot follow. History is followed once for
    the check and the build that follows it (the build cache's `history`)."""
    chosen = history_settings(repo)
    if not chosen.enabled or chosen.site_url is not None or not (repo / "mkdocs.yml").is_file():
        return None
    from ..site.pipeline import follow

    found = follow(ledger, verdict_settings(repo, None, None), chosen, cache)
    changes = sum(len(f.changes) for f in found.series) if found is not None else 0
    if not changes:
        return None
    message = (
        f"not set, and history shows {changes} {'change' if changes == 1 else 'changes'}: the links of "
        "history/feed.xml are relative, which most feed readers cannot follow; set site_url to the "
        "site's address (e.g. https://you.github.io/repo/)"
    )
    return Problem(file="mkdocs.yml", field="site_url", message=message, severity="warning")


def acceptance_warnings(repo: Path, ledger: Ledger, cache: BuildCache | None = None) -> list[Problem]:
    """A warning for each history-file `accept` entry that accepts no change any more."""
    chosen = history_settings(repo)
    if not chosen.enabled or not any(n.data.accept for n in ledger.history):
        return []
    from ..analysis.history import unmatched_acceptances
    from ..site.pipeline import follow

    found = follow(ledger, verdict_settings(repo, None, None), chosen, cache)
    return unmatched_acceptances(found.series, ledger.history) if found is not None else []


@app.command()
def check(
    repo: Repo = Path("."),
    allow_stale: Annotated[bool, typer.Option(help="Report stale receipts as warnings instead of failing.")] = False,
) -> None:
    """Validate every run, manifest, results table, receipt and report.

    Prints one line per problem naming the file (and line), the field, what was
    found and how to fix it; exits 1 if there is any problem. A receipt whose
    files changed since it was written (stale) or whose signature fails is a problem.
    """
    check_site_dir(repo, None)
    _check(repo, allow_stale=allow_stale)


def _generate(repo: Path, cache: BuildCache, checked: Checked) -> Generated:
    from ..site.pipeline import generate_site

    with reported():
        settings = verdict_settings(repo, None, None)
        chosen = history_settings(repo)
        return generate_site(repo.resolve(), docs_dir_of(repo), settings, cache, checked=checked, history=chosen)


NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Render every run again and neither read nor save the build cache (kept in the user's cache "
        "folder; a later build reuses the pages of runs that did not change).",
    ),
]


@contextlib.contextmanager
def _cache_choice(no_cache: bool) -> Iterator[None]:
    """--no-cache for this command only: set for the plugin (and a builder run as a subprocess),
    then restored, so a later command of the same process (serve, tests) uses the cache."""
    from ..site.cache import NO_CACHE

    before = os.environ.get(NO_CACHE)
    if no_cache:
        os.environ[NO_CACHE] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NO_CACHE, None)
        else:
            os.environ[NO_CACHE] = before


@app.command()
def generate(repo: Repo = Path("."), no_cache: NoCache = False) -> None:
    """Write the generated pages, charts and assets into docs_dir, and nothing else.

    For builders that run no MkDocs plugins (zensical) or to inspect the pages;
    `build` and `serve` do this by themselves.
    """
    with _cache_choice(no_cache):
        find_config(repo)
        typer.echo(_generate(repo, *_check(repo, quiet=True, allow_stale=True)).summary())


@app.command()
def build(
    repo: Repo = Path("."),
    strict: Annotated[bool, typer.Option(help="Fail on any warning (broken links, stale receipts...).")] = False,
    site_dir: Annotated[
        Path | None, typer.Option(help="Where to write the site.", show_default="site/ in the repository")
    ] = None,
    builder: Annotated[str, typer.Option(help="mkdocs, properdocs (a maintained MkDocs fork) or zensical.")] = "mkdocs",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show MkDocs debug output.")] = False,
    no_cache: NoCache = False,
    force: Annotated[
        bool,
        typer.Option(
            help="Empty a site folder (--site-dir, or mkdocs.yml's site_dir) that holds files but no previous "
            "site (MkDocs deletes every entry whose name does not start with a dot). Without it, the site folder "
            "must be empty, new, or a site benchledger built (it holds .benchledger-site)."
        ),
    ] = False,
) -> None:
    """Check the publication, generate its pages, and build the site into site/.

    Pages of runs that did not change since the last build are reused from it (the build
    cache, keyed by the runs' file hashes and benchledger's code; --no-cache renders all)."""
    with _cache_choice(no_cache):
        _build(repo, strict, site_dir, builder, verbose, force)


def _build(repo: Path, strict: bool, site_dir: Path | None, builder: str, verbose: bool, force: bool = False) -> None:
    check_epoch()
    if builder not in BUILDERS:
        fail(f"--builder {builder!r}: expected one of {', '.join(BUILDERS)}")
    config_file = find_config(repo)
    # The ledger and the build cache `_check` reads live until the build ends: frozen, no
    # collection walks them again (at 1,000 runs, a full collection costs 0.15 s); thawed once
    # the plugin's crawl is done (its `on_post_build`), or here.
    try:
        cache, checked = _check(repo, quiet=True, allow_stale=not strict, freeze=True)
        _built(
            repo,
            config_file,
            cache,
            checked,
            strict=strict,
            site_dir=site_dir,
            builder=builder,
            verbose=verbose,
            force=force,
        )
    finally:
        gc.unfreeze()


def _built(
    repo: Path,
    config_file: Path,
    cache: BuildCache,
    checked: Checked,
    *,
    strict: bool,
    site_dir: Path | None,
    builder: str,
    verbose: bool,
    force: bool,
) -> None:
    check_site_dir(repo, site_dir, force)
    if builder == "properdocs":
        external_build("properdocs", config_file, strict, site_dir)
        typer.echo("Site built with properdocs (the benchledger plugin ran inside it).")
        return
    if builder == "zensical":
        _generate(repo, cache, checked)
        external_build("zensical", config_file, strict, site_dir)
        mark_built_site(repo / str(mkdocs_yaml(repo).get("site_dir") or "site"))
        if strict:  # zensical runs no plugin, so the plugin's crawl of the built site runs here
            written = mkdocs_yaml(repo)
            crawl(repo / str(written.get("site_dir") or "site"), str(written.get("site_url") or "/"))
        typer.echo(ZENSICAL_LIMITS, err=True)
        typer.echo("Site built with zensical.")
        return
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    from ..site.plugin import BenchledgerPlugin

    mkdocs_logging(verbose)
    try:
        with reported():
            config = load_config(
                config_file=str(config_file), strict=strict, site_dir=str(site_dir.resolve()) if site_dir else None
            )
            plugin = config.plugins.get("benchledger")
            if isinstance(plugin, BenchledgerPlugin):  # what check just read and found, not read again
                plugin.cache, plugin.checked = cache, checked
            mkdocs_build(config)
    except MkDocsException as err:
        fail(str(err))
    # Built, every file written and closed: the process ends after this command, and the
    # interpreter's last collection would walk everything the build made (0.17 s at 1,000 runs)
    # only to exit. Frozen at exit, it is left to the exit.
    atexit.register(gc.freeze)
    typer.echo(f"Site written to {config.site_dir}")


@app.command()
def serve(
    repo: Repo = Path("."),
    dev_addr: Annotated[str, typer.Option(help="Address to serve on.")] = "127.0.0.1:8000",
    open_browser: Annotated[bool, typer.Option("--open", help="Open the site in a browser.")] = False,
    dirty: Annotated[
        bool,
        typer.Option(
            help="Rebuild only changed pages: fast on large publications; navigation and search may "
            "lag until a full build."
        ),
    ] = False,
) -> None:
    """Preview the publication with live reload; edits under runs/ and site_src/ rebuild it.

    Only the runs that changed are re-rendered; with --dirty MkDocs also rebuilds only the
    pages that changed."""
    from mkdocs.commands.serve import serve as mkdocs_serve
    from mkdocs.exceptions import MkDocsException

    config_file = find_config(repo)
    check_epoch()
    _check(repo, quiet=True, allow_stale=True)
    mkdocs_logging(False)
    try:
        mkdocs_serve(
            config_file=str(config_file),
            dev_addr=dev_addr,
            livereload=True,
            open_in_browser=open_browser,
            build_type="dirty" if dirty else None,
        )
    except MkDocsException as err:
        fail(str(err))
