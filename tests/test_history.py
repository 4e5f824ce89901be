"""History over a committed publication: series grouped, ordered and split as FORMAT.md says,
a slowdown found at the engine build that caused it, and the keys that moved around it named."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.analysis.audit import audit
from generator.analysis.history import Moved, history
from generator.analysis.series import Split
from generator.analysis.summaries import summarize_run
from helpers import publication, run_yaml, write_tree

METRICS = {"tokens_per_second": {"unit": "tok/s", "better": "higher"}}
WOBBLE = (0.0, 0.4, -0.3, 0.2, -0.1)  # five trials' deviations, tok/s


def nightly(day: int, *, build: int, driver: str, level: float) -> dict[str, str]:
    """One nightly run of build b<build>: five trials around `level` tok/s at concurrency 1."""
    run_id = f"2026-10-{day:02d}-nightly"
    manifest = (
        "schema: benchledger.manifest/1\n"
        "captured: {at: 2026-10-01T02:00:00Z, by: benchledger 0.1.0, method: auto}\n"
        "host: {name: spark-01, cpu: Grace, cores: 20}\n"
        f"accelerators:\n  - {{name: NVIDIA GB10, driver: '{driver}'}}\n"
        f"software: {{engine: llama.cpp, engine_version: b{build}, build_number: {build}}}\n"
    )
    rows = "".join(f"{t},1,{level + d + (day % 3) * 0.2:.2f}\n" for t, d in enumerate(WOBBLE, start=1))
    return {
        f"runs/{run_id}/run.yaml": run_yaml(
            run_id, date=f"2026-10-{day:02d}", benchmark="decode", setup={}, metrics=METRICS, rates={}
        ),
        f"runs/{run_id}/manifest.yaml": manifest,
        f"runs/{run_id}/results.csv": "trial,concurrency,tokens_per_second\n" + rows,
    }


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> list:
    """Twelve nightlies: builds 6110-6121, 40 tok/s until b6116, 36 tok/s from b6117 (10% slower),
    and a driver update from the tenth night, which starts another series."""
    runs = [
        nightly(day, build=6109 + day, driver="580.95" if day < 10 else "590.12", level=40.0 if day < 8 else 36.0)
        for day in range(1, 13)
    ]
    root = write_tree(tmp_path_factory.mktemp("history"), publication(*runs))
    ledger = audit(Path(root), stale_is_error=False).ledger
    summaries = {run.id: summarize_run(run) for run in ledger.runs.values()}
    return history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95)


def test_a_driver_update_splits_the_series_and_both_parts_name_it(followed: list) -> None:
    assert [(f.series.metric, len(f.series.points)) for f in followed] == [
        ("tokens_per_second", 9),
        ("tokens_per_second", 3),
    ]
    split = Split("accelerators.0.driver", "580.95", "590.12", "2026-10-10-nightly")
    assert [f.series.splits for f in followed] == [(split,), (split,)]
    assert [p.build for p in followed[0].series.points] == list(range(6110, 6119))
    assert ("software.engine", "llama.cpp") in followed[0].series.environment
    assert not any(
        key.startswith(("software.engine_version", "software.build_number"))
        for key, _ in followed[0].series.environment
    )


def test_the_slowdown_is_found_at_the_build_that_made_it_with_what_moved(followed: list) -> None:
    first = followed[0]
    assert [(c.before, c.after, c.verdict) for c in first.changes] == [
        ("2026-10-07-nightly", "2026-10-08-nightly", "worse")
    ]
    change = first.changes[0]
    assert change.low < 0.9 < change.high or abs(change.ratio - 0.9) < 0.01
    assert change.moved == (
        Moved("software.build_number", "6116", "6117"),
        Moved("software.engine_version", "b6116", "b6117"),
    )


def test_a_series_of_three_points_is_followed_and_shorter_ones_are_not(followed: list) -> None:
    assert followed[1].between is not None and followed[1].changes == ()


def test_serve_reads_again_only_the_runs_whose_digest_or_summary_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What history reads of each run (`build_series`' `known`, kept by `serve`) is reused while
    the run's digest, the along-keys and its summary object are the ones it was read with; the
    series followed are equal to those followed from scratch."""
    from generator.analysis import series

    runs = [nightly(day, build=6109 + day, driver="580.95", level=40.0 if day < 4 else 36.0) for day in range(1, 7)]
    ledger = audit(write_tree(tmp_path, publication(*runs)), stale_is_error=False).ledger
    summaries = {run.id: summarize_run(run) for run in ledger.runs.values()}
    read: list[str] = []
    real = series._rows
    monkeypatch.setattr(series, "_rows", lambda run, *a: read.append(run.id) or real(run, *a))
    fresh = history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95)
    known: dict = {}
    assert history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95, known=known) == fresh
    read.clear()
    assert history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95, known=known) == fresh
    assert read == []
    summaries["2026-10-03-nightly"] = summarize_run(ledger.runs["2026-10-03-nightly"])  # a new summary object
    assert history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95, known=known) == fresh
    assert read == ["2026-10-03-nightly"]
    read.clear()
    along = ("software.engine_version", "software.build_number", "accelerators.0.driver")
    again = history(ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95, along=along, known=known)
    assert len(read) == 6 and again == history(
        ledger.runs.values(), summaries, min_effect=0.01, confidence=0.95, along=along
    )
    del summaries["2026-10-06-nightly"]
    fewer = [run for run in ledger.runs.values() if run.id != "2026-10-06-nightly"]
    history(fewer, summaries, min_effect=0.01, confidence=0.95, along=along, known=known)
    assert "2026-10-06-nightly" not in known and len(known) == 5
