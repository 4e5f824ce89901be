"""What every command module shares: the --repo option, the error exit, terminal-safe
text, and the publication's configuration read from mkdocs.yml."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from ..errors import BenchledgerError, Problem
from ..format.commands import HIDDEN

if TYPE_CHECKING:
    from ..analysis.comparison import Settings
    from ..analysis.history_settings import HistorySettings

_CONTROL = HIDDEN  # the characters a recorded command may not hold (FORMAT.md): tab and line feed pass


def shown(text: str) -> str:
    """Text for a terminal: control characters (escape sequences, bidi overrides) escaped."""
    return _CONTROL.sub(_code, text)


def _code(found: re.Match[str]) -> str:
    """\\x1b, \\u202e, or \\U000e0041 past U+FFFF (where \\u with five digits would misread)."""
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


Repo = Annotated[
    Path,
    typer.Option(
        "--repo",
        help="The publication repository (holds mkdocs.yml and runs/).",
        file_okay=False,
        show_default="current folder",
    ),
]


@contextmanager
def reported() -> Iterator[None]:
    """Run a command's work: a library error (BenchledgerError) becomes its `Error: ...` lines
    and exit code 1, here and nowhere else."""
    try:
        yield
    except BenchledgerError as err:
        fail(err.problems)


def fail(problems: list[Problem] | str) -> NoReturn:
    """Print every problem as `Error: ...` on stderr and exit 1."""
    if isinstance(problems, str):
        problems = [Problem(file="", message=problems)]
    for problem in problems:
        text = str(problem).removeprefix(": ").lstrip()
        typer.echo(f"Error: {shown(text)}", err=True)
    raise typer.Exit(1)


MAX_EPOCH = 4_294_967_295  # 2106-02-07: the 32-bit fields of gzip and sitemaps


def check_epoch() -> None:
    """SOURCE_DATE_EPOCH, when set, must be what MkDocs and numpy can read: whole seconds since
    1970 (numpy reads it on import, so a bad value would otherwise end in a traceback)."""
    import os

    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is None:
        return
    if not (value.isascii() and value.isdigit() and len(value) <= 10 and int(value) <= MAX_EPOCH):
        fail(
            f"SOURCE_DATE_EPOCH: {value[:40]!r} is not a whole number of seconds since 1970 up to {MAX_EPOCH} "
            "(e.g. 1767225600); fix it or unset it"
        )


def find_config(repo: Path) -> Path:
    path = _inside(repo / "mkdocs.yml")
    if not path.is_file():
        fail(f"{path}: not found; run benchledger in a publication repository or pass --repo DIR")
    return path


def _inside(path: Path) -> Path:
    """mkdocs.yml, refused when it is a link out of the repository: a pull request could point it at
    a secret (~/.ssh/id_ed25519, /proc/self/environ) whose lines a YAML error would print."""
    if path.is_symlink() and not path.resolve().is_relative_to(path.parent.resolve()):
        fail(
            f"{path}: a link to {path.resolve()}, outside the repository; benchledger reads only the repository's "
            "own files: put mkdocs.yml itself in the repository"
        )
    return path


def mkdocs_yaml(repo: Path) -> dict[str, Any]:
    """mkdocs.yml read safely: tags such as !!python/name become None instead of running code."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda _loader, _suffix, _node: None)  # PyYAML's constructor signature
    path = _inside(repo / "mkdocs.yml")
    if not path.is_file():
        return {}
    try:
        data = yaml.load(path.read_text(), Loader=Loader) or {}
    except yaml.YAMLError as err:
        fail(f"{path}: YAML syntax error: {err}")
    return data if isinstance(data, dict) else {}


def docs_dir_of(repo: Path) -> Path:
    """docs_dir from mkdocs.yml (default site_src), confined to the repository."""
    named = mkdocs_yaml(repo).get("docs_dir") or "site_src"
    if not isinstance(named, str):  # never str() of a structure: YAML aliases make it any size
        fail(
            f"{repo / 'mkdocs.yml'}: docs_dir: a {type(named).__name__} is not a folder name; "
            "write e.g. docs_dir: site_src"
        )
    docs = (repo / named).resolve()
    if not docs.is_relative_to(repo.resolve()):
        fail(f"{repo / 'mkdocs.yml'}: docs_dir: {docs} is outside the repository; use a folder inside it")
    return docs


def history_settings(repo: Path) -> HistorySettings:
    """History's settings (`history`, `history_along`) from the plugin configuration in mkdocs.yml,
    with its site_url and site_name (read by `HistorySettings.parse`, the plugin's reading too)."""
    from ..analysis.history_settings import HistorySettings

    config = mkdocs_yaml(repo)
    configured: dict[str, Any] = {}
    for entry in config.get("plugins") or []:
        if isinstance(entry, dict) and isinstance(entry.get("benchledger"), dict):
            configured = entry["benchledger"]
    url, name = config.get("site_url"), config.get("site_name")
    with reported():
        return HistorySettings.parse(
            configured,
            str(repo / "mkdocs.yml"),
            site_url=url if isinstance(url, str) and url else None,
            site_name=name if isinstance(name, str) else "benchledger",
        )


def verdict_settings(repo: Path, min_effect: float | None, noise: float | None) -> Settings:
    """The verdict parameters: command-line options, else the plugin configuration in mkdocs.yml
    (both read by `Settings.parse`, the plugin's reading too)."""
    from dataclasses import replace

    from ..analysis.comparison import Settings

    configured: dict[str, Any] = {}
    for entry in mkdocs_yaml(repo).get("plugins") or []:
        if isinstance(entry, dict) and isinstance(entry.get("benchledger"), dict):
            configured = entry["benchledger"]
    with reported():
        found = Settings.parse(configured, str(repo / "mkdocs.yml"))
        given = Settings.parse({"min_effect": min_effect, "noise": noise}, "command line", "--")
    chosen = {
        k: getattr(given, k)
        for k in ("min_effect", "noise")
        if {"min_effect": min_effect, "noise": noise}[k] is not None
    }
    return replace(found, **chosen)
