"""The `benchledger` command: the Typer app and its entry point.

The CLI is the only room that exits; it prints results and errors, and hands the
runner a console for its progress bars. Heavy libraries (altair, scipy, numpy,
mkdocs) are imported inside the commands so that `benchledger --help` stays fast.
"""

from __future__ import annotations

import sys

import typer

from ..errors import BenchledgerError
from . import authoring, export, publish
from .common import check_epoch, shown
from .compare import compare
from .diff import diff
from .importing import import_results
from .review import review
from .run import run_app

app = typer.Typer(
    help="Publish benchmark runs beside their corrections, limits and variance.\n\n"
    "A publication is a git repository with runs/<id>/ folders (run.yaml, manifest.yaml, "
    "results.csv) and reports under site_src/reports/. See FORMAT.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


for group in (publish.app, export.app, authoring.app):
    app.registered_commands += group.registered_commands
app.add_typer(run_app, name="run")
app.command()(compare)
app.command()(diff)
app.command("import")(import_results)
app.command()(review)


def main() -> None:
    try:
        check_epoch()
        app()
    except typer.Exit as done:  # check_epoch's refusal, before a command runs
        sys.exit(done.exit_code)
    except BenchledgerError as err:  # a library error that escaped a command
        for problem in err.problems:
            typer.echo(f"Error: {shown(str(problem))}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
