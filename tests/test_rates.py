"""Rates by trials: a rate's interval has the trial as its unit, never the pooled tokens."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from generator.analysis import rates, ratios
from helpers import generate, measured_run, publication, write_tree

TRIALS = 5
REPLICATIONS = 4000
TRUE_RATE = 0.3  # the mean of Beta(3, 7), every prompt's acceptance drawn from it
DESIGNS = [(5, 200), (20, 50), (50, 20)]  # responses x tokens per response, 1,000 tokens a trial


def simulated(rng: np.random.Generator, responses: int, tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """REPLICATIONS runs of TRIALS trials: each trial draws `responses` fresh prompts, each with
    its own acceptance from Beta(3, 7), and accepts Binomial(tokens, p) of a response's drafted
    tokens (so the tokens of one response are correlated through their prompt)."""
    p = rng.beta(3, 7, size=(REPLICATIONS, TRIALS, responses))
    accepted = rng.binomial(tokens, p).sum(axis=2)
    return accepted, np.full(accepted.shape, float(responses * tokens))


def coverage(accepted: np.ndarray, drafted: np.ndarray) -> float:
    """How often the rate's interval, as the pages show it, holds the true rate."""
    held = 0
    for num, den in zip(accepted, drafted, strict=True):
        r = rates.summarize_rate(num, den)
        assert r.ci_low is not None and r.ci_high is not None and r.n == TRIALS
        held += r.ci_low <= TRUE_RATE <= r.ci_high
    return held / len(accepted)


def pooled_wilson_coverage(accepted: np.ndarray, drafted: np.ndarray) -> float:
    """The interval the pages showed before: one Wilson interval over the pooled tokens."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(accepted.sum(axis=1), drafted.sum(axis=1), alpha=0.05, method="wilson")
    return float(np.mean((low <= TRUE_RATE) & (high >= TRUE_RATE)))


@pytest.mark.parametrize(("responses", "tokens"), DESIGNS)
def test_the_rate_interval_covers_the_true_rate_when_tokens_inside_a_trial_are_correlated(
    responses: int, tokens: int
) -> None:
    """5 trials, per-prompt acceptance from Beta(3, 7), 4,000 seeded replications: the t interval
    over the five trial proportions holds the true rate at least 93% of the time at nominal 95%
    (93.9%, 94.5% and 95.0% for 5x200, 20x50 and 50x20 with these seeds; 94.8%, 95.0% and 95.0%
    averaged over 20 seeds, the lowest 93.8%), where the pooled Wilson interval held it only 33.6%,
    59.5% and 77.0% of the time."""
    rng = np.random.default_rng(20261202 + responses)
    accepted, drafted = simulated(rng, responses, tokens)
    assert coverage(accepted, drafted) >= 0.93
    assert pooled_wilson_coverage(accepted, drafted) <= 0.80  # the simulation does see the pooling's error


@given(
    st.lists(
        st.tuples(st.integers(0, 5000), st.integers(1, 5000)).map(lambda kn: (min(kn), kn[1])), min_size=2, max_size=12
    )
)
def test_a_rate_interval_stays_inside_0_and_1_and_holds_the_mean(counts: list[tuple[int, int]]) -> None:
    r = rates.summarize_rate([k for k, _ in counts], [n for _, n in counts])
    assert r.mean is not None and 0 <= r.mean <= 1 and r.n == len(counts)
    if r.constant:
        assert (r.ci_low, r.ci_high, r.sd) == (None, None, 0.0)
    else:
        assert r.ci_low is not None and r.ci_high is not None
        assert 0 <= r.ci_low <= r.mean <= r.ci_high <= 1


# --- what the pages show ------------------------------------------------------------------

LOW, HIGH = "2026-11-29-nmax12", "2026-11-29-nmax2"


def _results(rows: list[tuple[int, int]]) -> str:
    """results.csv of one condition (concurrency 1): each trial's drafted and accepted tokens."""
    lines = "".join(f"{i},1,800.{i},{n},{k}\n" for i, (n, k) in enumerate(rows, start=1))
    return "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n" + lines


def rate_publication(tmp_path: Path, low: list[tuple[int, int]], high: list[tuple[int, int]]) -> dict[str, bytes]:
    """The pages of `rate_repo`."""
    return generate(rate_repo(tmp_path, low, high))


