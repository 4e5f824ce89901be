"""Committed history files (history/*.yaml): an excluded run drawn but left out of the
segmentation, an accepted change kept with its reason and no longer needing attention, an
annotation at its run; and every mistake in such a file a located error that check refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_history import nightly

from generator.analysis.audit import audit
from generator.analysis.history import Followed, Note, history
from generator.analysis.summaries import summarize_run
from helpers import cli, publication, write_tree

NOTES = """\
schema: benchledger.history/1
annotate:
  - run: 2026-10-08-nightly
    text: "known: flash-attention off by default from b6117"
exclude:
  - run: 2026-10-04-nightly
    metric: tokens_per_second
    reason: the fan was unplugged that night
accept:
  - run: 2026-10-08-nightly
    benchmark: decode
    condition: {concurrency: 1}
    reason: b6117 trades decode speed for exact sampling
"""


def _followed(root: Path) -> list[Followed]:
    checked = audit(root, stale_is_error=False)
    assert checked.errors == []
    ledger = checked.ledger
    summaries = {run.id: summarize_run(run) for run in ledger.runs.values()}
    return history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95, notes=ledger.history)


def _nights(*, slow_night: int | None = None) -> list[dict[str, str]]:
    """Nine nightlies of one driver: 40 tok/s until b6116, 36 tok/s from b6117; a slow night at 30."""
    return [
        nightly(day, build=6109 + day, driver="580.95", level=30.0 if day == slow_night else 40.0 if day < 8 else 36.0)
        for day in range(1, 10)
    ]


@pytest.fixture(scope="module")
def noted(tmp_path_factory: pytest.TempPathFactory) -> Followed:
    root = write_tree(
        tmp_path_factory.mktemp("notes"), publication(*_nights(slow_night=4), extra={"history/known.yaml": NOTES})
    )
    (followed,) = _followed(root)
    return followed


def test_an_excluded_run_is_drawn_but_left_out_with_its_reason(noted: Followed) -> None:
    points = {p.runs[0]: p for p in noted.series.points}
    assert len(points) == 9
    assert (points["2026-10-04-nightly"].excluded, points["2026-10-04-nightly"].segmented) == (True, False)
    assert sum(p.segmented for p in points.values()) == 8
    assert noted.excluded == (Note("2026-10-04-nightly", "the fan was unplugged that night", "history/known.yaml"),)
    assert noted.outliers == ()  # left out by the file, not found as an excursion


def test_an_accepted_change_is_kept_with_its_reason_and_needs_no_attention(noted: Followed) -> None:
    (change,) = noted.changes
    assert (change.before, change.after, change.verdict) == ("2026-10-07-nightly", "2026-10-08-nightly", "worse")
    assert change.accepted == Note(
        "2026-10-08-nightly", "b6117 trades decode speed for exact sampling", "history/known.yaml"
    )
    assert noted.attention == ()


def test_an_annotation_is_attached_to_its_series_and_to_the_change_at_its_run(noted: Followed) -> None:
    note = Note("2026-10-08-nightly", "known: flash-attention off by default from b6117", "history/known.yaml")
    assert noted.annotations == (note,)
    assert noted.changes[0].annotations == (note,)


def test_without_the_file_the_slow_night_is_an_excursion_and_the_change_needs_attention(tmp_path: Path) -> None:
    (followed,) = _followed(write_tree(tmp_path, publication(*_nights(slow_night=4))))
    assert followed.outliers == ("2026-10-04-nightly",)
    assert [(c.after, c.accepted) for c in followed.attention] == [("2026-10-08-nightly", None)]
    assert (followed.annotations, followed.excluded) == ((), ())


def test_a_condition_matches_as_results_csv_compares_it(tmp_path: Path) -> None:
    """concurrency: 1.0 names the condition 1, as claims' `at:` does."""
    other = NOTES.replace("condition: {concurrency: 1}", "condition: {concurrency: 1.0}")
    root = write_tree(tmp_path, publication(*_nights(slow_night=4), extra={"history/known.yaml": other}))
    (followed,) = _followed(root)
    assert followed.changes[0].accepted is not None and followed.attention == ()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            NOTES.replace("run: 2026-10-04-nightly", "run: 2026-10-4-nightly"),
            "history/known.yaml:6: exclude.0.run: run '2026-10-4-nightly' does not exist; did you mean",
        ),
        (
            NOTES.replace("metric: tokens_per_second", "metric: tokens"),
            "history/known.yaml:7: exclude.0.metric: 'tokens' is not a metric of run '2026-10-04-nightly'; "
            "its metrics are: tokens_per_second",
        ),
        (
            NOTES.replace("benchmark: decode", "benchmark: prefill"),
            "history/known.yaml:11: accept.0.benchmark: run '2026-10-08-nightly' is of benchmark 'decode', "
            "not 'prefill'; fix it or remove the line",
        ),
        (
            NOTES.replace("concurrency: 1}", "concurrency: 4}"),
            "history/known.yaml:12: accept.0.condition: {'concurrency': 4} selects no rows of run "
            "'2026-10-08-nightly'; values that exist: concurrency: 1",
        ),
        (
            NOTES.replace("exclude:", "excluded:"),
            "history/known.yaml:6: excluded: unknown key 'excluded'; remove it or correct its spelling",
        ),
        (
            NOTES.replace("    reason: the fan was unplugged that night\n", ""),
            "history/known.yaml:6: exclude.0.reason: missing; add `reason:`",
        ),
        (
            NOTES.replace("schema: benchledger.history/1", "schema: benchledger.history/2"),
            "history/known.yaml:1: schema: unknown schema version 'benchledger.history/2'",
        ),
    ],
)
def test_a_mistake_in_a_history_file_is_a_located_error_check_refuses(tmp_path: Path, text: str, found: str) -> None:
    root = write_tree(tmp_path, publication(*_nights(), extra={"history/known.yaml": text}))
    code, output = cli("check", "--repo", str(root))
    assert code == 1
    assert found in output, output


