"""ledger/trials.csv was 14 times the results.csv files it is read from (every metric of every
trial its own row, each repeating its run's benchmark, source and setup). It now holds one row
per trial and condition, and what a run's trials share is written once, in ledger/runs.csv."""

from __future__ import annotations

from pathlib import Path

from generator.ledger.load import load
from generator.render.ledger_files import ledger_outputs
from helpers import measured_run, publication, write_tree

ROOT = Path(__file__).resolve().parents[2]
RUN = "2026-09-01-measured"


def test_trials_csv_stays_within_three_times_its_results_csv() -> None:
    ledger = load(ROOT, "site_src")
    published = ledger_outputs(ledger, {})
    results = sum(len(run.blobs["results.csv"]) for run in ledger.runs.values())
    assert len(ledger.runs) == 18 and results == 7449
    ratio = len(published["ledger/trials.csv"]) / results
    assert ratio <= 3, ratio
    assert len(published["ledger/runs.csv"]) < results  # the shared fields, once per run


def test_each_trial_is_one_row_and_each_run_is_one_row(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", publication(measured_run(RUN)))
    published = ledger_outputs(load(root), {})
    trials = published["ledger/trials.csv"].decode().splitlines()
    assert trials[:3] == [
        "run,trial,condition,excluded,at.concurrency,metric.draft_accepted,metric.draft_tokens,"
        "metric.tokens_per_second,rate.acceptance",
        f"{RUN},1,concurrency=1,,1,1490,2048,31.2,{1490 / 2048!r}",
        f"{RUN},1,concurrency=8,,8,11790,16384,104.1,{11790 / 16384!r}",
    ]
    assert len(trials) == 1 + 10
    assert published["ledger/runs.csv"].decode().splitlines() == [
        "run,date,title,benchmark,source,trial_unit,rate_of.acceptance,setup.draft_vocab,setup.head_kernel,"
        "unit.draft_accepted,unit.draft_tokens,unit.tokens_per_second",
        f"{RUN},2026-09-01,Run {RUN},spec-decode-throughput,measured here,,draft_accepted / draft_tokens,16000,stock,"
        "tokens,tokens,tok/s",
    ]
