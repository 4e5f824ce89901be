"""Identical trials are exact, on every surface that prints an interval: the run page, the claim
page, `benchledger compare` and `benchledger diff` say "exact: every trial identical" and never
print an interval of no width (a deterministic counter once read "[2,180, 2,180]" beside "no
run-to-run variation", and a ratio "+19.6% [+19.6%, +19.6%]")."""

from __future__ import annotations

import html
import re
from pathlib import Path

from typer.testing import CliRunner

from generator.cli import app
from helpers import generate, measured_run, publication, write_tree

A, B = "2026-09-01-nmax3", "2026-09-02-nmax4"
HEAD = "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n"


def _run(run_id: str, drafted: int, spread: float) -> dict[str, str]:
    run = measured_run(run_id)
    run[f"runs/{run_id}/results.csv"] = HEAD + "".join(
        f"{trial},{c},{100 * c + spread * trial},{drafted * c},{(drafted // 2) * c}\n"
        for trial in range(1, 6)
        for c in (1, 4)
    )
    del run[f"runs/{run_id}/requests.csv"]
    return run


CLAIM = f"""---
title: Counters
date: 2026-09-03
claims:
  - id: drafts-more
    statement: n_max 4 drafts more tokens.
    metric: draft_tokens
    baseline: {A}
    candidate: {B}
    at: {{concurrency: 1}}
    varies: []
---

# Counters
"""


def _publication(tmp_path: Path) -> Path:
    runs = _run(A, 430, 0.5), _run(B, 520, 0.7)
    return write_tree(tmp_path / "pub", publication(*runs, extra={"site_src/reports/counters.md": CLAIM}))


def _zero_width(text: str) -> list[str]:
    """Every printed interval whose two ends read the same."""
    return [m.group(0) for m in re.finditer(r"\[([^\[\],]+), ([^\[\],]+)\]", text) if m.group(1) == m.group(2)]


def _text(page: bytes) -> str:
    """A generated page as a reader reads it: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.decode())).split())


def test_pages_say_exact_and_print_no_interval_of_no_width(tmp_path: Path) -> None:
    out = generate(_publication(tmp_path))
    run, claim = _text(out[f"runs/{A}/index.md"]), _text(out["claims/drafts-more/index.md"])
    assert "draft_tokens 430 tokens (exact: every trial identical) · n = 5" in run  # the headline card
    assert "430 tokens 430 (exact: every trial identical)" in run  # the summary table: median, mean
    assert "tokens_per_second 101.5 tok/s [100.5, 102.5] · n = 5" in run  # a figure with spread keeps its interval
    assert f"{B}: mean 520 (exact: every trial identical: no run-to-run variation was measured" in claim
    assert "Measured +20.9% (exact: every trial identical on both sides: no interval)" in claim
    assert "1.209 exact: every trial identical on both sides 95%" in claim  # the table beside the forest plot
    assert "430 (exact: every trial identical)" in claim  # the numbers behind the sweep
    assert _zero_width(run) == [] and _zero_width(claim) == []


def test_compare_and_diff_say_exact_and_print_no_interval_of_no_width(tmp_path: Path) -> None:
    root = _publication(tmp_path)
    compared = CliRunner().invoke(
        app,
        ["compare", A, B, "--metric", "draft_tokens", "--at", "concurrency=1", "--repo", str(root)],
        env={"COLUMNS": "200"},
    )
    assert compared.exit_code == 0, compared.output
    assert "430 (exact: every trial identical)" in compared.output
    assert "ratio candidate/baseline: 1.209 (exact: every trial identical on both sides)" in compared.output
    assert _zero_width(compared.output) == []
    diffed = CliRunner().invoke(app, ["diff", A, B, "--repo", str(root)], env={"COLUMNS": "200"})
    assert diffed.exit_code == 0, diffed.output
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in diffed.output.splitlines()]
    assert ["draft_tokens", "concurrency=1", "5 / 5", "+20.9%", "exact: every trial identical on both sides"] in rows
    assert _zero_width(diffed.output) == []
