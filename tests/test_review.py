"""`benchledger review`: what a commit does to a publication, as a pull-request comment."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.analysis.review import Review, VerdictChange
from generator.cli import app
from helpers import measured_run, publication, write_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BASE, FAST = "2026-09-01-base", "2026-09-01-fast"
CLAIM = {
    "id": "fast-is-faster",
    "date": "2026-09-02",
    "statement": "The fast run is faster at concurrency 1.",
    "metric": "tokens_per_second",
    "baseline": BASE,
    "candidate": FAST,
    "at": {"concurrency": 1},
}


def _results(scale: float) -> str:
    rows = [(1, 31.2), (2, 30.8), (3, 31.0), (4, 30.9), (5, 31.4)]
    return "trial,concurrency,tokens_per_second\n" + "".join(f"{i},1,{v * scale:.2f}\n" for i, v in rows)


def _run(run_id: str, scale: float) -> dict[str, str]:
    files = measured_run(run_id, metrics={"tokens_per_second": {"unit": "tok/s", "better": "higher"}}, rates={})
    files.pop(f"runs/{run_id}/requests.csv")
    return files | {f"runs/{run_id}/results.csv": _results(scale)}


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, env=env | {"PATH": "/usr/bin:/bin"}
    )


@pytest.fixture
def pub(tmp_path: Path) -> Path:
    report = "---\n" + yaml.safe_dump({"title": "Speed", "claims": [CLAIM]}) + "---\n\n# Speed\n"
    root = write_tree(
        tmp_path / "pub", publication(_run(BASE, 1.0), _run(FAST, 1.2), extra={"site_src/reports/speed.md": report})
    )
    git(root, "init", "-q", "-b", "main")
    assert cli("verify", BASE, "--by", "Zak Example", "--method", "review", "--repo", str(root))[0] == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def _change(root: Path) -> None:
    """The candidate gets slower (the claim flips), a run is added, the verified run is edited."""
    (root / f"runs/{FAST}/results.csv").write_text(_results(0.8))
    write_tree(root, _run("2026-09-03-new", 1.0))
    results = root / f"runs/{BASE}/results.csv"
    results.write_text(results.read_text().replace("31.20", "31.25"))


def test_review_names_the_flipped_verdict_the_new_run_and_the_stale_receipt(pub: Path) -> None:
    _change(pub)
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", "head")
    code, out, _ = cli("review", "--base", "HEAD~1", "--head", "HEAD", "--repo", str(pub))
    assert code == 0, out
    assert out.splitlines()[:4] == [
        "<!-- benchledger review -->",
        "## benchledger review: HEAD&#126;1 → HEAD",
        "",
        "**1 run added, 2 runs changed, 1 claim verdict changed, 1 receipt gone stale, "
        "1 receipt state changed, 1 new problem**",
    ]
    assert "| `2026-09-03-new` | added |" in out  # ids as written: they match [a-z0-9._-]
    assert "| `2026-09-01-fast` | changed: edited `results.csv` |" in out
    assert "| `2026-09-01-base` | verified | **stale** |" in out
    (row,) = [line for line in out.splitlines() if line.startswith("| `fast-is-faster`")]
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[1:3] == ["supported", "**contradicted**"]
    assert cells[3].startswith("−20.0&#37; &#91;")  # the measured effect after the change (a minus sign)
    assert "- `2026-09-01-base`: its files changed after a receipt vouched for them" in out
    (problem,) = [line for line in out.splitlines() if line.startswith("- warning: ")]
    assert "stale&#58; results.csv changed since it was written" in problem


def test_review_fails_only_on_what_fail_on_names(pub: Path) -> None:
    _change(pub)  # the working tree, uncommitted: the default head
    assert cli("review", "--base", "main", "--repo", str(pub), "--fail-on", "overstated")[0] == 0
    code, out, err = cli(
        "review", "--base", "main", "--repo", str(pub), "--fail-on", "contradicted", "--fail-on", "stale"
    )
    assert code == 1
    assert err.splitlines() == [
        "Failing on contradicted: fast-is-faster",
        "Failing on stale: receipts of 2026-09-01-base vouch for less than before",
    ]
    assert "working tree" in out


def test_review_as_json(pub: Path) -> None:
    _change(pub)
    code, out, _ = cli("review", "--base", "main", "--format", "json", "--repo", str(pub))
    assert code == 0
    data = json.loads(out)
    assert (data["added"], data["stale"]) == (["2026-09-03-new"], [BASE])
    (change,) = data["verdicts"]
    assert (change["id"], change["before"], change["after"]) == ("fast-is-faster", "supported", "contradicted")


def test_review_of_an_unchanged_tree_says_so(pub: Path) -> None:
    code, out, _ = cli("review", "--base", "HEAD", "--repo", str(pub))
    assert code == 0
    assert "No run, claim, grid, receipt or problem changes." in out


def test_review_refuses_what_is_not_a_revision(pub: Path) -> None:
    code, _, err = cli("review", "--base", "no-such-branch", "--repo", str(pub))
    assert code == 1
    assert "'no-such-branch' is not a revision of the repository" in err
    code, _, err = cli("review", "--base", "--upload-pack=evil", "--repo", str(pub))
    assert code != 0


def _commit_on(pub: Path, branch: str) -> None:
    git(pub, "checkout", "-q", "-b", branch)
    git(pub, "add", "-A")
    git(pub, "commit", "-qm", branch)


def test_export_ignore_in_the_change_cannot_hide_a_run_from_review(pub: Path) -> None:
    write_tree(pub, _run("2026-09-03-hidden", 1.0))
    (pub / ".gitattributes").write_text("runs/2026-09-03-hidden export-ignore\n.gitattributes export-ignore\n")
    _commit_on(pub, "hx")
    code, out, _ = cli("review", "--base", "main", "--head", "hx", "--repo", str(pub))
    assert code == 0 and "| `2026-09-03-hidden` | added |" in out


def test_a_symlink_in_the_change_is_refused_not_followed(pub: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    (pub / "runs" / BASE / "notes.txt").symlink_to(tmp_path / "outside.txt")
    _commit_on(pub, "hs")
    code, out, _ = cli("review", "--base", "main", "--head", "hs", "--repo", str(pub))
    assert code == 0  # read as check reads a checkout: the link is its problem, never followed
    assert "runs&#47;2026&#45;09&#45;01&#45;base&#47;notes.txt&#58; is a symlink&#59;" in out
    assert "secret" not in out


def test_a_publication_in_a_sub_folder_of_its_repository(tmp_path: Path) -> None:
    report = "---\n" + yaml.safe_dump({"title": "Speed", "claims": [CLAIM]}) + "---\n\n# Speed\n"
    files = publication(_run(BASE, 1.0), _run(FAST, 1.2), extra={"site_src/reports/speed.md": report})
    top = tmp_path / "mono"
    write_tree(top / "pub", files)
    (top / "README.md").write_text("other things\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "base")
    (top / "pub" / f"runs/{FAST}/results.csv").write_text(_results(0.8))
    git(top, "commit", "-qam", "head")
    code, out, _ = cli("review", "--base", "HEAD~1", "--head", "HEAD", "--repo", str(top / "pub"))
    assert code == 0
    assert "| `2026-09-01-fast` | changed: edited `results.csv` |" in out and "**contradicted**" in out


def test_a_broken_side_is_not_judged_rather_than_everything_removed(pub: Path) -> None:
    (pub / f"runs/{FAST}/results.csv").write_text("not,a\nresults,table\n")
    _commit_on(pub, "hb")
    code, out, _ = cli("review", "--base", "main", "--head", "hb", "--repo", str(pub), "--fail-on", "removed")
    assert code == 0  # nothing was removed
    assert "A side has errors, so its verdicts could not be computed" in out and "(removed)" not in out


def test_an_edited_claim_and_a_mention_in_a_statement(pub: Path) -> None:
    edited = CLAIM | {"statement": "@octocat says #1: ten times faster, everywhere"}
    report = "---\n" + yaml.safe_dump({"title": "Speed", "claims": [edited]}) + "---\n\n# Speed\n"
    (pub / "site_src/reports/speed.md").write_text(report)
    _commit_on(pub, "he")
    code, out, _ = cli("review", "--base", "main", "--head", "he", "--repo", str(pub))
    assert code == 0
    assert "- `fast-is-faster`: its declaration changed (a claim is corrected by a new one)" in out
    code, out, _ = cli("review", "--base", "main", "--head", "he", "--repo", str(pub), "--format", "json")
    assert json.loads(out)["edited"] == ["fast-is-faster"]


def _verdicts_changed(*changes: VerdictChange) -> Review:
    """A review in which only these verdicts changed, both sides judged."""
    return Review(
        added=(),
        changed=(),
        removed=(),
        verdicts=changes,
        corrections=(),
        grids=(),
        stale=(),
        problems=(),
        judged=True,
    )


def test_fail_on_misattributed_trips_on_a_claim_shown_supported_and_misattributed() -> None:
    change = VerdictChange("c", "s", None, "supported · misattributed", "")
    found = _verdicts_changed(change)
    assert found.failing(("misattributed",)) == ["misattributed: c"]
    assert found.failing(("supported",)) == ["supported: c"]
    assert found.failing(("contradicted",)) == []


def test_statements_cannot_mention_people_or_link_issues_in_the_comment() -> None:
    from generator.render.review_text import review_markdown

    change = VerdictChange("c", "@octocat fixed #12", "supported", "contradicted", "")
    text = review_markdown(_verdicts_changed(change), "main", "HEAD")
    assert "&#64;&#8288;octocat fixed &#35;&#8288;12" in text
    huge = VerdictChange("d", "x" * 100_000, None, "supported", "")
    assert "x" * 300 not in review_markdown(_verdicts_changed(*(huge,) * 300), "a", "b")
    assert len(review_markdown(_verdicts_changed(*(huge,) * 300), "a", "b")) < 61_000
