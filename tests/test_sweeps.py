"""Sweep charts: both sides of a claim on one chart, and `<!-- sweep METRIC: RUN, RUN -->` in
a report, checked by `benchledger check` (file, line, fix) and drawn by the build."""

from __future__ import annotations

import html
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


def test_a_sweep_draws_the_measured_loads_only(tmp_path: Path) -> None:
    """Concurrency 1 and 8 were run: the axis had ticks at 2 to 7, a line and a 95% band ran
    through loads nobody measured. Now one tick per measured load, one point and one interval
    rule per run there, and nothing between."""
    from test_chart_oracle import panels

    root = with_report(tmp_path, f"<!-- sweep tokens_per_second: {A}, {B} -->\n")
    out = generate(root)
    (p,) = panels(json.loads(out["ledger/sweeps/sweeps/1.json"]))
    assert [text for _, text in sorted(p.ticks["bottom"])] == ["1", "8"]
    assert p.tick_marks["bottom"] == 2
    assert (len(p.of("symbol")), len(p.of("rule")), len(p.of("line")), len(p.of("area"))) == (4, 4, 0, 0)
    assert sorted((m.field("series"), m.field("concurrency")) for m in p.of("symbol")) == [
        (A, "1"),
        (A, "8"),
        (B, "1"),
        (B, "8"),
    ]
    caption = (
        "The mean at each measured concurrency (1 and 8), with its 95% interval (none where every trial was "
        "identical). Nothing was measured in between, so nothing is drawn there."
    )
    assert caption in html.unescape(out[f"runs/{A}/index.md"].decode())


def test_a_sweep_of_identical_trials_draws_points_without_intervals(tmp_path: Path) -> None:
    """Every trial at a load gave the same count: a point there, no rule, and the table says
    why it has no interval instead of printing one of no width."""
    from test_chart_oracle import panels

    from generator.ledger.load import load
    from generator.render.sweeps import sweep, sweep_table

    run = measured_run(A)
    run[f"runs/{A}/results.csv"] = "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n" + "".join(
        f"{trial},{c},{30 + trial},{2180 * c},{1294 * c}\n" for trial in range(1, 6) for c in (1, 4)
    )
    root = write_tree(tmp_path / "pub", publication(run))
    out = generate(root)
    (p,) = panels(json.loads(out[f"runs/{A}/charts/draft_tokens-sweep.json"]))
    assert [text for _, text in sorted(p.ticks["bottom"])] == ["1", "4"]
    assert (len(p.of("symbol")), len(p.of("rule"))) == (2, 0)
    assert [text for _, text in sorted(p.ticks["left"], reverse=True)] == [
        *("2,000", "4,000", "6,000", "8,000", "10,000")
    ]
    found = sweep([("", load(root).runs[A])], "draft_tokens", 0.95)
    assert found is not None
    table = html.unescape(str(sweep_table(found, "draft_tokens", "95%")))
    assert "2,180 (exact: every trial identical)" in table and "8,720 (exact: every trial identical)" in table
    assert "[2,180, 2,180]" not in table


def test_a_rate_sweep_table_reads_in_percent_as_the_run_page_does() -> None:
    page = html.unescape(
        generate(Path(__file__).parents[1])["claims/testbed-acceptance-nmax2-vs-nmax12/index.md"].decode()
    )
    table = page[page.index("The numbers behind the sweep") :]
    assert "28.2% (exact: every trial identical)" in table
    assert "0.2816" not in page
