"""History on real data: ten pytest-benchmark saves of Djelibeybi/lifx-async, one per commit on
one machine (tests/fixtures/pytest-benchmark-history/SOURCES.md), imported one run each and
followed. The performance review's second phase (commit 7308c2b) is found where it landed, with
what moved; the benchmarks it did not touch show no change."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.analysis.audit import audit
from generator.analysis.history import Followed, Moved, history
from generator.analysis.summaries import summarize_run
from helpers import import_into

SAVES = sorted((Path(__file__).parent / "fixtures" / "pytest-benchmark-history").glob("*.json"))
CITE = ("--citation", "Avi Miller (lifx-async)", "--url", "https://github.com/Djelibeybi/lifx-async")


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Followed]:
    """Each save imported as its own run (lifx-0001 ... lifx-0010), then every series followed."""
    tmp = tmp_path_factory.mktemp("lifx")
    for save in SAVES:
        code, output, root = import_into(
            tmp, "pytest-benchmark", str(save), "--id", f"lifx-{save.name[:4]}", "--benchmark", "lifx-async", *CITE
        )
        assert code == 0, output
    ledger = audit(root, stale_is_error=False).ledger
    summaries = {run.id: summarize_run(run) for run in ledger.runs.values()}
    found = history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95)
    return {dict(f.series.condition)["benchmark"]: f for f in found}


def test_one_series_per_benchmark_ordered_by_when_each_save_was_made(followed: dict[str, Followed]) -> None:
    """Nine saves share a day (2026-03-18): each commit is still a point of its own, in the order
    pytest-benchmark saved them; a branch and a dirty tree move along the series, never split it."""
    assert len(followed) == 12
    assert {name: len(f.series.points) for name, f in followed.items() if len(f.series.points) != 10} == {
        "test_aurora_protocol_frame_128px": 5,
        "test_aurora_protocol_frame_320px": 5,
    }
    canvas = followed["test_apply_canvas_5_tile"].series
    assert [p.runs for p in canvas.points] == [(f"lifx-{i:04d}",) for i in range(1, 11)]
    assert [p.date for p in canvas.points] == ["2026-03-18"] * 9 + ["2026-03-19"]
    assert all(f.series.splits == () for f in followed.values())
    assert ("host.cpu", "Apple M4 Pro") in canvas.environment
    assert not any(key.startswith(("software.commit", "software.branch")) for key, _ in canvas.environment)


def test_the_performance_review_is_found_at_the_commit_that_made_it(followed: dict[str, Followed]) -> None:
    """Seven benchmarks got faster between save 0004 (commit 94bb3d6, branch full-review) and save
    0005 (7308c2b, review-perf_20260318, uncommitted changes): apply_canvas about four times
    faster, matrix and multizone colour updates a quarter faster. The commits between them say
    why: "pre-compute canvas-to-device LUT at init time" and "replace flat list building with
    direct struct.pack_into"."""
    steps = {
        name: (c.before, c.after, round(c.ratio, 3), round(c.low, 3), round(c.high, 3), c.verdict)
        for name, f in followed.items()
        for c in f.changes
        if c.kind == "step"
    }
    assert steps == {
        "test_apply_canvas_1_tile": ("lifx-0004", "lifx-0005", 0.281, 0.257, 0.308, "better"),
        "test_apply_canvas_5_tile": ("lifx-0004", "lifx-0005", 0.262, 0.257, 0.267, "better"),
        "test_apply_canvas_10_tile": ("lifx-0004", "lifx-0005", 0.24, 0.23, 0.251, "better"),
        "test_matrix_update_colors_64px": ("lifx-0004", "lifx-0005", 0.738, 0.714, 0.762, "better"),
        "test_matrix_update_colors_128px": ("lifx-0004", "lifx-0005", 0.733, 0.71, 0.757, "better"),
        "test_multizone_update_colors_82": ("lifx-0004", "lifx-0005", 0.777, 0.749, 0.807, "better"),
        "test_multizone_update_colors_120": ("lifx-0004", "lifx-0005", 0.742, 0.722, 0.762, "better"),
    }
    assert followed["test_apply_canvas_5_tile"].changes[0].moved == (
        Moved("software.branch", "full-review", "review-perf_20260318"),
        Moved(
            "software.commit", "94bb3d60163375acce43a0d59759c52677b10216", "7308c2b4759ecc681202bf5efa51338f200da101"
        ),
        Moved("software.dirty", "false", "true"),
    )


def test_what_the_review_did_not_touch_shows_no_change(followed: dict[str, Followed]) -> None:
    """The aurora effects and template creation stay level; a save whose template timing was
    noisy (0006: SD 110 us around 24.5 us) is set aside as a one-run excursion, not two changes."""
    level = [name for name, f in followed.items() if not f.changes]
    assert level == [
        "test_aurora_generate_frame_128px",
        "test_aurora_generate_frame_320px",
        "test_aurora_protocol_frame_128px",
        "test_aurora_protocol_frame_320px",
        "test_matrix_create_templates_5_tile",
    ]
    assert followed["test_matrix_create_templates_5_tile"].outliers == ("lifx-0006",)
    assert all(not f.candidates for name, f in followed.items() if name in level)


def test_a_slow_drift_after_the_review_is_caught_latest_against_best(followed: dict[str, Followed]) -> None:
    """multizone_update_colors_82 kept creeping down after the review (4.95 to 4.58 us): no step
    between two saves is a change (the boundary lies along a slope), but the latest level against
    the best earlier one is."""
    drift = followed["test_multizone_update_colors_82"]
    assert [(c.before, c.after, round(c.ratio, 3), c.verdict, c.kind) for c in drift.changes] == [
        ("lifx-0004", "lifx-0005", 0.777, "better", "step"),
        ("lifx-0006", "lifx-0007", 0.952, "better", "latest vs best"),
    ]
    assert [(c.before, c.after, c.verdict, c.sloped) for c in drift.candidates] == [
        ("lifx-0006", "lifx-0007", "better", True)
    ]
