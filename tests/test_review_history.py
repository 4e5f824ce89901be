"""`benchledger review` judges each added run against the current level of its series (its last
segment, not the run before it) and names a series the run would split: on a branch that adds
a slower nightly, one at the usual level, and one on a new driver."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_history import nightly
from test_review import cli, git

from helpers import MKDOCS_YML, publication, write_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _night(day: int, level: float, driver: str = "580.95") -> dict[str, str]:
    return nightly(day, build=6109 + day, driver=driver, level=level)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: ten nightlies, 44 tok/s for three nights then 40 tok/s (a change the segmentation
    finds), judged with min_effect 2%; branch `slower` adds night 11 at 36 tok/s, night 12 at
    40 tok/s, and night 13 on driver 590.12."""
    nights = publication(*(_night(day, 44.0 if day <= 3 else 40.0) for day in range(1, 11)))
    nights["mkdocs.yml"] = MKDOCS_YML.replace("  - benchledger\n", "  - benchledger:\n      min_effect: 0.02\n")
    root = write_tree(tmp_path_factory.mktemp("review") / "pub", nights)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "ten nightlies")
    git(root, "checkout", "-qb", "slower")
    write_tree(root, _night(11, 36.0) | _night(12, 40.0) | _night(13, 40.0, driver="590.12"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "three more nights")
    return root


LEVEL = [f"2026-10-{day:02d}-nightly" for day in range(4, 11)]  # the current segment: after 44 -> 40


def test_each_added_run_is_judged_against_the_current_level_of_its_series(repo: Path) -> None:
    """Night 11 is 9.4% below the 40 tok/s level of nights 4-10 (the 44 tok/s nights before the
    change play no part); night 12 is within 2% of it; night 13 would split the series."""
    code, out, _ = cli("review", "--base", "main", "--head", "slower", "--format", "json", "--repo", str(repo))
    assert code == 0
    history = json.loads(out)["history"]
    assert [
        (h["run"], h["verdict"], *(round(h[k], 3) if h[k] is not None else None for k in ("ratio", "low", "high")))
        for h in history
    ] == [
        ("2026-10-11-nightly", "worse", 0.906, 0.897, 0.914),
        ("2026-10-12-nightly", "within noise", 0.995, 0.987, 1.003),
        ("2026-10-13-nightly", None, None, None, None),
    ]
    assert [h["segment"] for h in history] == [LEVEL, LEVEL, []]
    assert history[0]["condition"] == [["concurrency", "1"]] and history[0]["metric"] == "tokens_per_second"
    assert history[2]["splits"] == [{"key": "accelerators.0.driver", "before": "580.95", "after": "590.12"}]
    assert history[2]["why"] == "would start a series of its own (accelerators.0.driver 580.95 → 590.12)"


def test_the_comment_shows_the_verdicts_and_the_split(repo: Path) -> None:
    code, out, _ = cli("review", "--base", "main", "--head", "slower", "--repo", str(repo))
    assert code == 0
    assert "**3 runs added, 1 added run worse than its series**" in out
    series = "decode&#58; tokens&#95;per&#95;second at concurrency&#61;1"
    against = "7 runs, `2026-10-04-nightly` … `2026-10-10-nightly`"
    assert (
        "| Run | Series | Against | Verdict |\n| --- | --- | --- | --- |\n"
        f"| `2026-10-11-nightly` | {series} | {against} | **worse** −9.4% [−10.3%, −8.6%] |\n"
        f"| `2026-10-12-nightly` | {series} | {against} | **within noise** −0.5% [−1.3%, +0.3%] |\n"
        f"| `2026-10-13-nightly` | {series} | — | not judged: would start a series of its own "
        "&#40;accelerators.0.driver 580.95 → 590.12&#41; |\n"
    ) in out


def test_fail_on_worse_fails_the_check_naming_the_run(repo: Path) -> None:
    code, _, err = cli("review", "--base", "main", "--head", "slower", "--fail-on", "worse", "--repo", str(repo))
    assert (code, err) == (
        1,
        "Failing on worse: 2026-10-11-nightly (decode: tokens_per_second) judged worse than the current level "
        "of its series\n",
    )


def test_an_added_run_a_history_file_excludes_is_not_judged_and_the_comment_names_the_entry(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", publication(*(_night(day, 40.0) for day in range(1, 6))))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "five nightlies")
    notes = "schema: benchledger.history/1\nexclude:\n  - run: 2026-10-06-nightly\n    reason: the fan was off\n"
    write_tree(root, _night(6, 30.0) | {"history/fan.yaml": notes})
    code, out, _ = cli("review", "--base", "main", "--format", "json", "--repo", str(root))
    assert code == 0
    (found,) = json.loads(out)["history"]
    assert (found["run"], found["verdict"], found["why"]) == (
        "2026-10-06-nightly",
        None,
        "excluded from its series by a history file: the fan was off (history/fan.yaml)",
    )
    assert json.loads(out)["notes"] == [
        {
            "how": "adds",
            "file": "history/fan.yaml",
            "kind": "exclude",
            "run": "2026-10-06-nightly",
            "narrowed": "",
            "words": "the fan was off",
        }
    ]
    code, comment, _ = cli("review", "--base", "main", "--repo", str(root))
    assert "**1 run added, 1 history-file entry changed**" in comment
    assert (
        "### History files\n\n- adds `history/fan.yaml`: **exclude** `2026-10-06-nightly`: the fan was off\n" in comment
    )
