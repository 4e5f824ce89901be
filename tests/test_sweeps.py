"""Sweep charts: both sides of a claim on one chart, and `<!-- sweep METRIC: RUN, RUN -->` in
a report, checked by `benchledger check` (file, line, fix) and drawn by the build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import check
from helpers import RESULTS, generate, measured_run, publication, write_tree

A, B, C = "2026-09-01-first", "2026-09-02-second", "2026-09-03-flat"


def with_report(tmp_path: Path, body: str) -> Path:
    flat = measured_run(C)
    flat[f"runs/{C}/results.csv"] = "\n".join(
        line.replace(",1,", ",solo,", 1).replace(",8,", ",pair,", 1) if line[0].isdigit() else line
        for line in RESULTS.splitlines()
    )
    del flat[f"runs/{C}/requests.csv"]
    report = "---\ntitle: Sweeps\ndate: 2026-09-04\n---\n\n# Sweeps\n\n" + body
    files = publication(measured_run(A), measured_run(B), flat, extra={"site_src/reports/sweeps.md": report})
    return write_tree(tmp_path / "pub", files)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (f"<!-- sweep tokens_per_second: {A}, 2026-09-09-gone -->", "run '2026-09-09-gone' does not exist"),
        (f"<!-- sweep latency: {A}, {B} -->", f"run '{A}' has no metric or rate 'latency'; it has tokens_per_second"),
        (f"<!-- sweep tokens_per_second: {A}, {C} -->", "the runs share no numeric condition"),
        ("<!-- sweep tokens_per_second: -->", "'<!-- sweep tokens_per_second: -->' names no metric or no run"),
        ("<!-- sweep tokens_per_second: " + ", ".join([A] * 13) + " -->", "names 13 runs; a sweep chart reads"),
    ],
)
def test_a_bad_sweep_directive_is_located_with_its_fix(tmp_path: Path, line: str, message: str) -> None:
    code, out = check(with_report(tmp_path, f"Some prose.\n\n{line}\n"))
    assert code == 1
    assert f"site_src/reports/sweeps.md:10: sweep: {message}" in out


def test_a_directive_inside_prose_is_not_one(tmp_path: Path) -> None:
    root = with_report(tmp_path, f"Write `<!-- sweep tokens_per_second: {A}, gone -->` on a line of its own.\n")
    assert check(root)[0] == 0


def test_the_report_sweep_is_drawn_with_one_series_per_run(tmp_path: Path) -> None:
    root = with_report(tmp_path, f"<!-- sweep tokens_per_second: {A}, {B} -->\n")
    assert check(root)[0] == 0
    spec = json.loads(generate(root)["ledger/sweeps/sweeps/1.json"])
    rows = spec["datasets"]["table"]
    assert [(r["series"], r["x"], r["n"]) for r in rows] == [(A, 1.0, 5), (A, 8.0, 5), (B, 1.0, 5), (B, 8.0, 5)]
    assert rows[0]["mean"] == pytest.approx((31.2 + 30.8 + 31.0 + 30.9 + 31.4) / 5)


def test_a_claim_page_draws_both_sides_across_the_sweep(tmp_path: Path) -> None:
    claim = (
        "claims:\n  - id: faster\n    date: 2026-09-04\n    statement: B is faster.\n    metric: tokens_per_second\n"
        f"    baseline: {A}\n    candidate: {B}\n    at: {{concurrency: 8}}\n    varies: []\n"
    )
    report = f"---\ntitle: Claims\ndate: 2026-09-04\n{claim}---\n\n# Claims\n"
    root = write_tree(
        tmp_path / "pub", publication(measured_run(A), measured_run(B), extra={"site_src/reports/c.md": report})
    )
    out = generate(root)
    rows = json.loads(out["claims/faster/charts/sweep.json"])["datasets"]["table"]
    assert sorted({r["series"] for r in rows}) == [f"baseline: {A}", f"candidate: {B}"]
    page = out["claims/faster/index.md"].decode()
    assert "## Both sides across the sweep" in page
    assert "The claim is judged at concurrency&#61;8." in page
