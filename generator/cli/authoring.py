"""The authoring commands: init (a new publication), verify (a receipt), rerun (a receipt that
re-measures), schema."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import Repo, fail, reported

if TYPE_CHECKING:
    from ..authoring.rerun import Rerun

app = typer.Typer()


@app.command()
def verify(
    *,
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

    _check_by_and_date(by, date)
    with reported():
        written = write_receipt(repo, run, by=by, method=method, statement=statement, sign=sign, date=date)
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo("Commit the receipt; benchledger check now compares the run's files with it.")


@app.command()
def rerun(
    *,
    run: Annotated[str, typer.Argument(help="The run: its folder (runs/<id>) or its id.")],
    by: Annotated[str, typer.Option("--by", help="Your name, as allowed_signers lists it when you sign.")],
    base_url: Annotated[
        str | None, typer.Option(help="The server to measure (openai runs).", show_default="the recorded one")
    ] = None,
    trials: Annotated[int | None, typer.Option(help="Trials per condition.", show_default="the recorded")] = None,
    margin: Annotated[
        str | None,
        typer.Option(help='Agreement margin, e.g. "20%" where speed drifts between sessions.', show_default="5%"),
    ] = None,
    allow_difference: Annotated[
        list[str] | None,
        typer.Option(help="A recorded manifest or setup key allowed to differ (e.g. host.name); repeatable."),
    ] = None,
    sign: Annotated[Path | None, typer.Option(help="SSH private key to sign the receipt with.")] = None,
    date: Annotated[str | None, typer.Option(help="Day of the rerun, YYYY-MM-DD.", show_default="today")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Run the recorded command without asking (for scripts).")] = False,
    repo: Repo = Path("."),
) -> None:
    """Make a run again from the invocation its runner recorded, and say whether it reproduced.

    The run folder says what to execute: rerun shows the exact command and runs it only when
    you answer yes (or pass --yes). Without a terminal to ask on and without --yes it runs
    nothing and exits 1. Rerunning a run folder someone else wrote runs their command with
    your rights: read it first.

    Start the same server first (the manifest says how it was built and started). The rerun
    is measured in a temporary folder; every metric and rate at every condition is compared
    with the original by the equivalence test: agrees (the 90% interval of rerun / original lies
    within [1/(1+margin), 1+margin]), differs (the interval lies wholly outside that band, at
    95% for all the run's figures together), unsettled otherwise (the site's methods page says
    what more trials can settle). If a recorded key of the environment differs and is not
    allowed with --allow-difference, nothing is written. Otherwise
    runs/<id>/receipts/<date>-rerun-<name>.yaml is written with the agreement table, and the
    new trials are kept beside it. The run then shows as reproduced (every figure agrees),
    partly reproduced (at least one figure agrees and none differs), rerun unsettled (no figure
    agrees and none differs) or not reproduced (a figure differs, or there is no figure to
    judge), with the counts: "rerun unsettled (0 of 10 agree, 0 differ)". Exits 0 whatever the
    outcome.
    """
    from ..authoring.rerun import Request
    from ..authoring.rerun import rerun as do_rerun

    if trials is not None and not 2 <= trials <= 10_000:
        fail("--trials: give 2 to 10,000 trials per condition (an interval needs two)")
    _check_by_and_date(by, date)
    with reported():
        ask = Request(
            run=run,
            by=by,
            base_url=base_url,
            trials=trials,
            margin=_margin(margin),
            allow=tuple(allow_difference or ()),
            sign=sign,
            date=date,
        )
        done = do_rerun(repo, ask, measure_in_process, read=read_in_process, echo=typer.echo, consent=_consent(yes))
    _say(done)


def _say(done: Rerun) -> None:
    """Each figure's agreement, the differences allowed, the outcome and the files written."""
    from ..analysis.reproduction import NO_RATIO
    from ..analysis.stats import CONFIDENCE, IDENTICAL_SIDES
    from ..format.signed import level

    if done.figures:
        count = len(done.figures)
        typer.echo(f"Intervals at {level(done.figures[0].level)} each, {level(CONFIDENCE)} for the {count} together:")
    for f in done.figures:
        if f.ratio is None or f.low is None or f.high is None:
            typer.echo(f"  {f.status:9}  {f.label}: {NO_RATIO}")
            continue
        interval = f"({IDENTICAL_SIDES})" if f.low == f.high else f"[{f.low:.3f}, {f.high:.3f}]"
        typer.echo(f"  {f.status:9}  {f.label}: rerun/original {f.ratio:.3f} {interval}, margin ±{f.margin:.1%}")
    for key, old, new in done.differences:
        typer.echo(f"  allowed difference {key}: {old!r} -> {new!r}")
    if done.figures:
        typer.echo(f"{done.outcome.words}.")
    else:
        typer.echo(f"{done.outcome.words}: no condition in common, or every figure zero both times.")
    unsettled = sum(f.status == "unsettled" and f.settles for f in done.figures)
    if unsettled:
        typer.echo(
            f"{unsettled} unsettled: an interval reaches across the margin's edge. More trials (--trials) narrow"
            " the rerun's side only; the original's trials are fixed, so a run with few noisy trials may"
            " never show agreement within the margin."
        )
    if stuck := sum(not f.settles for f in done.figures):
        typer.echo(f"{stuck} with no ratio: more trials will not settle them.")
    for path in done.written:
        typer.echo(f"wrote {path}")
    typer.echo("Commit the receipt and the folder beside it.")


