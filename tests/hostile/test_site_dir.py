"""`build --site-dir DIR` empties DIR before it builds (MkDocs removes every entry whose name
does not start with a dot). A folder that holds anything else than a site benchledger built
(it writes .benchledger-site into every site) is emptied only with --force; an empty or
missing folder, or one holding only hidden entries MkDocs keeps, is fine."""

from __future__ import annotations

from pathlib import Path

from conftest import tree_digest

from helpers import cli

MARKER = ".benchledger-site"
MARKER_TEXT = (
    "benchledger built this site. `benchledger build --site-dir` empties this folder and builds it again "
    "without asking while this file is here.\n"
)


def test_a_folder_of_someone_s_work_is_not_emptied(repo: Path, sentinel: Path) -> None:
    (sentinel / "thesis").mkdir()
    (sentinel / "thesis" / "chapter1.tex").write_text("three years\n")
    before = tree_digest(sentinel)
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(sentinel))
    assert code == 1
    assert out.endswith(
        f"Error: --site-dir: {sentinel.resolve()} holds mkdocs.yml, precious.txt, thesis/ and no {MARKER} "
        "(the mark of a site benchledger built); MkDocs deletes them before it builds. Pass --force to empty "
        "it, or choose an empty or new folder\n"
    ), out
    assert tree_digest(sentinel) == before


def test_a_file_is_not_a_site_dir(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(target))
    assert code == 1
    assert out.endswith(f"Error: --site-dir: {target.resolve()} is a file; give a folder for the site\n"), out
    assert target.read_text() == "mine\n"


def test_a_long_listing_is_cut_short(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(7):
        (folder / f"f{n}.txt").write_text("x")
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(folder))
    assert code == 1
    assert f"{folder.resolve()} holds f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more and no {MARKER}" in out


def test_a_new_folder_is_built_marked_and_built_again(repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "out" / "site"
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(site))
    assert code == 0, out
    assert (site / MARKER).read_text() == MARKER_TEXT
    assert (site / "index.html").is_file()
    (site / "stale.html").write_text("from an older build")
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(site))  # a previous site: no --force
    assert code == 0, out
    assert not (site / "stale.html").exists() and (site / MARKER).is_file()


def test_force_empties_a_folder_and_hidden_entries_are_kept(repo: Path, sentinel: Path) -> None:
    (sentinel / ".git").mkdir()  # e.g. a gh-pages worktree: MkDocs keeps hidden entries
    (sentinel / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(sentinel), "--force")
    assert code == 0, out
    assert not (sentinel / "precious.txt").exists() and (sentinel / "index.html").is_file()
    assert (sentinel / ".git" / "HEAD").read_text() == "ref: refs/heads/gh-pages\n"


def test_a_folder_of_hidden_entries_only_needs_no_force(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "worktree"
    folder.mkdir()
    (folder / ".git").write_text("gitdir: elsewhere\n")
    code, out = cli("build", "--repo", str(repo), "--site-dir", str(folder))
    assert code == 0, out
    assert (folder / ".git").read_text() == "gitdir: elsewhere\n" and (folder / MARKER).is_file()


def test_a_committed_site_dir_of_someone_s_work_is_not_emptied(repo: Path) -> None:
    """mkdocs.yml is anyone's (a pull request's): `site_dir: notes` emptied a folder of the
    repository's own files without --force."""
    from helpers import MKDOCS_YML

    (repo / "notes").mkdir()
    (repo / "notes" / "thesis.tex").write_text("three years\n")
    (repo / "mkdocs.yml").write_text(MKDOCS_YML + "site_dir: notes\n")
    code, out = cli("build", "--repo", str(repo))
    assert code == 1
    assert out.endswith(
        f"Error: site_dir: {(repo / 'notes').resolve()} holds thesis.tex and no {MARKER} (the mark of a site "
        "benchledger built); MkDocs deletes them before it builds. Pass --force to empty it, or choose an empty or "
        "new folder\n"
    ), out
    assert (repo / "notes" / "thesis.tex").read_text() == "three years\n"
    code, out = cli("build", "--repo", str(repo), "--force")
    assert code == 0, out
    assert not (repo / "notes" / "thesis.tex").exists() and (repo / "notes" / MARKER).is_file()


def test_a_plain_mkdocs_build_does_not_empty_a_committed_site_dir_of_someone_s_work(repo: Path) -> None:
    """`mkdocs build` without benchledger's CLI runs only the plugin: it refuses the same folder
    before MkDocs empties it (it emptied notes/, thesis and all), and builds a folder it marked."""
    import os
    import subprocess
    import sys

    from helpers import MKDOCS_YML

    (repo / "notes").mkdir()
    (repo / "notes" / "thesis.tex").write_text("three years\n")
    (repo / "mkdocs.yml").write_text(MKDOCS_YML + "site_dir: notes\n")
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "-q"]
    done = subprocess.run(mkdocs, cwd=repo, capture_output=True, text=True, env=os.environ)
    assert done.returncode != 0
    assert (
        f"site_dir: {(repo / 'notes').resolve()} holds thesis.tex and no {MARKER} (the mark of a site benchledger "
        "built); MkDocs deletes them before it builds. Empty it yourself (or run benchledger build --force), or "
        "choose an empty or new folder" in " ".join(done.stderr.split())
    ), done.stderr
    assert (repo / "notes" / "thesis.tex").read_text() == "three years\n"
    (repo / "notes" / "thesis.tex").unlink()
    done = subprocess.run(mkdocs, cwd=repo, capture_output=True, text=True, env=os.environ)
    assert done.returncode == 0, done.stderr
    done = subprocess.run(mkdocs, cwd=repo, capture_output=True, text=True, env=os.environ)  # its own site again
    assert done.returncode == 0 and (repo / "notes" / MARKER).is_file(), done.stderr
