"""Nothing from outside the repository is published: a symlink under the docs folder that
leads outside it is refused by check and build, naming the file; entries that are not
regular files (a FIFO called x.md, a folder called x.md) are named, never a hang or a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import cli

TOKEN = "FAKE_TOKEN_5f1c2e9a"
FIX = "replace the link with a copy of the file you mean to publish, or remove it"


def build(repo: Path) -> subprocess.CompletedProcess[str]:
    """A build in its own process, with a secret in its environment."""
    command = [sys.executable, "-m", "generator.cli", "build", "--repo", str(repo)]
    return subprocess.run(command, env={**os.environ, TOKEN: TOKEN}, capture_output=True, text=True, timeout=300)


def published(repo: Path) -> str:
    site = repo / "site"
    return "".join(p.read_bytes().decode(errors="replace") for p in site.rglob("*") if p.is_file())


def test_a_link_to_the_build_environment_is_refused_and_no_token_is_published(repo: Path) -> None:
    (repo / "site_src" / "env.txt").symlink_to("/proc/self/environ")
    done = build(repo)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        "site_src/env.txt: is a symlink to '/proc/self/environ', outside the repository: the site would publish "
        f"that file; {FIX}"
    ) in done.stderr
    assert not (repo / "site").exists() or TOKEN not in published(repo)


def test_a_link_to_a_file_outside_the_repository_is_refused(repo: Path, sentinel: Path) -> None:
    secret = sentinel / "secret.txt"
    secret.write_text(TOKEN)
    (repo / "site_src" / "reports").mkdir()
    (repo / "site_src" / "reports" / "passwd.txt").symlink_to(secret)
    expected = f"Error: site_src/reports/passwd.txt: is a symlink to '{secret}', outside the repository"
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and expected in out, out
    done = build(repo)
    assert done.returncode == 1 and expected in done.stderr
    assert not (repo / "site").exists() or TOKEN not in published(repo)


def test_a_linked_folder_inside_the_repository_is_walked(repo: Path, sentinel: Path) -> None:
    (repo / "extra").mkdir()
    (repo / "extra" / "leak.txt").symlink_to(sentinel / "precious.txt")
    (repo / "site_src" / "extra").symlink_to("../extra")
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert "Error: site_src/extra/leak.txt: is a symlink to " in out and "outside the repository" in out


def test_a_link_inside_the_repository_is_accepted(repo: Path) -> None:
    (repo / "README.md").write_text("# Readme\n")
    (repo / "site_src" / "readme.md").symlink_to("../README.md")
    assert cli("check", "--repo", str(repo)) == (0, "1 runs, 0 reports, 0 claims: no problems\n")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing.txt", "is a symlink to 'missing.txt', which does not exist; " + FIX),
        ("link.txt", "is a symlink loop ('link.txt'); remove it"),
    ],
)
def test_dangling_links_and_loops_are_named(repo: Path, target: str, message: str) -> None:
    (repo / "site_src" / "link.txt").symlink_to(target)
    code, out = cli("check", "--repo", str(repo))
    assert code == 1 and f"Error: site_src/link.txt: {message}\n" in out, out


def test_a_fifo_named_like_a_report_does_not_hang_check(repo: Path) -> None:
    (repo / "site_src" / "reports").mkdir()
    os.mkfifo(repo / "site_src" / "reports" / "x.md")
    command = [sys.executable, "-m", "generator.cli", "check", "--repo", str(repo)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)  # a hang fails here
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        "Error: site_src/reports/x.md: is not a regular file or folder (a FIFO, socket or device); remove it\n"
        in done.stderr
    )


def test_a_folder_named_like_a_report_is_no_traceback(repo: Path) -> None:
    (repo / "site_src" / "reports" / "old.md").mkdir(parents=True)
    assert cli("check", "--repo", str(repo)) == (0, "1 runs, 0 reports, 0 claims: no problems\n")


def test_a_theme_folder_outside_the_repository_is_refused(repo: Path, sentinel: Path) -> None:
    """MkDocs publishes every file of theme.custom_dir that is not a template."""
    from helpers import MKDOCS_YML

    (sentinel / "secret.txt").write_text(TOKEN)
    (repo / "mkdocs.yml").write_text(
        MKDOCS_YML.replace("  name: material\n", f"  name: material\n  custom_dir: {sentinel}\n")
    )
    message = (
        f"mkdocs.yml: theme.custom_dir: {sentinel} is outside the repository, and MkDocs publishes the files in it"
    )
    code, out = cli("build", "--repo", str(repo))
    assert code == 1 and f"Error: {message}; use a folder inside it\n" in out, out
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=repo, capture_output=True, text=True)
    assert done.returncode != 0 and message in done.stderr
    assert not (repo / "site").exists() or TOKEN not in published(repo)


def test_a_link_out_of_an_inside_theme_folder_is_refused(repo: Path, sentinel: Path) -> None:
    from helpers import MKDOCS_YML

    (repo / "overrides").mkdir()
    (repo / "overrides" / "leak.txt").symlink_to(sentinel / "precious.txt")
    (repo / "mkdocs.yml").write_text(
        MKDOCS_YML.replace("  name: material\n", "  name: material\n  custom_dir: overrides\n")
    )
    code, out = cli("build", "--repo", str(repo))
    assert code == 1 and "Error: overrides/leak.txt: is a symlink to " in out and "outside the repository" in out


@pytest.mark.parametrize("link", ["../.git/config", "../.git"])
def test_a_link_into_git_s_own_files_is_refused_and_no_token_is_published(repo: Path, link: str) -> None:
    """actions/checkout keeps the job's token in .git/config (persist-credentials defaults to true):
    a link to it, or to .git, is inside the repository's folder but no file of the repository."""
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text(
        f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n'
    )
    (repo / "site_src" / "notes.txt").symlink_to(link)
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert (
        f"Error: site_src/notes.txt: is a symlink to '{link}', inside .git: the site would publish git's own files "
        f"(a CI checkout keeps its token in .git/config), which are no file of the repository; {FIX}\n"
    ) in out, out
    done = build(repo)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert not (repo / "site").exists() or TOKEN not in published(repo)


