"""The site folder and the builders `build` and `serve` hand the publication to: where the
site may be written (`check_site_dir`), MkDocs' log, an external builder (properdocs, zensical)
run as a subprocess and found beside the running interpreter first, the built site's mark, and
the link crawl a zensical build runs here (zensical runs no MkDocs plugin)."""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

from ..errors import Problem
from .common import docs_dir_of, fail, mkdocs_yaml


def mkdocs_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False


BUILDERS = ("mkdocs", "properdocs", "zensical")
ZENSICAL_LIMITS = (
    "zensical runs no MkDocs plugins, so benchledger generated the pages first. Missing under zensical: "
    "the claims panel on report pages (the claims ledger and claim pages have it all), escaping of report "
    "front-matter titles (keep them plain text), and the plugin's theme.font override (keep font: false in "
    "mkdocs.yml)."
)


def builder_executable(tool: str) -> str | None:
    """The builder installed beside the running interpreter (the same environment), else on PATH."""
    here = Path(sys.executable).parent
    return shutil.which(tool, path=str(here)) or shutil.which(tool)


def external_build(tool: str, config_file: Path, strict: bool, site_dir: Path | None) -> None:
    import subprocess

    exe = builder_executable(tool)
    if exe is None:
        fail(f"{tool} is not installed; pip install {tool}, or use --builder mkdocs")
    command = [exe, "build", "-f", str(config_file)] + (["--strict"] if strict else [])
    if site_dir is not None:
        if tool == "zensical":
            fail("--site-dir is not supported with zensical; set site_dir in mkdocs.yml")
        command += ["-d", str(site_dir.resolve())]
    from ..ledger.publication import SITE_CHECKED_ENV

    env = os.environ | {SITE_CHECKED_ENV: "1"}  # the site folder was checked above, with --force if given
    done = subprocess.run(command, cwd=config_file.parent, env=env)
    if done.returncode != 0:
        fail(f"{tool} build failed (exit code {done.returncode}); see its output above")


def mark_built_site(site: Path) -> None:
    from ..site.files import mark_site

    try:
        mark_site(site)
    except OSError as err:
        fail(f"{site}: the site was built, but its mark cannot be written ({err.strerror})")


def crawl(site: Path, site_url: str) -> None:
    """Fail naming every internal link of the built site that names no file or anchor."""
    from urllib.parse import urlsplit

    from ..site.links import broken_links

    broken = broken_links(site, urlsplit(site_url).path or "/")
    if broken:
        fail([Problem(file="", message=str(b)) for b in broken])


def check_site_dir(repo: Path, site_dir: Path | None, force: bool = False) -> None:
    """The folder MkDocs empties and fills: --site-dir anywhere but over the publication;
    mkdocs.yml's site_dir (committed, so anyone's) only inside the repository; either holding
    nothing but a previous site unless --force."""
    from ..ledger.publication import layout_problems, site_folder_problems, theme_problems

    root = repo.resolve()
    site = site_dir if site_dir is not None else root / str(mkdocs_yaml(repo).get("site_dir") or "site")
    if site_dir is None and not site.resolve().is_relative_to(root):
        fail(
            f"{repo / 'mkdocs.yml'}: site_dir: {site.resolve()} is outside the repository, and MkDocs empties "
            "it before it builds; use a folder inside it, e.g. site, or pass --site-dir to build elsewhere"
        )
    problems = layout_problems(root, docs_dir_of(repo), site, "--site-dir" if site_dir else "site_dir")
    theme = mkdocs_yaml(repo).get("theme")
    custom = theme.get("custom_dir") if isinstance(theme, dict) else None
    problems += theme_problems(root, root / str(custom) if custom else None)
    if not problems and not force:  # mkdocs.yml's site_dir too: a pull request may name any folder
        problems = site_folder_problems(site, "--site-dir" if site_dir is not None else "site_dir")
    if problems:
        fail(problems)
