"""Claims: comparison statistics, verdicts, validation, confounds, claim pages, compare."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps
from typer.testing import CliRunner

from builders import SLOWER, A, B, claim, repo_with, report
from generator.analysis import ratios, stats, verdicts
from generator.cli import app
from generator.ledger.load import load
from helpers import MANIFEST, RESULTS, generate, measured_run, publication, write_tree

# --- statistics -----------------------------------------------------------------


def test_ratio_interval_by_hand() -> None:
    b = [math.exp(0.0), math.exp(0.2)]
    c = [math.exp(0.1), math.exp(0.5)]
    r = ratios.ratio_interval(b, c)
    # log means 0.1 and 0.3; sample variances 0.02 and 0.08; se = sqrt(0.01 + 0.04)
    assert r.ratio == pytest.approx(math.exp(0.2))
    assert r.df == pytest.approx(0.05**2 / (0.01**2 + 0.04**2))
    half = sps.t.ppf(0.975, r.df) * math.sqrt(0.05)
    assert (r.low, r.high) == pytest.approx((math.exp(0.2 - half), math.exp(0.2 + half)))


@pytest.mark.parametrize(
    ("low", "high", "direction", "expected"),
    [
        (1.05, 1.2, 1, "supported"),
        (0.8, 0.95, 1, "contradicted"),
        (0.8, 0.95, -1, "supported"),
        (0.97, 1.04, 1, "within noise"),
        (0.9, 1.3, 1, "inconclusive"),
        (1.05, 1.2, 0, "inconclusive"),
    ],
)
def test_verdict_rule(low: float, high: float, direction: int, expected: str) -> None:
    bounds = (low, high)
    assert verdicts.judge(bounds, bounds, direction, None, min_effect=0.01, band=0.06).verdict == expected


def test_trials_needed_grows_with_noise() -> None:
    assert ratios.trials_needed(0.02, 0.06) < ratios.trials_needed(0.06, 0.06) < ratios.trials_needed(0.12, 0.06)


samples = st.lists(st.floats(min_value=1, max_value=1000), min_size=2, max_size=12)


@given(samples, samples)
def test_swapping_sides_inverts_the_ratio_and_the_verdict(b: list[float], c: list[float]) -> None:
    r, s = ratios.ratio_interval(b, c), ratios.ratio_interval(c, b)
    assert r.ratio * s.ratio == pytest.approx(1)
    assert r.low * s.high == pytest.approx(1) and r.high * s.low == pytest.approx(1)
    swap = {"supported": "contradicted", "contradicted": "supported"}
    v1 = verdicts.judge((r.low, r.high), r.bounds(0.9), 1, None, 0.01, 0.05).verdict
    v2 = verdicts.judge((s.low, s.high), s.bounds(0.9), 1, None, 0.01, 0.05).verdict
    assert swap.get(v1, v1) == v2


@given(samples, samples, st.floats(min_value=0.01, max_value=100))
def test_scaling_every_value_leaves_the_ratio(b: list[float], c: list[float], k: float) -> None:
    r, s = ratios.ratio_interval(b, c), ratios.ratio_interval([x * k for x in b], [x * k for x in c])
    assert s.ratio == pytest.approx(r.ratio) and s.low == pytest.approx(r.low)


@given(samples, samples)
def test_interval_contains_the_estimate(b: list[float], c: list[float]) -> None:
    r = ratios.ratio_interval(b, c)
    assert r.low <= r.ratio * (1 + 1e-12) and r.ratio <= r.high * (1 + 1e-12)


def test_null_comparisons_rarely_call_an_effect() -> None:
    rng = np.random.default_rng(20260906)
    called = 0
    for _ in range(1000):
        b, c = rng.lognormal(3, 0.05, 5), rng.lognormal(3, 0.05, 5)
        r = ratios.ratio_interval(b, c)
        cv = max(np.std(b, ddof=1) / b.mean(), np.std(c, ddof=1) / c.mean())
        called += verdicts.judge((r.low, r.high), r.bounds(0.9), 1, None, 0.01, cv).verdict in (
            "supported",
            "contradicted",
        )
    assert called <= 60


@pytest.mark.parametrize("n", [5, 20])
def test_interval_covers_the_true_ratio(n: int) -> None:
    rng = np.random.default_rng(n)
    true = 1.1
    covered = 0
    for _ in range(1000):
        b = rng.lognormal(3, 0.05, n)
        c = rng.lognormal(3 + math.log(true), 0.08, n)
        r = ratios.ratio_interval(b, c)
        covered += r.low <= true <= r.high
    assert 930 <= covered <= 970


# --- validation -----------------------------------------------------------------


def problems(root: Path) -> str:
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        (
            [claim(baseline="2026-09-01-full-vocb")],
            ["seed.md:", "claims.0.baseline", "did you mean '2026-09-01-full-vocab'"],
        ),
        ([claim(candidate=f"../runs/{B}")], ["claims.0.candidate", "is a path; give the run id only"]),
        ([claim(metric="joules")], ["claims.0.metric", "'joules' is neither a metric nor a rate"]),
        ([claim(at={"concurrency": 16})], ["claims.0.at", "selects no rows", "concurrency: 1, 8"]),
        ([claim(at={"batch": 16})], ["claims.0.at", "batch is not a condition"]),
        ([claim(), claim(statement="again")], ["claims.1.id", "'shortlist-c8' is already used"]),
        ([claim(corrects="shortlist-c9")], ["claims.0.corrects", "'shortlist-c9' does not exist"]),
        ([claim(id="a", corrects="b"), claim(id="b", corrects="a")], ["corrections form a cycle: a -> b -> a"]),
        (
            [claim(claimed="about 20")],
            ["claims.0.claimed", 'an equivalence ("±2%", "within 2%", "0%", "no difference")'],
        ),
        ([claim(baseline=None)], ["claims.0", "a comparison claim needs baseline"]),
    ],
)
def test_claim_validation(tmp_path: Path, claims: list[dict], expected: list[str]) -> None:
    out = problems(repo_with(tmp_path, claims))
    for text in expected:
        assert text in out, (text, out)


def test_runs_of_different_benchmarks_are_not_compared(tmp_path: Path) -> None:
    out = problems(repo_with(tmp_path, [claim()], benchmark="other-benchmark"))
    assert "baseline runs benchmark 'spec-decode-throughput' but candidate runs 'other-benchmark'" in out


# --- evaluation and pages ---------------------------------------------------------


def test_confounds_name_the_differing_nested_key(tmp_path: Path) -> None:
    lowm = MANIFEST.replace("draft_head_gemm: stock", "draft_head_gemm: lowm")
    root = repo_with(tmp_path, [claim()], candidate_manifest=lowm)
    from generator.analysis.claims import evaluate_all
    from generator.analysis.comparison import Settings

    ev = evaluate_all(load(root), Settings())["shortlist-c8"]
    assert [(c.key, c.baseline, c.candidate) for c in ev.confounds] == [("kernels.draft_head_gemm", "stock", "lowm")]
    assert "unmatched conditions" in ev.flags


def test_built_claim_page_shows_claim_and_correction_side_by_side(tmp_path: Path) -> None:
    fix = claim(
        id="shortlist-c8-matched",
        corrects="shortlist-c8",
        date="2026-09-06",
        statement="With matched kernels the gain is within noise.",
    )
    root = repo_with(tmp_path, [claim(claimed="+20%"), fix], candidate_results=RESULTS)
    result = CliRunner().invoke(app, ["build", "--repo", str(root), "--strict"])
    assert result.exit_code == 0, result.output
    html = (root / "site" / "claims" / "shortlist-c8" / "index.html").read_text()
    assert html.count('class="bl-card') == 2
    assert "Original claim" in html and "Correction of shortlist&#45;c8" in html
    assert 'data-bl-spec="charts&#47;forest.json"' in html
    forest = json.loads((root / "site" / "claims" / "shortlist-c8" / "charts" / "forest.json").read_text())
    assert sorted(row["claim"] for row in forest["datasets"]["table"]) == ["shortlist-c8", "shortlist-c8-matched"]
    ledger = (root / "site" / "claims" / "index.html").read_text()
    assert "corrected" in ledger and "bl-verdict--" in ledger
    report_html = (root / "site" / "reports" / "seed" / "index.html").read_text()
    assert "Claims in this report" in report_html
    assert (root / "site" / "methods" / "index.html").is_file()


def test_compare_json_has_exactly_the_documented_keys(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [])
    result = CliRunner().invoke(
        app,
        [
            "compare",
            A,
            B,
            "--metric",
            "tokens_per_second",
            "--at",
            "concurrency=8",
            "--varies",
            "setup.draft_vocab",
            "--repo",
            str(root),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert list(out) == [
        "baseline",
        "candidate",
        "metric",
        "at",
        "n_baseline",
        "n_candidate",
        "ratio",
        "ci_low",
        "ci_high",
        "noise",
        "min_effect",
        "verdict",
        "trials_needed",
        "confounds",
        "claimed",
        "claimed_kind",
    ]
    assert out["at"] == {"concurrency": 8} and out["n_baseline"] == out["n_candidate"] == 5
    b = [104.1, 103.5, 104.8, 102.9, 104.0]
    c = [99.1, 98.2, 98.9, 97.5, 104.0]
    expected = ratios.ratio_interval(b, c)
    assert out["ratio"] == pytest.approx(expected.ratio)
    assert out["ci_low"] == pytest.approx(expected.low)
    # [-7.1%, -1.1%] lies wholly below -1%, against the metric's "higher is better".
    assert out["verdict"] == "contradicted" and out["trials_needed"] is None and out["confounds"] == []
    assert out["noise"] == pytest.approx(stats.summarize(c).cv)


def test_rate_claim_shows_each_side_over_its_trials_with_the_tokens_as_context(tmp_path: Path) -> None:
    """58,950 accepted of 81,734 drafted at concurrency 8 over five trials: the side's interval is
    the t interval over its five trial rates (n = 5 trials), and the tokens are context only."""
    root = repo_with(tmp_path, [claim(metric="acceptance")], candidate_results=RESULTS)
    from generator.analysis.claims import evaluate_all
    from generator.analysis.comparison import Settings
    from generator.render.outputs import claim_outputs

    ledger = load(root)
    evaluations = evaluate_all(ledger, Settings())
    page = html.unescape(claim_outputs(ledger, evaluations, Settings())["claims/shortlist-c8/index.md"].decode())
    rates = [11790 / 16384, 11800 / 16300, 11750 / 16390, 11820 / 16310, 11790 / 16350]
    low, high = sps.t.interval(0.95, 4, loc=np.mean(rates), scale=sps.sem(rates))
    assert f"{np.mean(rates):.1%} [{low:.1%}, {high:.1%}]" == "72.1% [71.7%, 72.5%]"
    assert (
        "<dt>Baseline</dt><dd>2026-09-01-full-vocab: mean of per-trial rates 72.1% [71.7%, 72.5%] "
        "(95%, t over the trials), n = 5 trials</dd>"
    ) in page
    assert (
        "<dt>Baseline, counts</dt><dd>81,734 draft_tokens over 5 trials (context only: the interval counts trials)</dd>"
    ) in page
    assert "Wilson" not in page and "pooled" not in page
    only = evaluations["shortlist-c8"].only
    assert only is not None and only.ratio == pytest.approx(1.0)  # identical trials on both sides


def test_compare_bad_input_exits_1(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [])
    result = CliRunner().invoke(app, ["compare", A, "nope", "--metric", "tokens_per_second", "--repo", str(root)])
    assert result.exit_code == 1
    assert "run 'nope' does not exist" in result.output


def test_a_rate_claim_shows_percentage_points_beside_the_ratio(tmp_path: Path) -> None:
    """Acceptance 22.7% -> 72.2% reads as +49.5 pp, not only as a ratio of +218%."""
    from helpers import generate

    def counts(accepted: int) -> str:
        rows = "".join(f"{i},1,30.{i},1000,{accepted + i}\n" for i in range(1, 6))
        return "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n" + rows

    low, high = measured_run("2026-09-01-low"), measured_run("2026-09-01-high")
    low["runs/2026-09-01-low/results.csv"] = counts(224)
    high["runs/2026-09-01-high/results.csv"] = counts(719)
    for run in (low, high):
        run.pop(next(k for k in run if k.endswith("requests.csv")))
    claim = {
        "id": "acceptance-up",
        "statement": "Acceptance more than triples.",
        "metric": "acceptance",
        "baseline": "2026-09-01-low",
        "candidate": "2026-09-01-high",
        "at": {"concurrency": 1},
    }
    report = "---\n" + yaml.safe_dump({"title": "Rates", "claims": [claim]}) + "---\n\n# Rates\n"
    root = write_tree(tmp_path, publication(low, high, extra={"site_src/reports/rates.md": report}))
    pages = generate(root)
    page = pages["claims/acceptance-up/index.md"].decode()
    # points first, both rates as percents, the ratio second and labelled as a ratio
    assert "&#43;49.5 pp, 22.7&#37; → 72.2&#37; &#40;ratio 3.181x &#91;3.154x, 3.208x&#93;&#41;" in page
    assert "mean of per&#45;trial rates 22.7&#37; &#91;22.5&#37;, 22.9&#37;&#93;" in page
    assert "0.227" not in page  # never the rate as a fraction
    assert "218.1" not in page  # a relative change beside percentages reads as points
    assert "&#43;49.5 pp" in pages["claims/index.md"].decode()


def test_a_report_page_shows_its_own_limits_escaped(tmp_path: Path) -> None:
    limits = ["One box only.", "<script>alert(1)</script> is text"]
    front = {"title": "Limited", "limits": limits}
    report = "---\n" + yaml.safe_dump(front) + "---\n\n# Limited\n\nProse.\n"
    root = write_tree(tmp_path, publication(measured_run(), extra={"site_src/reports/limited.md": report}))
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0
    page = (root / "site" / "reports" / "limited" / "index.html").read_text()
    assert "<strong>Limits of this report</strong>" in page and "<li>One box only.</li>" in page
    assert "<script>alert(1)</script>" not in page and "alert&#40;1&#41;" in page


def _unmatched_section(root: Path) -> str:
    page = html.unescape(generate(root)["claims/shortlist-c8/index.md"].decode())
    return page.split("## Unmatched conditions in shortlist-c8\n\n", 1)[1].split("\n", 1)[0]


def test_no_unmatched_condition_says_how_many_recorded_keys_were_compared(tmp_path: Path) -> None:
    """ "None" is only as strong as what the runs record: the page counts and names the keys it
    compared, so two runs with a bare manifest do not read as two matched machines."""
    full = _unmatched_section(repo_with(tmp_path, [claim()]))
    assert full == (
        f"No key that both record differs: apart from setup.draft_vocab, the 11 keys the manifests and setups of {A} and {B} record match "
        "(accelerators.0.cuda, accelerators.0.driver, accelerators.0.name, host.cores, host.memory_gb, "
        "host.name, kernels.draft_head_gemm, setup.head_kernel, …). Conditions nobody recorded cannot be checked."
    )
    thin = "schema: benchledger.manifest/1\n"
    a, b = measured_run(A, setup={"draft_vocab": 248320}), measured_run(B, setup={"draft_vocab": 16000})
    a[f"runs/{A}/manifest.yaml"] = b[f"runs/{B}/manifest.yaml"] = thin
    b[f"runs/{B}/results.csv"] = SLOWER
    bare = write_tree(tmp_path / "thin", publication(a, b, extra={"site_src/reports/seed.md": report([claim()])}))
    assert _unmatched_section(bare) == (
        f"No key that both record differs: apart from setup.draft_vocab, the 1 key the manifests and setups of {A} and {B} record match "
        "(warmup_trials). Conditions nobody recorded cannot be checked."
    )
