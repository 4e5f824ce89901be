"""`benchledger review`: what a change does to the publication, for a pull request."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from .common import Repo, docs_dir_of, fail, reported, verdict_settings

FAILABLE = "a verdict (contradicted, overstated, misattributed, ...), stale, problems or removed"


def review(
    base: Annotated[str, typer.Option(help="The revision the change starts from (a branch, tag or commit).")],
    head: Annotated[
        str | None, typer.Option(help="The revision it ends at; default: the working tree as it is now.")
    ] = None,
    format: Annotated[str, typer.Option("--format", help="markdown or json.")] = "markdown",
    fail_on: Annotated[
        list[str] | None,
        typer.Option("--fail-on", help=f"Exit 1 when the change brings this: {FAILABLE}. Repeat for several."),
    ] = None,
    repo: Repo = Path("."),
) -> None:
    """Say what a change does to the publication: runs added, changed and removed; claims whose
    verdict changed (before -> after, with the measured effect); new corrections; grids whose
    verdict changed; receipts gone stale; new problems.

    The base side is where the change forked from --base (their merge base), so what --base
    gained meanwhile is not reported as removed. Both sides are judged as the site build
    would judge them, each with its own mkdocs.yml settings. The revisions are read with git
    (ls-tree, cat-file); nothing of them is executed. Exit
    code 0 unless --fail-on names something the change brings.

    Example (in a pull-request workflow): benchledger review --base origin/main --fail-on contradicted
    """
    from ..analysis.review import FAIL_ON, judge
    from ..analysis.review import review as diff_sides
    from ..ledger.snapshot import guarded_changes, merge_base, snapshot
    from ..render.review_text import review_json, review_markdown
    from ..render.verdict_text import effect

    if format not in ("markdown", "json"):
        fail(f"--format {format!r}: expected markdown or json")
    for name in fail_on or ():
        if name not in FAIL_ON:
            fail(f"--fail-on {name!r}: not one of {', '.join(FAIL_ON)}")
    with tempfile.TemporaryDirectory(prefix="benchledger-review-") as scratch, reported():
        sides = []
        start = merge_base(repo, base, head or "HEAD")
        guarded = guarded_changes(repo, start, head)
        for name, ref in (("base", start), ("head", head)):
            root = repo if ref is None else snapshot(repo, ref, Path(scratch) / name)
            docs = docs_dir_of(root).relative_to(root.resolve()).as_posix()
            sides.append(judge(root, docs, verdict_settings(root, None, None)))
    before, after = sides
    measured = {claim_id: effect(ev) for claim_id, ev in after.evaluations.items()}
    found = replace(diff_sides(before, after, measured), guarded=guarded)
    shown_head = head or "working tree"
    typer.echo(review_json(found, base, shown_head) if format == "json" else review_markdown(found, base, shown_head))
    failing = found.failing(tuple(fail_on or ()))
    for reason in failing:
        typer.echo(f"Failing on {reason}", err=True)
    if failing:
        raise typer.Exit(1)
