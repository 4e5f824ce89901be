"""The `benchledger` command. The only module that prints or exits.

Heavy libraries (pandas, altair, scipy, mkdocs) are imported inside the
commands so that `benchledger --help` stays fast.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from .errors import BenchledgerError, Problem

app = typer.Typer(
    help="Publish benchmark runs beside their corrections, limits and variance.\n\n"
    "A publication is a git repository with runs/<id>/ folders (run.yaml, manifest.yaml, "
    "results.csv) and reports under site_src/reports/. See FORMAT.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

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


def _config_file(repo: Path) -> Path:
    path = repo / "mkdocs.yml"
    if not path.is_file():
        fail(f"{path}: not found; run benchledger in a publication repository or pass --repo DIR")
    return path


def _check(repo: Path, quiet: bool = False) -> None:
    from .load import load

    ledger = load(repo)
    for problem in ledger.problems:
        if problem.severity == "warning":
            typer.echo(f"Warning: {problem}", err=True)
    if ledger.errors:
        typer.echo(f"{ledger.summary()}: {len(ledger.errors)} problem(s)", err=True)
        fail(sorted(ledger.errors, key=lambda p: (p.file, p.line or 0)))
    if not quiet:
        typer.echo(f"{ledger.summary()}: no problems")


@app.command()
def check(repo: Repo = Path(".")) -> None:
    """Validate every run, manifest, results table, receipt and report.

    Prints one line per problem naming the file (and line), the field, what was
    found and how to fix it; exits 1 if there is any problem.
    """
    _check(repo)


def _mkdocs_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False


@app.command()
def build(
    repo: Repo = Path("."),
    strict: Annotated[bool, typer.Option(help="Fail on any MkDocs warning (broken links...).")] = False,
    site_dir: Annotated[
        Path | None, typer.Option(help="Where to write the site.", show_default="site/ in the repository")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show MkDocs debug output.")] = False,
) -> None:
    """Check the publication, generate its pages, and build the site into site/."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    config_file = _config_file(repo)
    _check(repo, quiet=True)
    _mkdocs_logging(verbose)
    try:
        config = load_config(
            config_file=str(config_file),
            strict=strict,
            site_dir=str(site_dir.resolve()) if site_dir else None,
        )
        mkdocs_build(config)
    except BenchledgerError as err:
        fail(err.problems)
    except MkDocsException as err:
        fail(str(err))
    typer.echo(f"Site written to {config.site_dir}")


@app.command()
def serve(
    repo: Repo = Path("."),
    dev_addr: Annotated[str, typer.Option(help="Address to serve on.")] = "127.0.0.1:8000",
    open_browser: Annotated[bool, typer.Option("--open", help="Open the site in a browser.")] = False,
) -> None:
    """Preview the publication with live reload; edits under runs/ and site_src/ rebuild it."""
    from mkdocs.commands.serve import serve as mkdocs_serve
    from mkdocs.exceptions import MkDocsException

    config_file = _config_file(repo)
    _check(repo, quiet=True)
    _mkdocs_logging(False)
    try:
        mkdocs_serve(
            config_file=str(config_file), dev_addr=dev_addr, livereload=True, open_in_browser=open_browser
        )
    except MkDocsException as err:
        fail(str(err))


@app.command()
def schema(
    kind: Annotated[str, typer.Argument(help="run, manifest or receipt.")],
) -> None:
    """Print the JSON Schema of a file kind, for editors (see the format reference)."""
    import json

    from .model import json_schemas

    schemas = json_schemas()
    if kind not in schemas:
        fail(f"unknown kind {kind!r}; use one of: {', '.join(schemas)}")
    typer.echo(json.dumps(schemas[kind], indent=2))


def main() -> None:
    try:
        app()
    except BenchledgerError as err:  # a library error that escaped a command
        for problem in err.problems:
            typer.echo(f"Error: {problem}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