def test_a_file_in_history_that_is_not_yaml_is_a_warning_naming_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path, publication(*_nights(), extra={"history/notes.txt": "known: slow\n"}))
    problems = [str(p) for p in audit(root, stale_is_error=False).problems]
    assert problems == [
        "history/notes.txt: is not a history file; history/ holds <name>.yaml files (real files, not links): "
        "rename it or move it out"
    ]


def test_hostile_history_files_are_located_problems_never_tracebacks(tmp_path: Path) -> None:
    """Bytes that are not UTF-8, an alias bomb, a folder named like a file, and history/ as a link."""
    bomb = "schema: benchledger.history/1\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    root = write_tree(
        tmp_path / "pub", publication(*_nights(), extra={"history/a.yaml": b"\xff\xfe", "history/b.yaml": bomb})
    )
    (root / "history" / "c.yaml").mkdir()
    code, output = cli("check", "--repo", str(root))
    assert code == 1
    assert "history/a.yaml: is not UTF-8 text (byte 0); save it as UTF-8" in output
    assert "history/b.yaml:2: expands to more than 100,000 values (YAML aliases?)" in output
    assert "history/c.yaml: is not a history file" in output
    linked = write_tree(tmp_path / "linked", publication(*_nights()))
    (linked / "history").symlink_to(root / "history")
    code, output = cli("check", "--repo", str(linked))
    assert (code, "history: is a symlink; make history/ a real folder" in output) == (1, True)


def test_an_acceptance_that_accepts_no_change_any_more_is_a_warning(tmp_path: Path) -> None:
    """The change is at b6117 (night 8); an entry accepting one at night 6 accepts nothing."""
    moved = NOTES.replace("  - run: 2026-10-08-nightly\n    benchmark", "  - run: 2026-10-06-nightly\n    benchmark")
    root = write_tree(tmp_path, publication(*_nights(), extra={"history/known.yaml": moved}))
    code, output = cli("check", "--repo", str(root))
    assert code == 0
    assert (
        "Warning: history/known.yaml:10: accept.0.run: no change of its series starts at run '2026-10-06-nightly' "
        "any more (the boundary moved, or none is found): this entry accepts nothing; accept the change where it "
        "is now, or remove it"
    ) in output
    code, output = cli(
        "check",
        "--repo",
        str(write_tree(tmp_path / "kept", publication(*_nights(), extra={"history/known.yaml": NOTES}))),
    )
    assert code == 0 and "accept.0.run" not in output