def measure_in_process(argv: list[str]) -> int:
    """`benchledger ARGV` for rerun, in this process: `run openai` or `run command` read by the
    same parser that recorded the invocation, then the runner; its exit status as a shell sees
    it (a usage error shown and 2, a refusal 1, Ctrl-C 130)."""
    from .run import run_app

    try:
        typer.main.get_command(run_app).main(args=argv[1:], prog_name="benchledger run")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else int(done.code is not None)
    return 0


def read_in_process(argv: list[str]) -> dict[str, Any]:
    """The parameters `benchledger ARGV` (`run openai ...` or `run command ...`) would measure
    with, read by the parser that measures, without measuring; a usage error raises."""
    from ..errors import BenchledgerError, Problem
    from .run import run_app

    commands = getattr(typer.main.get_command(run_app), "commands", {})
    if len(argv) < 2 or argv[1] not in commands:
        raise BenchledgerError(Problem(file="runner.invocation", message="is not a `benchledger run` line"))
    own = argv[: argv.index("--")] if "--" in argv else argv
    if "--help" in own:  # the parser would print the help and stop, measuring nothing
        raise BenchledgerError(Problem(file="runner.invocation", message="asks for --help; nothing was run"))
    try:
        with commands[argv[1]].make_context(f"benchledger run {argv[1]}", list(argv[2:])) as ctx:
            return dict(ctx.params)
    except (typer.Exit, typer.Abort):
        message = "stops the parser before a run; nothing was run"
    except typer.TyperException as err:  # a usage error of the parser (Typer's own Click)
        shown = err.format_message() if hasattr(err, "format_message") else str(err)
        message = f"benchledger run refuses it: {shown}; nothing was run"
    raise BenchledgerError(Problem(file="runner.invocation", message=message))


MAX_NAME = 200


def _check_by_and_date(by: str, date: str | None) -> None:
    """What check would refuse in the receipt, refused before it is written: a name too long
    for a file name, a day outside the years dates may take, or after today."""
    import datetime as dt

    from ..format.models import DATE_YEARS

    if len(by.strip()) > MAX_NAME or any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in by):
        fail(f"--by: give a name of at most {MAX_NAME} characters, without control characters")
    if date is None:
        return
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        fail(f"--date: {date!r} is not a day, YYYY-MM-DD")
    if not DATE_YEARS[0] <= day.year <= DATE_YEARS[1]:
        fail(f"--date: {date!r} is out of range; give a day between {DATE_YEARS[0]} and {DATE_YEARS[1]}")
    if day > dt.date.today():
        fail(f"--date: {date!r} is after today; give the day you verified the run")


def _interactive() -> bool:
    """Whether a person can answer at a terminal (not a pipe, a file or a closed stdin)."""
    return sys.stdin.isatty()


def _consent(yes: bool) -> Callable[[], bool]:
    """--yes, else a yes typed at a terminal; never a yes read from a pipe or a closed stdin."""

    def ask() -> bool:
        if yes:
            return True
        if not _interactive():
            fail(
                "rerun: stdin is not a terminal, so nobody can confirm the command above; nothing was run. "
                "Read it, then pass --yes to run it"
            )
        return typer.confirm("Run this command?", default=False)

    return ask


def _margin(text: str | None) -> float | None:
    if text is None:
        return None
    value = text.strip().removesuffix("%")
    try:
        found = float(value) / 100 if text.strip().endswith("%") else float(value)
    except ValueError:
        fail(f"--margin {text!r}: write a percentage such as 5%")
    if not 0 < found < 1:
        fail(f"--margin {text!r}: give a margin between 0% and 100%")
    return found


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

    if folder.is_symlink():
        fail(f"{folder}: is a symlink; give a real folder, or a path that does not exist yet")
    with reported():
        written = scaffold(folder, force, install)
    typer.echo(f"Created a publication in {folder} ({len(written)} files). Next:")
    typer.echo(f"  cd {folder}")
    typer.echo("  benchledger serve              # preview at http://127.0.0.1:8000 with live reload")
    typer.echo("  benchledger run openai --base-url URL --title '...'   # add a run (or: run command, import)")
    typer.echo("  edit site_src/reports/example.md   # declare your claims; new reports join the navigation")
    typer.echo("  git init && git add . && git commit -m 'benchledger publication' && git push")
    typer.echo("README.md walks through runs, claims, reports, pull-request reviews and runs on request.")
    typer.echo(
        "run-on-request.yml uses a self-hosted runner: keep it in a private repository, or require approval "
        "for fork pull request workflows (README.md, 'Pull requests and runs on request')."
    )


@app.command()
def schema(
    kind: Annotated[str, typer.Argument(help="run, manifest, receipt, report (a report's front matter) or history.")],
) -> None:
    """Print the JSON Schema of a file kind, for editors (see the format reference)."""
    import json

    from ..format.schemas import json_schemas

    schemas = json_schemas()
    if kind not in schemas:
        fail(f"unknown kind {kind!r}; use one of: {', '.join(schemas)}")
    typer.echo(json.dumps(schemas[kind], indent=2))