def rate_repo(tmp_path: Path, low: list[tuple[int, int]], high: list[tuple[int, int]]) -> Path:
    """Two runs and a claim that n_max 2 accepts more of its drafted tokens than n_max 12."""
    runs = []
    for run_id, rows in ((LOW, low), (HIGH, high)):
        run = measured_run(run_id)
        run[f"runs/{run_id}/results.csv"] = _results(rows)
        del run[f"runs/{run_id}/requests.csv"]
        runs.append(run)
    claim = {
        "id": "acceptance-up",
        "statement": "n_max 2 accepts a larger share.",
        "metric": "acceptance",
        "baseline": LOW,
        "candidate": HIGH,
        "at": {"concurrency": 1},
    }
    front = "---\n" + yaml.safe_dump({"title": "Rates", "claims": [claim]}) + "---\n\n# Rates\n"
    return write_tree(tmp_path, publication(*runs, extra={"site_src/reports/rates.md": front}))


def shown(page: bytes) -> str:
    """A generated page as a reader reads it: entities decoded, table cells without their
    attributes (alignment, the phone layout's labels)."""
    return html.unescape(re.sub(r"<td[^>]*>", "<td>", page.decode()))


IDENTICAL_LOW = [(1367, 385)] * 5  # temperature 0: every trial drafted and accepted the same tokens
IDENTICAL_HIGH = [(430, 289)] * 5
EXACT = "every trial identical: exact for this prompt set; another prompt set may differ"


def test_the_run_page_shows_a_rate_over_its_trials_with_the_tokens_as_context(tmp_path: Path) -> None:
    """Five trials that each drafted 1,367 tokens and accepted 385: n is 5 trials, never the 6,835
    pooled tokens, and no Wilson interval counts copies of the same tokens as sample size."""
    pages = rate_publication(tmp_path, IDENTICAL_LOW, [(430, 289), (431, 292), (428, 280), (433, 295), (430, 285)])
    page = shown(pages[f"runs/{LOW}/index.md"])
    assert (
        "<tr><td>concurrency=1</td><td>acceptance</td><td>5</td>"
        "<td>28.2% (every trial identical)</td><td>28.2%, 28.2%, 28.2%, 28.2%, 28.2%</td>"
        "<td>5 trials; every trial counted the same 1,367 draft_tokens</td></tr>"
    ) in page
    assert "Wilson" not in page and "6,835" not in page and "Pooled" not in page
    varied = shown(pages[f"runs/{HIGH}/index.md"])
    trial_rates = [289 / 430, 292 / 431, 280 / 428, 295 / 433, 285 / 430]  # 67.0% [65.6%, 68.3%] by scipy's t
    low, high = sps.t.interval(0.95, 4, loc=np.mean(trial_rates), scale=sps.sem(trial_rates))
    assert f"<td>{np.mean(trial_rates):.1%} [{low:.1%}, {high:.1%}]</td>" == "<td>67.0% [65.6%, 68.3%]</td>"
    assert "<td>67.0% [65.6%, 68.3%]</td>" in varied and "<td>2,152 draft_tokens over 5 trials</td>" in varied


def test_the_rate_chart_draws_the_trials_and_their_mean_with_no_rule_when_they_are_identical(tmp_path: Path) -> None:
    pages = rate_publication(tmp_path, IDENTICAL_LOW, [(430, 289), (431, 292), (428, 280), (433, 295), (430, 285)])
    exact = json.loads(pages[f"runs/{LOW}/charts/rate-acceptance.json"])["datasets"]["table"]
    assert [r["value"] for r in exact if r["kind"] == "trial"] == [385 / 1367] * 5
    (mean,) = [r for r in exact if r["kind"] == "mean"]
    assert (mean["value"], mean["n"], mean["low"], mean["high"]) == (385 / 1367, 5, None, None)
    varied = json.loads(pages[f"runs/{HIGH}/charts/rate-acceptance.json"])["datasets"]["table"]
    (mean,) = [r for r in varied if r["kind"] == "mean"]
    want = rates.summarize_rate([289, 292, 280, 295, 285], [430, 431, 428, 433, 430])
    assert (mean["value"], mean["low"], mean["high"]) == (want.mean, want.ci_low, want.ci_high)


