"""A change to mkdocs.yml is named with what it changes: hooks (code the publish build runs) and
plugins added or removed, the verdict settings old → new; and a verdict that a changed setting
flipped says so (issue 34: medium #5, build item 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_review import cli, git, pub  # noqa: F401  (pub is a fixture)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _settle(root: Path, edit: str) -> None:
    """mkdocs.yml's benchledger plugin entry replaced by `edit`, on a branch."""
    git(root, "checkout", "-qb", "pr")
    mkdocs = root / "mkdocs.yml"
    mkdocs.write_text(mkdocs.read_text().replace("  - benchledger\n", edit))
    git(root, "commit", "-qam", "settings")


def test_an_added_hook_and_plugin_and_a_lowered_confidence_are_named(pub: Path) -> None:  # noqa: F811
    _settle(pub, "  - benchledger:\n      confidence: 0.6\n  - macros\nhooks:\n  - hooks/publish.py\n")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    assert out.splitlines()[1] == (
        "> **⚠ `mkdocs.yml` (changed):** hook added: `hooks/publish.py` (code the publish build runs); "
        "plugin added: `macros`; `confidence` 0.95 → 0.6. The site's settings and the code its build runs "
        "(hooks, plugins, confidence, min_effect)."
    )


def test_a_removed_hook_is_named(pub: Path) -> None:  # noqa: F811
    mkdocs = pub / "mkdocs.yml"
    mkdocs.write_text(mkdocs.read_text() + "hooks:\n  - hooks/a.py\n")
    git(pub, "commit", "-qam", "a hook")
    git(pub, "checkout", "-qb", "pr")
    mkdocs.write_text(mkdocs.read_text().replace("hooks:\n  - hooks/a.py\n", "hooks: [hooks/b.py]\n"))
    git(pub, "commit", "-qam", "another hook")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    assert "hook added: `hooks/b.py` (code the publish build runs); hook removed: `hooks/a.py`." in out


def test_a_verdict_flipped_by_a_raised_min_effect_names_the_setting_as_its_cause(pub: Path) -> None:  # noqa: F811
    _settle(pub, "  - benchledger:\n      min_effect: 0.5\n")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("| `fast-is-faster`")]
    assert row.split("|")[2:4] == [" supported ", " **inconclusive** "]
    assert (
        "- `fast-is-faster`: changed by mkdocs.yml (`min_effect` 0.01 → 0.5), not by the data; "
        "with the base's settings it reads supported"
    ) in out.splitlines()


def test_an_edited_hook_file_is_named_as_code_the_build_runs(pub: Path) -> None:  # noqa: F811
    mkdocs = pub / "mkdocs.yml"
    mkdocs.write_text(mkdocs.read_text() + "hooks:\n  - hooks/publish.py\n")
    (pub / "hooks").mkdir()
    (pub / "hooks" / "publish.py").write_text("def on_config(config):\n    return config\n")
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "a hook")
    git(pub, "checkout", "-qb", "pr")
    (pub / "hooks" / "publish.py").write_text("import os\n\ndef on_config(config):\n    os.system('id')\n")
    git(pub, "commit", "-qam", "the hook runs something")
    code, out, _ = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 0
    assert (
        out.splitlines()[1]
        == "> **⚠ `hooks/publish.py` (changed):** a hook mkdocs.yml names: code the publish build runs."
    )
    assert "No run, claim" not in out


def test_a_setting_that_aliases_blow_up_is_refused_in_a_line(pub: Path) -> None:  # noqa: F811
    levels = ["x_a: &a [x, x, x, x, x, x, x, x, x]"]
    levels += [f"x_{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdef", "bcdefg", strict=True)]
    git(pub, "checkout", "-qb", "pr")
    mkdocs = pub / "mkdocs.yml"
    text = mkdocs.read_text().replace("  - benchledger\n", "  - benchledger:\n      min_effect: *g\n")
    mkdocs.write_text("\n".join(levels) + "\n" + text)
    git(pub, "commit", "-qam", "a bomb")
    code, out, err = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 1 and "**Review refused:** pr&#58; mkdocs.yml cannot be read" in out
    (first, _) = err.splitlines()
    assert first.endswith("plugins.benchledger.min_effect: a list is not a number in [0, 1); e.g. 0.01")


def test_a_docs_dir_that_is_not_a_folder_name_is_refused_without_reading_it_whole(pub: Path) -> None:  # noqa: F811
    levels = ["x_a: &a [x, x, x, x, x, x, x, x, x]"]
    levels += [f"x_{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi", strict=True)]
    git(pub, "checkout", "-qb", "pr")
    mkdocs = pub / "mkdocs.yml"
    mkdocs.write_text("\n".join(levels) + "\n" + mkdocs.read_text().replace("docs_dir: site_src", "docs_dir: *i"))
    git(pub, "commit", "-qam", "a bomb")
    code, out, err = cli("review", "--base", "main", "--head", "pr", "--repo", str(pub))
    assert code == 1 and "**Review refused:** pr&#58; mkdocs.yml cannot be read" in out
    assert err.splitlines()[0].endswith(
        "mkdocs.yml: docs_dir: a list is not a folder name; write e.g. docs_dir: site_src"
    )
