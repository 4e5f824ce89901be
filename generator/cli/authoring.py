"""The authoring commands: init (a new publication), verify (a receipt), schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import BenchledgerError
from .common import Repo, fail

app = typer.Typer()


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
    from ..authoring.receipt import write_receipt

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
    install: Annotated[
        str | None,
        typer.Option(
            help="The pip requirement the Pages workflow installs benchledger with, e.g. "
            "git+https://github.com/OWNER/benchledger@v0.1.0.",
            show_default="benchledger==<this version>",
        ),
    ] = None,
) -> None:
    """Create a new publication that checks and builds at once.

    Writes mkdocs.yml, a home page, an example report with a claim and its correction, two
    example runs, a GitHub Pages workflow, .gitignore, .gitattributes and an allowed_signers
    stub. The workflow installs exactly this benchledger (or --install) and the site
    toolchain pinned in requirements-site.txt, so every push builds the same bytes."""
    from ..authoring.scaffold import scaffold

    try:
        written = scaffold(folder, force, install)
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

    from ..format.schemas import json_schemas

    schemas = json_schemas()
    if kind not in schemas:
        fail(f"unknown kind {kind!r}; use one of: {', '.join(schemas)}")
    typer.echo(json.dumps(schemas[kind], indent=2))
