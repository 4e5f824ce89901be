"""`benchledger review`: what a change does to the publication, for a pull request."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import BenchledgerError
from .common import Repo, docs_dir_of, fail, mkdocs_yaml, verdict_settings

if TYPE_CHECKING:
    from ..analysis.comparison import Settings
    from ..analysis.review import Review

FAILABLE = (
    "a verdict (contradicted, overstated, misattributed, ...), stale, problems, removed, or worse "
    "(an added run worse than the current level of its series)"
)


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
    """Say what a change does to the publication: runs added, changed (which files, which
    receipts) and removed; claims whose verdict changed (before -> after, with the measured
    effect, and the mkdocs.yml setting that caused it); new corrections; grids whose verdict
    changed; receipts gone stale or re-signed after an edit; new problems; each added
    run judged against the current level of its series (worse, better, within noise or
    unsettled, with the ratio and its interval), or the series it would split. Workflow
    files, mkdocs.yml (hooks, plugins, confidence, min_effect) and allowed_signers
    that the change touches come first, with what they change.

    The base side is where the change forked from --base (their merge base), so what --base
    gained meanwhile is not reported as removed. Both sides are judged as the site build
    would judge them, each with its own mkdocs.yml settings, and both sides' signatures with
    the base's allowed_signers: a key the change adds signs nothing in its own review. The
    revisions are read with git (ls-tree, cat-file); nothing of them is executed. A revision
    that cannot be read is a comment saying so, and exit code 1; otherwise exit code 0
    unless --fail-on names something the change brings.

    Example (in a pull-request workflow): benchledger review --base origin/main --fail-on contradicted
    """
    from ..analysis.review import FAIL_ON, Review
    from ..ledger.snapshot import guarded_changes, merge_base

    if format not in ("markdown", "json"):
        fail(f"--format {format!r}: expected markdown or json")
    for name in fail_on or ():
        if name not in FAIL_ON:
            fail(f"--fail-on {name!r}: not one of {', '.join(FAIL_ON)}")
    shown_head = head or "working tree"
    guarded: tuple[tuple[str, str], ...] = ()
    try:
        start = merge_base(repo, base, head or "HEAD")
        guarded = guarded_changes(repo, start, head)
        found = _review(repo, start, head, guarded)
    except (BenchledgerError, typer.Exit) as err:  # a refusal is a comment too, never an empty one
        why = (
            "; ".join(str(p).removeprefix(": ").lstrip() for p in err.problems)
            if isinstance(err, BenchledgerError)
            else ""
        )
        refused = Review(**_NOTHING, guarded=guarded, refused=why or "mkdocs.yml cannot be read (the error above)")
        _print(refused, base, shown_head, format)
        if isinstance(err, BenchledgerError):
            fail(err.problems)
        raise typer.Exit(1) from None
    _print(found, base, shown_head, format)
    failing = found.failing(tuple(fail_on or ()))
    for reason in failing:
        typer.echo(f"Failing on {reason}", err=True)
    if failing:
        raise typer.Exit(1)


_NOTHING: dict[str, Any] = dict(
    added=(), changed=(), removed=(), verdicts=(), corrections=(), grids=(), stale=(), problems=(), judged=False
)


def _review(repo: Path, start: str, head: str | None, guarded: tuple[tuple[str, str], ...]) -> Review:
    """Both sides read and judged (the head's signatures with the base's allowed_signers), and
    what differs between them."""
    from ..analysis.review import judge, under
    from ..analysis.review import review as diff_sides
    from ..analysis.review_config import (
        code_folders,
        history_settings,
        hook_paths,
        settings_changes,
        signer_changes,
        workflow_summary,
    )
    from ..ledger.snapshot import file_at, guarded_changes, snapshot
    from ..render.verdict_text import effect

    with tempfile.TemporaryDirectory(prefix="benchledger-review-") as scratch:
        sides = (("base", start), ("head", head))
        roots = [repo if ref is None else snapshot(repo, ref, Path(scratch) / name) for name, ref in sides]
        labels = (f"merge base {start[:12]}", head or "the working tree")
        read = [_settings(root, label, root != repo) for root, label in zip(roots, labels, strict=True)]
        (before_config, before_docs, before_settings), (after_config, after_docs, after_settings) = read
        configs = [before_config, after_config]
        before = judge(roots[0], before_docs, before_settings)
        after = judge(roots[1], after_docs, after_settings, signers_from=before.ledger)
    measured = {claim_id: effect(ev) for claim_id, ev in after.evaluations.items()}
    again = under(after, before.settings) if after.settings != before.settings else None
    found = diff_sides(before, after, measured, again, history_settings(after_config))
    hooks = hook_paths(*configs)
    specs = [f":(literal){h}" for h in hooks]  # a hook's name is the change's: never pathspec magic
    folders = code_folders(*configs)  # what a hook imports and the theme's templates: code too
    specs += [f":(literal){folder}" if folder else ":(glob)*.py" for folder, _ in folders]
    specs.append(":(literal)requirements-site.txt")  # what the publish workflow installs
    guarded += tuple(c for c in guarded_changes(repo, start, head, specs) if c not in guarded)
    flows = [
        (path, workflow_summary(text))
        for path, how in guarded
        if path.startswith(".github/workflows/") and how != "removed" and (text := file_at(repo, head, path))
    ]
    return replace(
        found,
        guarded=guarded,
        workflows=tuple((path, triggers, hosted) for path, (triggers, hosted) in flows),
        hooks=hooks,
        code_folders=folders,
        settings=settings_changes(*configs),
        signers=signer_changes(before.ledger.allowed_signers, after.ledger.allowed_signers),
    )


def _settings(root: Path, ref: str, snapshotted: bool) -> tuple[dict[str, Any], str, Settings]:
    """A side's mkdocs.yml, docs folder and verdict settings, or a BenchledgerError naming the
    revision (the reason itself is printed on stderr: it names a scratch path). In a revision's
    snapshot, a link out of it at mkdocs.yml or in the docs folder is refused first
    (`refuse_links_out`); runs/ and allowed_signers refuse every link without reading it."""
    from ..ledger.snapshot import refuse_links_out

    try:
        if snapshotted:
            refuse_links_out(root, ["mkdocs.yml"], ref)
            docs_dir = mkdocs_yaml(root).get("docs_dir") or "site_src"
            named = root / docs_dir if isinstance(docs_dir, str) else root  # not a name: docs_dir_of says so
            inside = Path(os.path.realpath(named)).is_relative_to(root.resolve()) or named.is_symlink()
            refuse_links_out(root, [named.relative_to(root).as_posix()] if inside and named != root else [], ref)
        docs = docs_dir_of(root).relative_to(root.resolve()).as_posix()
        return mkdocs_yaml(root), docs, verdict_settings(root, None, None)
    except typer.Exit:
        raise BenchledgerError(
            f"{ref}: mkdocs.yml cannot be read (a YAML syntax error, a docs_dir outside the repository or a "
            "verdict setting out of range); `benchledger check` on that revision names it"
        ) from None


def _print(found: Review, base: str, head: str, format: str) -> None:
    from ..render.review_text import review_json, review_markdown

    typer.echo(review_json(found, base, head) if format == "json" else review_markdown(found, base, head))