def test_a_rate_claim_reads_in_points_then_the_ratio_on_the_card_chart_table_and_text(tmp_path: Path) -> None:
    """Both sides' trials identical (28.2% and 67.2%): "+39.0 pp" first, then the ratio labelled
    as one ("ratio 2.386x"), everywhere; the card says the difference is exact for this prompt set;
    no interval of no width ("[2.386, 2.386]") and no percent change ("+138.6%") anywhere."""
    pages = rate_publication(tmp_path, IDENTICAL_LOW, IDENTICAL_HIGH)
    page = shown(pages["claims/acceptance-up/index.md"])
    assert f"<dt>Measured</dt><dd>+39.0 pp, 28.2% → 67.2% (ratio 2.386x; {EXACT})</dd>" in page
    assert (
        "<dt>Baseline, counts</dt><dd>5 trials; every trial counted the same 1,367 draft_tokens "
        "(context only: the interval counts trials)</dd>"
    ) in page
    assert f"<td>+39.0 pp (ratio 2.386x)</td><td>{EXACT}</td>" in page  # the table beside the forest
    assert (
        "so for this prompt set the difference is exactly +39.0 pp, 28.2% → 67.2% (ratio 2.386x; "
        "another prompt set may differ)"
    ) in page  # the verdict's reason
    assert "The smallest change worth calling is ±1.0% (a rate is judged by its ratio: 0.990x to 1.010x)" in page
    forest = json.loads(pages["claims/acceptance-up/charts/forest.json"])
    (row,) = forest["datasets"]["table"]
    assert row["label"] == (  # the statement, then points first and the ratio labelled as one
        "n_max 2 accepts a larger\nshare\nsupported: +39.0 pp\nratio 2.386x\nexact: every trial\nidentical on both sides"
    )
    assert "ratio (log scale)" in json.dumps(forest) and "'+.1%'" not in json.dumps(forest)
    ledger = shown(pages["claims/index.md"])
    for text in (page, ledger):
        assert "2.386, 2.386" not in text and "138.6" not in text and "Wilson" not in text
    assert f"+39.0 pp, 28.2% → 67.2% (ratio 2.386x; {EXACT})" in ledger


def test_a_rate_claim_with_spread_shows_the_ratio_interval_labelled_as_one(tmp_path: Path) -> None:
    varied = [(430, 289), (431, 292), (428, 280), (433, 295), (430, 285)]
    pages = rate_publication(tmp_path, [(1367, 385), (1367, 380), (1367, 391), (1367, 379), (1367, 388)], varied)
    page = shown(pages["claims/acceptance-up/index.md"])
    ratio = ratios.ratio_interval([k / 1367 for k in (385, 380, 391, 379, 388)], [k / n for n, k in varied])
    assert f"{ratio.ratio:.3f}x [{ratio.low:.3f}x, {ratio.high:.3f}x]" == "2.380x [2.328x, 2.433x]"
    assert "<dt>Measured</dt><dd>+38.8 pp, 28.1% → 67.0% (ratio 2.380x [2.328x, 2.433x])</dd>" in page
    assert "<td>+38.8 pp (ratio 2.380x)</td><td>[2.328x, 2.433x]</td>" in page
    assert (
        "<dt>Baseline</dt><dd>2026-11-29-nmax12: mean of per-trial rates 28.1% [27.7%, 28.6%] "
        "(95%, t over the trials), n = 5 trials</dd>"
    ) in page
    assert (
        "the difference is +38.8 pp, 28.1% → 67.0%, and the 95% interval of the ratio runs from 2.328x to 2.433x"
        in page
    )


def test_the_methods_page_states_the_rate_rules_from_the_code() -> None:
    from generator.analysis.comparison import Settings
    from generator.render.methods_page import methods_page

    page = html.unescape(methods_page(Settings(min_effect=0.02)))
    assert "with the smallest change worth calling\n   as a ratio (±2.0%: beyond 0.980x or 1.020x)" in page
    assert "**truncated to [0, 1]**" in page and "never as the interval's n" in page
    assert "Wilson score interval" not in page


def test_a_rate_claim_is_judged_by_its_ratio_with_min_effect_as_a_ratio(tmp_path: Path) -> None:
    """10.0% -> 10.5% is +0.5 pp, under a point, but a ratio of 1.05x: beyond 1 + min_effect
    (1.010x), so supported. The verdict rule for rates is the ratio's, as FORMAT.md says."""
    low = [(1000, k) for k in (99, 100, 101, 100, 100)]
    high = [(1000, k) for k in (105, 104, 106, 105, 105)]
    pages = rate_publication(tmp_path, low, high)
    page = shown(pages["claims/acceptance-up/index.md"])
    ratio = ratios.ratio_interval([k / 1000 for _, k in low], [k / 1000 for _, k in high])
    assert ratio.low > 1.01 and f"{ratio.low:.3f}x to {ratio.high:.3f}x" == "1.039x to 1.061x"
    assert (
        "Supported: the difference is +0.5 pp, 10.0% → 10.5%, and the 95% interval of the ratio runs from "
        "1.039x to 1.061x, entirely beyond the smallest change worth calling, as an increase."
    ) in page


def test_compare_prints_a_rate_in_points_then_its_ratio(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from generator.cli import app

    root = rate_repo(tmp_path, IDENTICAL_LOW, IDENTICAL_HIGH)
    args = ["compare", LOW, HIGH, "--metric", "acceptance", "--at", "concurrency=1", "--repo", str(root)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"candidate vs baseline: +39.0 pp, 28.2% → 67.2% (ratio 2.386x; {EXACT})" in result.output
    assert "28.2% (every trial identical)" in result.output and "0.2816" not in result.output
