"""What every command module shares: the --repo option, the error exit, and the
verdict settings read from mkdocs.yml. Only the CLI modules print or exit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from .errors import Problem

Repo = Annotated[
    Path,
    typer.Option(
        "--repo",
        help="The publication repository (holds mkdocs.yml and runs/).",
        file_okay=False,
        show_default="current folder",
    ),
]


def fail(problems: list[Problem] | str) -> NoReturn:
    """Print every problem as `Error: ...` on stderr and exit 1."""
    if isinstance(problems, str):
        problems = [Problem("", None, None, problems)]
    for problem in problems:
        shown = str(problem).removeprefix(": ").lstrip()
        typer.echo(f"Error: {shown}", err=True)
    raise typer.Exit(1)


def find_config(repo: Path) -> Path:
    path = repo / "mkdocs.yml"
    if not path.is_file():
        fail(f"{path}: not found; run benchledger in a publication repository or pass --repo DIR")
    return path


def mkdocs_yaml(repo: Path) -> dict[str, Any]:
    """mkdocs.yml read safely: tags such as !!python/name become None instead of running code."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    path = repo / "mkdocs.yml"
    if not path.is_file():
        return {}
    try:
        data = yaml.load(path.read_text(), Loader=Loader) or {}
    except yaml.YAMLError as err:
        fail(f"{path}: YAML syntax error: {err}")
    return data if isinstance(data, dict) else {}


def verdict_settings(repo: Path, min_effect: float | None, noise: float | None) -> Any:
    """The verdict parameters: command-line options, else the plugin configuration in mkdocs.yml."""
    from .claims import Settings

    configured: dict[str, Any] = {}
    for entry in mkdocs_yaml(repo).get("plugins") or []:
        if isinstance(entry, dict) and isinstance(entry.get("benchledger"), dict):
            configured = entry["benchledger"]
    return Settings(
        confidence=float(configured.get("confidence", 0.95)),
        min_effect=min_effect if min_effect is not None else float(configured.get("min_effect", 0.01)),
        noise=noise if noise is not None else configured.get("noise"),
    )
