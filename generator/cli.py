"""The `benchledger` command. The only module that prints or exits.

Heavy libraries (pandas, altair, scipy, mkdocs) are imported inside the
commands so that `benchledger --help` stays fast.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .cli_common import Repo, fail, find_config, mkdocs_yaml, verdict_settings
from .cli_compare import compare
from .cli_run import run_app
from .errors import BenchledgerError

app = typer.Typer(
    help="Publish benchmark runs beside their corrections, limits and variance.\n\n"
    "A publication is a git repository with runs/<id>/ folders (run.yaml, manifest.yaml, "
    "results.csv) and reports under site_src/reports/. See FORMAT.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _check(repo: Path, quiet: bool = False, allow_stale: bool = False) -> None:
    from .load import load
    from .receipts import ledger_receipts, receipt_problems

    ledger = load(repo)
    problems = list(ledger.problems)
    states, signer_problems = ledger_receipts(ledger)
    problems += signer_problems + receipt_problems(ledger, states, stale_is_error=not allow_stale)
    for problem in problems:
        if problem.severity == "warning":
            typer.echo(f"Warning: {problem}", err=True)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        typer.echo(f"{ledger.summary()}: {len(errors)} problem(s)", err=True)
        fail(sorted(errors, key=lambda p: (p.file, p.line or 0)))
    if not quiet:
        typer.echo(f"{ledger.summary()}: no problems")


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
    _check(repo, allow_stale=allow_stale)


def _mkdocs_logging(verbose: bool) -> None:
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


def _docs_dir(repo: Path) -> Path:
    """docs_dir from mkdocs.yml (default site_src), confined to the repository."""
    docs = (repo / str(mkdocs_yaml(repo).get("docs_dir") or "site_src")).resolve()
    if not docs.is_relative_to(repo.resolve()):
        fail(f"{repo / 'mkdocs.yml'}: docs_dir: {docs} is outside the repository; use a folder inside it")
    return docs


def _generate(repo: Path) -> Any:
    from .sitefiles import generate_into

    try:
        return generate_into(repo.resolve(), _docs_dir(repo), verdict_settings(repo, None, None))
    except BenchledgerError as err:
        fail(err.problems)


@app.command()
def generate(repo: Repo = Path(".")) -> None:
    """Write the generated pages, charts and assets into docs_dir, and nothing else.

    For builders that run no MkDocs plugins (zensical) or to inspect the pages;
    `build` and `serve` do this by themselves.
    """
    find_config(repo)
    _check(repo, quiet=True, allow_stale=True)
    ledger, _, report = _generate(repo)
    typer.echo(
        f"{ledger.summary()}: {len(report.written)} files written, {report.unchanged} unchanged, "
        f"{len(report.removed)} removed"
    )


def _external_build(tool: str, config_file: Path, strict: bool, site_dir: Path | None) -> None:
    import shutil
    import subprocess

    exe = shutil.which(tool)
    if exe is None:
        fail(f"{tool} is not installed; pip install {tool}, or use --builder mkdocs")
    command = [exe, "build", "-f", str(config_file)] + (["--strict"] if strict else [])
    if site_dir is not None:
        if tool == "zensical":
            fail("--site-dir is not supported with zensical; set site_dir in mkdocs.yml")
        command += ["-d", str(site_dir.resolve())]
    done = subprocess.run(command, cwd=config_file.parent)
    if done.returncode != 0:
        fail(f"{tool} build failed (exit code {done.returncode}); see its output above")


@app.command()
def build(
    repo: Repo = Path("."),
    strict: Annotated[bool, typer.Option(help="Fail on any warning (broken links, stale receipts...).")] = False,
    site_dir: Annotated[
        Path | None, typer.Option(help="Where to write the site.", show_default="site/ in the repository")
    ] = None,
    builder: Annotated[str, typer.Option(help="mkdocs, properdocs (a maintained MkDocs fork) or zensical.")] = "mkdocs",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show MkDocs debug output.")] = False,
) -> None:
    """Check the publication, generate its pages, and build the site into site/."""
    if builder not in BUILDERS:
        fail(f"--builder {builder!r}: expected one of {', '.join(BUILDERS)}")
    config_file = find_config(repo)
    _check(repo, quiet=True, allow_stale=not strict)
    if builder == "properdocs":
        _external_build("properdocs", config_file, strict, site_dir)
        typer.echo("Site built with properdocs (the benchledger plugin ran inside it).")
        return
    if builder == "zensical":
        _generate(repo)
        _external_build("zensical", config_file, strict, site_dir)
        typer.echo(ZENSICAL_LIMITS, err=True)
        typer.echo("Site built with zensical.")
        return
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    _mkdocs_logging(verbose)
    try:
        config = load_config(
            config_file=str(config_file), strict=strict, site_dir=str(site_dir.resolve()) if site_dir else None
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
    _check(repo, quiet=True, allow_stale=True)
    _mkdocs_logging(False)
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


@app.command()
def verify(
    run: Annotated[str, typer.Argument(help="The run: its folder (runs/<id>) or its id.")],
    by: Annotated[str, typer.Option("--by", help="Your name, as allowed_signers lists it when you sign.")],
    method: Annotated[str, typer.Option(help="rerun, review or recompute.")],
    statement: Annotated[str | None, typer.Option(help="What you did and what you found.")] = None,
    sign: Annotated[
        Path | None, typer.Option(help="SSH private key to sign the receipt with (runs ssh-keygen -Y sign).")
    ] = None,
    date: Annotated[str | None, typer.Option(help="Day of verification, YYYY-MM-DD.", show_default="today")] = None,
    repo: Repo = Path("."),
) -> None:
    """Write a receipt vouching for the run's files as they are now, optionally SSH-signed.

    The receipt lists the sha256 of every file in the run folder except receipts/;
    commit it. An existing receipt is never overwritten.
    """
    from .verify import write_receipt

    try:
        written = write_receipt(repo, run, by, method, statement, sign, date)
    except BenchledgerError as err:
        fail(err.problems)
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo("Commit the receipt; benchledger check now compares the run's files with it.")


@app.command()
def init(
    folder: Annotated[Path, typer.Argument(help="Where to create the publication.", file_okay=False)],
    force: Annotated[bool, typer.Option(help="Write into a non-empty folder.")] = False,
) -> None:
    """Create a new publication: mkdocs.yml, a home page, an example report with a claim and
    its correction, two example runs, a GitHub Pages workflow, .gitignore, .gitattributes
    and an allowed_signers stub."""
    from .init import scaffold

    try:
        written = scaffold(folder, force)
    except BenchledgerError as err:
        fail(err.problems)
    typer.echo(f"Created a publication in {folder} ({len(written)} files). Next:")
    typer.echo(f"  cd {folder}")
    typer.echo("  benchledger serve              # preview at http://127.0.0.1:8000 with live reload")
    typer.echo("  git init && git add . && git commit -m 'benchledger publication' && git push")


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


app.add_typer(run_app, name="run")
app.command()(compare)


def main() -> None:
    try:
        app()
    except BenchledgerError as err:  # a library error that escaped a command
        for problem in err.problems:
            typer.echo(f"Error: {problem}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
