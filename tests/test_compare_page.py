"""The compare page's data: the run list with its t table, and each run's compare.json,
which the browser turns into what `benchledger diff` prints (tests/test_browser.py checks
the two agree to the printed digit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from generator.cli import app
from helpers import MANIFEST, generate, measured_run, publication, write_tree

A, B = "2026-09-01-first", "2026-09-02-second"


def test_the_run_list_is_newest_first_with_t_quantiles_from_scipy(tmp_path: Path) -> None:
    root = write_tree(tmp_path, publication(measured_run(A, title="<b>First</b>"), measured_run(B)))
    listing = json.loads(generate(root)["compare/runs.json"])
    assert listing["runs"] == [  # titles stay text: compare.js puts them in the page with textContent
        [B, f"Run {B}", "spec-decode-throughput"],
        [A, "<b>First</b>", "spec-decode-throughput"],
    ]
    assert listing["level"] == "95%" and listing["t_steps"] == 2000 and len(listing["t"]) == 2001
    assert listing["t"][0] == pytest.approx(1.959964, abs=1e-6)  # df = inf: the normal quantile
    assert listing["t"][-1] == pytest.approx(12.706205, abs=1e-6)  # df = 1
    assert listing["t"][1000] == pytest.approx(4.302653, abs=1e-6)  # df = 2


def test_each_run_publishes_its_environment_and_trial_values(tmp_path: Path) -> None:
    b = measured_run(B, setup={"draft_vocab": 16000}, excluded=[{"trial": 2, "reason": "thermal throttle"}])
    b[f"runs/{B}/manifest.yaml"] = MANIFEST.replace("draft_head_gemm: stock", "draft_head_gemm: lowm")
    root = write_tree(tmp_path, publication(measured_run(A), b))
    data = json.loads(generate(root)[f"runs/{B}/compare.json"])
    assert data["environment"]["kernels.draft_head_gemm"] == "lowm"
    assert data["environment"]["setup.draft_vocab"] == "16000"
    assert data["conditions"] == ["concurrency"]
    first = data["figures"][0]
    assert (first["name"], first["at"], first["label"]) == ("tokens_per_second", ["1"], "concurrency=1")
    assert first["values"] == [31.2, 31.0, 30.9, 31.4]  # trial 2 (30.8) is excluded
    page = generate(root)["compare/index.md"].decode()
    assert 'data-bl-runs="runs.json"' in page and "benchledger diff" in page


def test_environment_values_compare_as_diff_compares_them(tmp_path: Path) -> None:
    """8 and 8.0 are the same setup value to `benchledger diff` (Python's ==), so the page's
    equality keys match too; 8 and "8" are not."""
    root = write_tree(
        tmp_path,
        publication(
            measured_run(A, setup={"threads": 8, "flag": True, "label": "8"}),
            measured_run(B, setup={"threads": 8.0, "flag": 1, "label": 8}),
        ),
    )
    out = generate(root)
    a, b = (json.loads(out[f"runs/{r}/compare.json"])["equal_as"] for r in (A, B))
    assert a["setup.threads"] == b["setup.threads"] and a["setup.flag"] == b["setup.flag"]
    assert a["setup.label"] != b["setup.label"]
    result = CliRunner().invoke(app, ["diff", A, B, "--json", "--repo", str(root)])
    keys = [d["key"] for d in json.loads(result.stdout)["differences"]]
    assert "setup.label" in keys and "setup.threads" not in keys and "setup.flag" not in keys


def test_environment_values_print_as_yaml_and_figures_carry_their_better(tmp_path: Path) -> None:
    """null, true and false as the publisher wrote them, never Python's None, True, False; on the
    page (compare.json) and in `benchledger diff` alike. Each figure says which way is better."""
    root = write_tree(
        tmp_path,
        publication(
            measured_run(A, setup={"offload": None, "flash": True}),
            measured_run(B, setup={"offload": "cpu", "flash": False}),
        ),
    )
    out = generate(root)
    a, b = (json.loads(out[f"runs/{r}/compare.json"]) for r in (A, B))
    assert (a["environment"]["setup.offload"], a["environment"]["setup.flash"]) == ("null", "true")
    assert b["environment"]["setup.flash"] == "false"
    better = {f["name"]: f["better"] for f in a["figures"]}
    assert better["tokens_per_second"] == "higher" and better["acceptance"] == "higher"
    assert better["draft_tokens"] is None  # no `better` declared: shown, never judged
    result = CliRunner().invoke(app, ["diff", A, B, "--json", "--repo", str(root)])
    differences = {d["key"]: (d["baseline"], d["candidate"]) for d in json.loads(result.stdout)["differences"]}
    assert differences["setup.offload"] == ("null", "cpu") and differences["setup.flash"] == ("true", "false")
    plain = CliRunner().invoke(app, ["diff", A, B, "--repo", str(root)])
    assert "None" not in plain.stdout and "True" not in plain.stdout and "null" in plain.stdout


def test_the_terminal_hint_is_marked_for_the_page_to_follow_the_chosen_pair(tmp_path: Path) -> None:
    root = write_tree(tmp_path, publication(measured_run(A), measured_run(B)))
    page = generate(root)["compare/index.md"].decode()
    pair = f"{A} {B}".replace("-", "&#45;")
    assert f'<p class="bl-compare-hint">In a terminal, <code>benchledger diff {pair}</code>' in page


def test_the_page_offers_every_run_to_pick_by_title_with_hostile_text_escaped(tmp_path: Path) -> None:
    """Both pickers are in the page as built (no script needed to see what can be compared):
    an empty choice, then every run newest first, its title and id as text, its id the value."""
    root = write_tree(tmp_path, publication(measured_run(A, title='<b onmouseover="x()">First</b>'), measured_run(B)))
    page = generate(root)["compare/index.md"].decode()
    a, b = (run.replace("-", "&#45;") for run in (A, B))
    options = (
        '<option value="">pick a run</option>\n'
        f'<option value="{b}">Run {b} ({b})</option>\n'
        f'<option value="{a}">&#60;b onmouseover&#61;&#34;x&#40;&#41;&#34;&#62;First&#60;&#47;b&#62; ({a})</option>'
    )
    assert f'<label>A (baseline) <select name="a" autocomplete="off">\n{options}\n</select></label>' in page
    assert f'<label>B (candidate) <select name="b" autocomplete="off">\n{options}\n</select></label>' in page
    assert page.count("<option ") == 6 and "<b " not in page


def test_the_page_documents_its_deep_link_with_the_two_newest_runs(tmp_path: Path) -> None:
    root = write_tree(tmp_path, publication(measured_run(A), measured_run(B)))
    page = generate(root)["compare/index.md"].decode()
    a, b = (run.replace("-", "&#45;") for run in (A, B))
    assert "A link to this page can name both runs: `compare/?a=RUN_A&b=RUN_B`" in page
    assert f'<a href="?a={a}&amp;b={b}" class="bl-compare-example">the two newest runs</a>' in page
    assert '<form class="bl-compare-form" method="get" action="./">' in page  # without a script, a GET to the same link


def test_past_500_runs_the_pickers_are_filled_from_the_run_list(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Up to INLINE_RUNS runs both pickers list every run in the page; past it the page lists
    none and asks compare.js to fill them from runs.json (tests/test_browser.py checks it does,
    at 1,000 runs), so the page stays small: at 10,000 runs the options weighed 2.4 MB."""
    from generator.render import compare_page

    root = write_tree(tmp_path, publication(measured_run(A), measured_run(B)))
    page = generate(root)["compare/index.md"].decode()
    assert page.count(f'<option value="{B.replace("-", "&#45;")}">') == 2 and "data-bl-fill" not in page
    monkeypatch.setattr(compare_page, "INLINE_RUNS", 1)
    page = generate(root)["compare/index.md"].decode()
    assert '<option value="">pick a run</option>' in page and page.count("<option") == 2
    assert 'data-bl-runs="runs.json" data-bl-fill="yes"' in page
    assert len(json.loads(generate(root)["compare/runs.json"])["runs"]) == 2