@pytest.mark.parametrize(("where", "link"), [("site_src/up", ".."), ("site_src/reports/self", ".")])
def test_a_link_to_a_folder_holding_it_is_refused_not_followed_without_end(repo: Path, where: str, link: str) -> None:
    """MkDocs walks the docs folder following links: one to a folder that holds it never ends
    (an OSError traceback after tens of megabytes of site), and would publish the whole repository."""
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    (repo / where).symlink_to(link)
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert (
        f"Error: {where}: is a symlink to '{link}', a folder that holds the link or the docs folder: MkDocs would "
        "follow it without end (and publish everything beside it); remove it\n"
    ) in out, out
    done = build(repo)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_a_theme_custom_dir_of_git_s_own_files_is_refused(repo: Path) -> None:
    """MkDocs publishes every file of theme.custom_dir: `custom_dir: .git` put .git/config, with the
    token a CI checkout keeps there, on the site."""
    from helpers import MKDOCS_YML

    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text(
        f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n'
    )
    (repo / "mkdocs.yml").write_text(MKDOCS_YML.replace("  name: material\n", "  name: material\n  custom_dir: .git\n"))
    code, out = cli("check", "--repo", str(repo))
    assert code == 1
    assert (
        f"Error: mkdocs.yml: theme.custom_dir: {(repo / '.git').resolve()} is or lies inside .git, and MkDocs "
        "publishes the files in it (a CI checkout keeps its token in .git/config); use a folder of the "
        "repository's own files, e.g. overrides\n"
    ) in out, out
    done = build(repo)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert not (repo / "site").exists() or TOKEN not in published(repo)


def test_the_scaffolded_publish_build_keeps_no_token_in_git_config(tmp_path: Path) -> None:
    """actions/checkout writes the job's token into .git/config unless told not to; the publish
    build pushes nothing, so nothing a link or a setting missed can publish it."""
    import yaml

    assert cli("init", str(tmp_path / "pub"))[0] == 0
    publish = yaml.safe_load((tmp_path / "pub" / ".github" / "workflows" / "publish.yml").read_text())
    checkout = publish["jobs"]["build"]["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {"persist-credentials": False}
