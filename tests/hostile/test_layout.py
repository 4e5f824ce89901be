"""The folders MkDocs empties and fills never overlap the publication: a site folder that is,
holds or lies in runs/, the docs folder or the repository is refused before anything is
deleted, and a docs folder holding runs/ is refused before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import tree_digest

from helpers import MKDOCS_YML, cli

FIX = "MkDocs empties the site folder before it builds; use a folder of its own, e.g. site"


@pytest.mark.parametrize(
    ("given", "what"),
    [
        ("runs", "is, holds or lies inside runs/"),
        ("runs/2026-09-01-measured", "is, holds or lies inside runs/"),
        (".", "is the repository or a folder above it"),
        ("..", "is the repository or a folder above it"),
        ("site_src", "is, holds or lies inside docs_dir"),
    ],
)
def test_a_site_dir_over_the_publication_is_refused(repo: Path, given: str, what: str) -> None:
    before = tree_digest(repo.parent)
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(repo / given))
    assert code == 1
    assert f"Error: --site-dir: {(repo / given).resolve()} {what}; {FIX}\n" in out, out
    assert tree_digest(repo.parent) == before


def test_a_committed_site_dir_outside_the_repository_is_refused(repo: Path, sentinel: Path) -> None:
    (repo / "mkdocs.yml").write_text(MKDOCS_YML + f"site_dir: ../{sentinel.name}\n")
    before = tree_digest(sentinel)
    code, out = cli("build", "--repo", str(repo))
    assert code == 1
    assert (
        f"site_dir: {sentinel} is outside the repository, and MkDocs empties it before it builds; use a folder "
        "inside it, e.g. site, or pass --site-dir to build elsewhere\n"
    ) in out
    assert tree_digest(sentinel) == before


def test_a_committed_site_dir_of_runs_is_refused_by_mkdocs_itself(repo: Path) -> None:
    """`mkdocs build` without benchledger's CLI: the plugin refuses before MkDocs cleans."""
    (repo / "mkdocs.yml").write_text(MKDOCS_YML + "site_dir: runs\n")
    before = tree_digest(repo / "runs")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q"], cwd=repo, capture_output=True, text=True, env=os.environ
    )
    assert done.returncode != 0
    assert f"mkdocs.yml: site_dir: {repo.resolve() / 'runs'} is, holds or lies inside runs/; {FIX}" in done.stderr
    assert tree_digest(repo / "runs") == before
    for command in ("check", "build"):
        code, out = cli(command, "--repo", str(repo))
        assert code == 1 and f"Error: mkdocs.yml: site_dir: {repo.resolve() / 'runs'} is, holds or lies" in out


def test_a_docs_dir_holding_runs_is_refused_and_nothing_is_written(repo: Path) -> None:
    (repo / "mkdocs.yml").write_text(MKDOCS_YML.replace("docs_dir: site_src", "docs_dir: ."))
    before = tree_digest(repo)
    message = (
        "Error: mkdocs.yml: docs_dir: . holds runs/ or lies inside it: pages and copies would be written into "
        "the committed run folders; use a folder of its own, e.g. docs_dir: site_src\n"
    )
    for command in ("check", "generate", "build"):
        code, out = cli(command, "--repo", str(repo))
        assert code == 1 and message in out, (command, out)
    assert tree_digest(repo) == before


def test_a_docs_dir_outside_the_repository_is_refused_by_plain_mkdocs_too(repo: Path, sentinel: Path) -> None:
    (repo / "mkdocs.yml").write_text(MKDOCS_YML.replace("docs_dir: site_src", f"docs_dir: {sentinel}"))
    before = tree_digest(sentinel)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q"], cwd=repo, capture_output=True, text=True, env=os.environ
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"mkdocs.yml: docs_dir: {sentinel} is outside the repository; use a folder inside it" in done.stderr
    assert tree_digest(sentinel) == before


@pytest.mark.parametrize(
    ("given", "hidden"), [(".git", ".git"), (".git/objects", ".git"), (".github/workflows", ".github")]
)
def test_a_committed_site_dir_in_a_hidden_folder_is_refused(repo: Path, given: str, hidden: str) -> None:
    """A pull request that sets `site_dir: .git` would have the next local build empty the
    repository's history (MkDocs keeps only dot-entries, and git's have none); .github would lose
    the workflows. Refused by check, build and plain MkDocs before anything is deleted."""
    (repo / ".git" / "objects").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "publish.yml").write_text("on: push\n")
    (repo / "mkdocs.yml").write_text(MKDOCS_YML + f"site_dir: {given}\n")
    before = tree_digest(repo)
    message = (
        f"site_dir: {(repo / given).resolve()} is or lies inside {hidden}, a hidden folder of the repository; {FIX}"
    )
    for command in ("check", "build"):
        code, out = cli(command, "--repo", str(repo))
        assert code == 1 and f"Error: mkdocs.yml: {message}\n" in out, (command, out)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q"], cwd=repo, capture_output=True, text=True, env=os.environ
    )
    assert done.returncode != 0 and message in done.stderr, done.stderr
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(repo / given), "--force")
    assert code == 1 and f"Error: --site-dir: {message.removeprefix('site_dir: ')}\n" in out, out
    assert tree_digest(repo) == before


def test_a_docs_dir_inside_git_is_refused_and_nothing_is_written(repo: Path) -> None:
    """`docs_dir: .git` wrote the generated pages among git's files and published .git/config."""
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("[core]\n")
    (repo / "mkdocs.yml").write_text(MKDOCS_YML.replace("docs_dir: site_src", "docs_dir: .git"))
    before = tree_digest(repo)
    message = (
        "Error: mkdocs.yml: docs_dir: .git is or lies inside .git: pages would be written among git's own files and "
        ".git/config (with the token a CI checkout keeps there) published; use a folder of its own, e.g. docs_dir: "
        "site_src\n"
    )
    for command in ("check", "generate", "build"):
        code, out = cli(command, "--repo", str(repo))
        assert code == 1 and message in out, (command, out)
    assert tree_digest(repo) == before


def test_a_mkdocs_yml_linked_out_of_the_repository_is_never_read(repo: Path, tmp_path: Path) -> None:
    """A pull request may replace mkdocs.yml by a link to a secret: check and build read it, and
    its YAML error printed the secret's first line. Now they refuse the link, naming it."""
    secret = tmp_path / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA: [\n")
    (repo / "mkdocs.yml").unlink()
    (repo / "mkdocs.yml").symlink_to(secret)
    for command in ("check", "build"):
        code, out = cli(command, "--repo", str(repo))
        assert code == 1 and "BEGIN OPENSSH" not in out and "b3BlbnNzaC1" not in out, out
        assert (
            f"Error: {repo / 'mkdocs.yml'}: a link to {secret.resolve()}, outside the repository; benchledger reads "
            "only the repository's own files: put mkdocs.yml itself in the repository" in " ".join(out.split())
        ), out
