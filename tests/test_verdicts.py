"""The verdict rule: every verdict and claim kind by hand, seeded simulations bounding the
error rates, published summaries, exclusions, several conditions, trial units."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from builders import SLOWER, A, B, claim, repo_with
from generator.analysis import ratios, verdicts
from generator.analysis.claims import evaluate_all
from generator.analysis.comparison import Settings
from generator.cli import app
from generator.format.claimed import parse_claimed
from generator.ledger.load import load
from helpers import RESULTS, measured_run, publication, write_tree

ROOT = Path(__file__).parents[1]

# --- the rule by hand -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "tost", "direction", "claimed", "expected", "understated"),
    [
        ((0.80, 0.95), (0.82, 0.93), 1, None, "contradicted", False),
        ((0.80, 0.95), (0.82, 0.93), 1, 1.2, "contradicted", False),  # contradiction comes first
        ((1.057, 1.093), (1.06, 1.09), 1, 1.20, "overstated", False),  # "+20%" measured +7.5% [+5.7, +9.3]
        ((0.923, 0.976), (0.928, 0.971), -1, 0.84, "overstated", False),  # "-16%" at -5.1% [-7.7, -2.4]
        ((0.99, 1.02), (0.995, 1.015), 1, 1.2, "overstated", False),  # the Spark story: +20% inside noise
        ((1.05, 1.20), (1.06, 1.18), 1, 1.10, "supported", False),
        ((1.05, 1.20), (1.06, 1.18), 1, 1.02, "supported", True),  # claimed +2%, data show at least +5%
        ((1.05, 1.20), (1.06, 1.18), 1, None, "supported", False),
        ((0.80, 0.95), (0.82, 0.93), -1, None, "supported", False),
        ((0.9997, 1.006), (1.0, 1.005), 1, None, "within noise", False),  # +0.3% inside the 1% smallest change
        ((0.97, 1.04), (0.975, 1.035), 1, None, "within noise", False),
        ((1.003, 1.009), (1.004, 1.008), 1, None, "inconclusive", False),  # a difference, too small to call
        ((0.95, 0.998), (0.96, 0.995), 0, None, "inconclusive", False),  # a difference the interval establishes
        ((0.90, 1.30), (0.93, 1.25), 1, None, "inconclusive", False),
        ((1.05, 1.20), (1.06, 1.18), 0, None, "inconclusive", False),  # no direction: never supported
    ],
)
def test_direction_and_magnitude_claims_by_hand(
    ci: tuple[float, float],
    tost: tuple[float, float],
    direction: int,
    claimed: float | None,
    expected: str,
    understated: bool,
) -> None:
    found = verdicts.judge(ci, tost, direction, claimed, min_effect=0.01, band=0.04)
    assert (found.verdict, found.understated) == (expected, understated)


@pytest.mark.parametrize(
    ("ci", "tost", "margin", "expected"),
    [
        ((0.985, 1.012), (0.988, 1.009), 0.02, "supported"),
        ((0.975, 1.012), (0.981, 1.009), 0.02, "supported"),  # the 95% interval may leave the margin
        ((0.975, 1.012), (0.978, 1.009), 0.02, "inconclusive"),
        ((1.057, 1.093), (1.06, 1.09), 0.02, "contradicted"),  # "decode speed is the same", 7.5% apart
        ((0.90, 0.97), (0.91, 0.96), 0.02, "contradicted"),
    ],
)
def test_equivalence_claims_by_hand(
    ci: tuple[float, float], tost: tuple[float, float], margin: float, expected: str
) -> None:
    assert verdicts.judge_equivalence(ci, tost, margin).verdict == expected


@pytest.mark.parametrize(
    ("text", "kind", "direction", "ratio", "margin"),
    [
        ("+", "direction", 1, None, None),
        ("−", "direction", -1, None, None),
        ("+20%", "magnitude", 1, 1.2, None),
        ("-5%", "magnitude", -1, 0.95, None),
        ("1.2x", "magnitude", 1, 1.2, None),
        ("0.8x", "magnitude", -1, 0.8, None),
        ("±2%", "equivalence", 0, None, 0.02),
        ("+/-3%", "equivalence", 0, None, 0.03),
        ("within 2.5%", "equivalence", 0, None, 0.025),
        ("0%", "equivalence", 0, None, None),
        ("1.0x", "equivalence", 0, None, None),
    ],
)
def test_claimed_kinds(text: str, kind: str, direction: int, ratio: float | None, margin: float | None) -> None:
    parsed = parse_claimed(text)
    assert (parsed.kind, parsed.direction, parsed.margin) == (kind, direction, margin)
    assert parsed.ratio(direction or 1) == (pytest.approx(ratio) if ratio else None)


def test_an_unsigned_magnitude_goes_the_way_of_better() -> None:
    assert parse_claimed("20%").ratio(-1) == pytest.approx(0.8)
    assert parse_claimed("20%").ratio(1) == pytest.approx(1.2)


@pytest.mark.parametrize("text", ["-100%", "about 20", "1e9x", "20000%", "0x"])
def test_impossible_claims_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="claimed"):
        parse_claimed(text)


@pytest.mark.parametrize("text", ["±0%", "within 0%", "±0.0%"])
def test_a_margin_of_zero_is_refused_for_it_can_never_be_supported(text: str) -> None:
    with pytest.raises(ValueError, match="no interval ever lies inside a margin of 0"):
        parse_claimed(text)


def test_several_conditions_hold_only_where_every_condition_holds() -> None:
    assert verdicts.combine(["supported", "supported"]) == "supported"
    assert verdicts.combine(["supported", "within noise"]) == "inconclusive"
    assert verdicts.combine(["supported", "overstated", "contradicted"]) == "contradicted"
    assert verdicts.combine(["supported", "overstated"]) == "overstated"
    assert verdicts.combine(["no trial data", "contradicted"]) == "no trial data"
    assert verdicts.combine(["within noise", "within noise"]) == "within noise"


# --- seeded simulations ---------------------------------------------------------------

CV = 0.05


def _trials(rng: np.random.Generator, n: int, ratio: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    sigma = math.sqrt(math.log1p(CV**2))
    return rng.lognormal(3, sigma, n), rng.lognormal(3 + math.log(ratio), sigma, n)


@pytest.mark.parametrize("n", [5, 10, 30])
def test_a_true_claimed_magnitude_is_rarely_called_overstated(n: int) -> None:
    rng = np.random.default_rng(1300 + n)
    overstated = 0
    for _ in range(1000):
        b, c = _trials(rng, n, 1.2)
        r = ratios.ratio_interval(b, c)
        overstated += verdicts.judge(r.bounds(0.95), r.bounds(0.90), 1, 1.2, 0.01, CV).verdict == "overstated"
    assert overstated <= 50  # at most 5%: the claimed value beyond the interval's far end is a 2.5% tail


@pytest.mark.parametrize("n", [5, 10, 30])
def test_a_true_ratio_on_the_margin_is_rarely_called_equivalent(n: int) -> None:
    rng = np.random.default_rng(2600 + n)
    supported = 0
    for _ in range(1000):
        b, c = _trials(rng, n, 1.02)
        r = ratios.ratio_interval(b, c)
        supported += verdicts.judge_equivalence(r.bounds(0.95), r.bounds(0.90), 0.02).verdict == "supported"
    assert supported <= 50


def test_no_difference_with_a_margin_of_twice_the_cv_is_shown_at_n_30() -> None:
    rng = np.random.default_rng(3030)
    supported = 0
    for _ in range(1000):
        b, c = _trials(rng, 30)
        r = ratios.ratio_interval(b, c)
        supported += verdicts.judge_equivalence(r.bounds(0.95), r.bounds(0.90), 2 * CV).verdict == "supported"
    assert supported >= 800


@pytest.mark.parametrize(
    ("n", "k", "min_effect", "bound"), [(5, 3, 0.01, 0.05), (10, 4, 0.01, 0.05), (5, 3, 0.0, 0.065)]
)
def test_several_conditions_keep_the_family_wise_error_under_the_null(
    n: int, k: int, min_effect: float, bound: float
) -> None:
    """Under the null, the chance that any of k conditions is called supported or contradicted.
    With the default 1% smallest change it stays under 5%; with none, Welch's small-sample
    liberality shows (5.3% at n = 5), which the methods page states."""
    rng = np.random.default_rng(4000 + 10 * n + k)
    level = 1 - 0.05 / k  # Bonferroni, as compare() uses
    wrong = 0
    for _ in range(2000):
        called = []
        for _ in range(k):
            b, c = _trials(rng, n)
            r = ratios.ratio_interval(b, c)
            called.append(verdicts.judge(r.bounds(level), r.bounds(2 * level - 1), 1, None, min_effect, CV).verdict)
        wrong += any(v in ("supported", "contradicted") for v in called)
    assert wrong <= bound * 2000


def test_published_summaries_agree_with_raw_trials_of_that_mean_and_sd() -> None:
    rng = np.random.default_rng(5050)
    for _ in range(200):
        b, c = _trials(rng, 8, 1.07)
        raw = ratios.ratio_interval(b, c)
        summary = ratios.ratio_from_summaries(
            (float(b.mean()), float(b.std(ddof=1)), 8), (float(c.mean()), float(c.std(ddof=1)), 8)
        )
        for x, y in zip(raw.bounds(0.95), summary.bounds(0.95), strict=True):
            assert abs(x / y - 1) < 0.01


# --- end to end on fixture publications ----------------------------------------------


def evaluations(root: Path, **settings: float) -> dict:
    return evaluate_all(load(root), Settings(**settings))


def test_a_gain_of_the_wrong_size_is_overstated_and_says_by_how_much(tmp_path: Path) -> None:
    faster = RESULTS.replace("104.1", "111.1").replace("103.5", "110.9").replace("104.8", "112.5")
    faster = faster.replace("102.9", "110.2").replace("104.0", "112.0")
    root = repo_with(tmp_path, [claim(claimed="+20%")], candidate_results=faster)
    ev = evaluations(root)["shortlist-c8"]
    assert ev.verdict == "overstated"
    assert ev.reason.startswith("Overstated: claimed +20%, the data allow at most +8.")
    assert ev.only is not None and ev.only.ci_high is not None and ev.only.ci_high < 1.2


def test_no_difference_claimed_is_judged_by_equivalence(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim(claimed="0%")], candidate_results=RESULTS)
    ev = evaluations(root)["shortlist-c8"]
    assert (
        ev.reason
        == "Supported (two one-sided tests): the 90% interval runs from -0.8% to +0.8%, inside the ±1.0% margin, "
        "the smallest change worth calling. Run-to-run noise, for context: CV 0.7%, so a single run cannot show "
        "a change much smaller than that; the margin does not grow with it."
    )
    root = repo_with(tmp_path / "b", [claim(claimed="within 1%")])  # -4.2% [-7.1%, -1.1%] against +-1%
    assert evaluations(root)["shortlist-c8"].verdict == "contradicted"


def test_identical_trials_carry_a_flag_instead_of_certainty(tmp_path: Path) -> None:
    same = "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n" + "".join(
        f"{t},{c},{v},100,50\n" for t in range(1, 4) for c, v in ((1, 30.0), (8, 100.0))
    )
    root = repo_with(tmp_path, [claim(metric="acceptance")], candidate_results=same)
    ev = evaluations(root)["shortlist-c8"]
    assert "no run-to-run variation" in ev.flags
    assert ev.reason.startswith("No run-to-run variation was measured in 2026-09-01-shortlist")


def test_trials_needed_answer_the_open_question(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim()], candidate_results=SLOWER.replace("97.5", "109.0"))
    ev = evaluations(root)["shortlist-c8"]
    assert ev.only is not None and ev.verdict == "inconclusive"
    assert (ev.only.trials_needed, ev.only.settles_as) == (155, "contradicted")
    assert ev.reason.endswith("About 155 trials per side would settle it, most likely as contradicted.")


def test_an_estimate_on_a_bound_says_more_trials_will_not_settle_it(tmp_path: Path) -> None:
    """-4.183% measured against a claimed ±4.183%: no number of trials moves the interval off
    the margin it straddles."""
    root = repo_with(tmp_path, [claim(claimed="within 4.183%")])
    ev = evaluations(root)["shortlist-c8"]
    assert ev.only is not None and ev.verdict == "inconclusive" and ev.only.trials_needed is None
    assert ev.only.unsettled == (
        "More trials will not settle this: the estimate, -4.2%, sits on the bound -4.2% (the equivalence margin), "
        "so however many trials are added the interval keeps straddling it."
    )
    assert ev.reason.endswith(
        ev.only.unsettled + " Run-to-run noise, for context: CV 2.6%, so a single run cannot "
        "show a change much smaller than that; the margin does not grow with it."
    )


def test_excluded_trials_stay_on_the_page_and_out_of_the_statistics(tmp_path: Path) -> None:
    bad = SLOWER.replace("5,8,104.0", "5,8,60.0")
    excluded = [{"trial": 5, "at": {"concurrency": 8}, "reason": "a backup job ran during trial 5"}]
    b = measured_run(B, excluded=excluded)
    b[f"runs/{B}/results.csv"] = bad
    files = publication(measured_run(A), b, extra={"site_src/reports/seed.md": _report([claim()])})
    root = write_tree(tmp_path / "pub", files)
    ev = evaluations(root)["shortlist-c8"]
    assert ev.only is not None and ev.only.candidate.n == 4 and 60.0 not in ev.only.candidate.values
    assert ev.only.candidate.excluded == ((5, 60.0, "a backup job ran during trial 5"),)
    result = CliRunner().invoke(app, ["generate", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    page = (root / "site_src" / "runs" / B / "index.md").read_text()
    assert "<del>60</del> (excluded: a backup job ran during trial 5)" in page
    assert "trial 5, tokens&#95;per&#95;second at concurrency&#61;8: a backup job ran during trial 5" in page


def test_a_verdict_that_depends_on_an_excluded_trial_says_so(tmp_path: Path) -> None:
    # Without trial 5 the candidate is clearly slower; with it the interval spans no difference.
    results = SLOWER.replace("5,8,104.0", "5,8,160.0")
    b = measured_run(B, excluded=[{"trial": 5, "reason": "thermal throttling logged"}])
    b[f"runs/{B}/results.csv"] = results
    files = publication(measured_run(A), b, extra={"site_src/reports/seed.md": _report([claim()])})
    ev = evaluations(write_tree(tmp_path / "pub", files))["shortlist-c8"]
    assert ev.verdict == "contradicted" and ev.only is not None and ev.only.restored == "inconclusive"
    assert "verdict depends on 1 excluded trial" in ev.flags


def test_an_exclusion_that_matches_nothing_is_a_located_error(tmp_path: Path) -> None:
    run = measured_run(A, excluded=[{"trial": 9, "reason": "x"}, {"trial": 1, "at": {"ctx": 1}, "reason": "y"}])
    root = write_tree(tmp_path / "pub", publication(run))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert f"runs/{A}/run.yaml:27: excluded.0: trial 9 at any condition is not in results.csv" in result.output
    assert f"runs/{A}/run.yaml:29: excluded.1: ctx is not a condition; the conditions are: concurrency" in result.output


def test_repetitions_in_one_process_carry_a_caveat(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim()], trial_unit="repetition")
    ev = evaluations(root)["shortlist-c8"]
    assert "repetitions in one process" in ev.flags
    CliRunner().invoke(app, ["generate", "--repo", str(root)])
    page = (root / "site_src" / "runs" / B / "index.md").read_text()
    assert "Trials are repetitions inside one process" in page
    assert '<td data-label="Field">Trial unit</td><td data-label="Value">repetition</td>' in page


def _report(claims: list[dict]) -> str:
    meta = {"title": "A report", "date": "2026-09-06", "claims": claims}
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n# A report\n"


def _reported(
    run_id: str, rows: str, header: str = "trial,concurrency,tokens_per_second,tokens_per_second.sd,tokens_per_second.n"
) -> dict[str, str]:
    files = measured_run(
        run_id,
        source={"kind": "reported", "citation": "A llama.cpp discussion", "url": "https://example.org/t"},
        metrics={"tokens_per_second": {"unit": "tok/s", "better": "higher"}},
        rates={},
    )
    files[f"runs/{run_id}/results.csv"] = header + "\n" + rows
    del files[f"runs/{run_id}/requests.csv"]
    return files


def test_published_mean_sd_and_n_give_a_marked_welch_verdict(tmp_path: Path) -> None:
    base = _reported(A, ",1,31.2,0.4,5\n,8,104.0,1.2,5\n")
    cand = _reported(B, ",1,33.9,0.5,5\n,8,112.3,1.5,5\n")
    files = publication(base, cand, extra={"site_src/reports/seed.md": _report([claim(claimed="+8%")])})
    root = write_tree(tmp_path / "pub", files)
    ev = evaluations(root)["shortlist-c8"]
    assert ev.verdict == "supported" and ev.only is not None and ev.only.source == "summaries"
    expected = ratios.ratio_from_summaries((104.0, 1.2, 5), (112.3, 1.5, 5))
    assert ev.only.ci_low == pytest.approx(expected.bounds(0.95)[0])
    assert "from published summaries" in ev.flags and "(from published mean, SD and n)" in ev.reason
    CliRunner().invoke(app, ["generate", "--repo", str(root)])
    page = (root / "site_src" / "runs" / A / "index.md").read_text()
    assert "104 tok&#47;s ± 1.2 (SD, n = 5)" in page


def test_a_published_summary_needs_both_columns_and_only_in_reported_runs(tmp_path: Path) -> None:
    half = _reported(A, ",1,31.2,0.4\n", header="trial,concurrency,tokens_per_second,tokens_per_second.sd")
    root = write_tree(tmp_path / "a", publication(half))
    out = CliRunner().invoke(app, ["check", "--repo", str(root)]).output
    assert (
        f"runs/{A}/results.csv:1: tokens_per_second.n: missing; a published summary of tokens_per_second needs both"
        in out
    )
    measured = measured_run(B)
    measured[f"runs/{B}/results.csv"] = RESULTS.replace("draft_accepted\n", "draft_accepted,tokens_per_second.sd\n", 1)
    root = write_tree(tmp_path / "b", publication(measured))
    out = CliRunner().invoke(app, ["check", "--repo", str(root)]).output
    assert f"runs/{B}/results.csv:1: tokens_per_second.sd: column is not declared in run.yaml" in out


def test_a_claim_over_several_conditions_gets_a_row_per_condition(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim(at=[{"concurrency": 1}, {"concurrency": 8}])])
    ev = evaluations(root)["shortlist-c8"]
    assert [c.label for c in ev.conditions] == ["concurrency=1", "concurrency=8"]
    # Alone, concurrency=8 is contradicted at 95% ([-7.1%, -1.1%]); judged with a second
    # condition its simultaneous 97.5% interval reaches past -1%, so the claim stays open.
    assert [c.verdict for c in ev.conditions] == ["inconclusive", "inconclusive"]
    assert ev.verdict == "inconclusive" and ev.conditions[0].confidence == pytest.approx(0.975)
    assert ev.reason.startswith("Inconclusive: inconclusive at concurrency=1, concurrency=8. Judged at 2 conditions")
    every = evaluations(repo_with(tmp_path / "all", [claim(at="all")]))["shortlist-c8"]
    assert [c.label for c in every.conditions] == ["concurrency=1", "concurrency=8"]


def test_compare_takes_claimed_and_several_conditions(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim()])
    args = ["compare", A, B, "--metric", "tokens_per_second", "--repo", str(root), "--json"]
    one = json.loads(CliRunner().invoke(app, [*args, "--at", "concurrency=8", "--claimed", "-5%"]).output)
    assert (one["verdict"], one["claimed"], one["claimed_kind"]) == ("supported", "-5%", "magnitude")
    assert "conditions" not in one
    result = CliRunner().invoke(app, [*args, "--at", "concurrency=1", "--at", "concurrency=8"])
    several = json.loads(result.output)
    assert several["at"] == [{"concurrency": 1}, {"concurrency": 8}] and several["ratio"] is None
    assert [c["verdict"] for c in several["conditions"]] == ["inconclusive", "inconclusive"]
    assert several["conditions"][1]["confidence"] == pytest.approx(0.975)
    assert json.loads(CliRunner().invoke(app, [*args, "--at", "all"]).output)["at"] == several["at"]


def test_the_example_publication_nmax4_claim_is_overstated() -> None:
    ev = evaluate_all(load(ROOT), Settings())["testbed-throughput-nmax4-vs-nmax3"]
    assert ev.verdict == "overstated"
    assert ev.reason.startswith("Overstated: claimed -16%, the data allow at most -7.7% (the 95% interval")


# --- margins that never grow with noise, trials that settle (issue 22) ---------------------


def wilson(count: int, total: int) -> tuple[float, float]:
    """The 95% Wilson interval of a simulated rate."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(count, total, alpha=0.05, method="wilson")
    return float(low), float(high)


def _lognormal_pair(rng: np.random.Generator, n: int, cv: float, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    sigma = math.sqrt(math.log1p(cv**2))
    return rng.lognormal(3, sigma, n), rng.lognormal(3 + math.log(ratio), sigma, n)


def no_difference_support(
    n: int, cv: float, ratio: float, replications: int = 2000, min_effect: float = 0.01, seed: int = 0
) -> int:
    """How often "0%" is supported when the true ratio is `ratio`, with the margin compare() uses."""
    from generator.analysis.comparison import Question

    margin = Question(
        settings=Settings(min_effect=min_effect),
        level=0.95,
        direction=1,
        claimed=parse_claimed("0%"),
        claimed_ratio=None,
    ).margin
    assert margin == min_effect
    rng = np.random.default_rng(int(cv * 1000) * 100 + n + seed)
    supported = 0
    for _ in range(replications):
        r = ratios.ratio_interval(*_lognormal_pair(rng, n, cv, ratio))
        supported += verdicts.judge_equivalence(r.bounds(0.95), r.bounds(0.90), margin).verdict == "supported"
    return supported


NO_DIFFERENCE_AT_THE_MARGIN = {  # (n, CV) -> "0%" supported of 2,000 when the truth is +1%, the margin
    (5, 0.02): 2,
    (5, 0.05): 0,
    (5, 0.20): 0,
    (10, 0.02): 0,
    (10, 0.05): 0,
    (10, 0.20): 0,
    (30, 0.02): 71,
    (30, 0.05): 0,
    (30, 0.20): 0,
}


@pytest.mark.parametrize("n", [5, 10, 30])
def test_no_difference_at_the_margin_is_rarely_supported_and_never_more_with_noise(n: int) -> None:
    """A "0%" claim's margin is min_effect (1%), whatever the CV. With the truth on the margin
    (+1%), support stays under 5% (the Wilson interval's upper end) at CV 2%, 5% and 20%,
    and never rises with the CV (the old margin, max(CV, min_effect), gave 27% at CV 20%)."""
    rates = []
    for cv in (0.02, 0.05, 0.20):
        supported = no_difference_support(n, cv, 1.01)
        assert supported == NO_DIFFERENCE_AT_THE_MARGIN[n, cv]
        low, high = wilson(supported, 2000)
        assert high <= 0.05, (n, cv, supported, low, high)
        rates.append(supported)
    assert rates == sorted(rates, reverse=True)  # noisier data never make "no difference" easier


NO_DIFFERENCE_AT_A_FIVE_PERCENT_MARGIN = {  # (n, CV) -> supported of 2,000, truth +5%, min_effect 5%
    (5, 0.02): 110,
    (5, 0.05): 26,
    (5, 0.20): 0,
    (10, 0.02): 105,
    (10, 0.05): 93,
    (10, 0.20): 0,
    (30, 0.02): 86,
    (30, 0.05): 93,
    (30, 0.20): 0,
}


@pytest.mark.parametrize("n", [5, 10, 30])
def test_no_difference_at_a_five_percent_margin_holds_the_test_size(n: int) -> None:
    """min_effect 5%, the truth on the margin (+5%): the support rate is the equivalence test's
    size, about 5%, never shown above it (the Wilson interval's lower end stays at or below 5%;
    at n = 5 Welch's small-sample liberality gives 5.5% [4.6%, 6.6%]), and no CV's rate lies
    above a smaller CV's (their Wilson intervals overlap or the rate falls)."""
    found = {}
    for cv in (0.02, 0.05, 0.20):
        found[cv] = no_difference_support(n, cv, 1.05, min_effect=0.05, seed=7)
        assert found[cv] == NO_DIFFERENCE_AT_A_FIVE_PERCENT_MARGIN[n, cv]
        assert wilson(found[cv], 2000)[0] <= 0.05
    for smaller, larger in ((0.02, 0.05), (0.05, 0.20)):
        assert wilson(found[larger], 2000)[0] <= wilson(found[smaller], 2000)[1]


@pytest.mark.parametrize("n", [10, 30, 60])
def test_a_ten_percent_difference_at_cv_20_is_never_called_no_difference(n: int) -> None:
    """The audit's case: +10% at CV 20% was "0%"-supported 27% of the time at n = 10, 57% at
    30, 77% at 50 under the noise-sized margin; with min_effect as the margin, never."""
    supported = no_difference_support(n, 0.20, 1.10, replications=500)
    assert supported == 0
    assert wilson(supported, 500)[1] <= 0.01


def test_the_margin_of_no_difference_is_min_effect_on_the_page(tmp_path: Path) -> None:
    """A noisy pair of runs: "0%" keeps the 1% margin (or the claim's own min_effect), and the
    CV is shown as context."""
    noisy = SLOWER.replace("97.5", "117.0").replace("99.1", "84.0")
    root = repo_with(
        tmp_path, [claim(claimed="0%"), claim(id="own", claimed="0%", min_effect=0.03)], candidate_results=noisy
    )
    found = evaluations(root)
    ev, own = found["shortlist-c8"], found["own"]
    assert ev.comparison is not None and own.comparison is not None
    assert (ev.comparison.margin, own.comparison.margin, own.min_effect) == (0.01, 0.03, 0.03)
    assert ev.only is not None and ev.only.noise is not None and ev.only.noise > 0.05
    assert "the ±1.0% margin, the smallest change worth calling" in ev.reason
    assert f"Run-to-run noise, for context: CV {ev.only.noise:.1%}" in ev.reason


def test_within_noise_needs_the_interval_to_contain_no_difference() -> None:
    """+1.5% [+0.4%, +2.6%] against a band of 5%: a difference the interval establishes, too
    small to call, is inconclusive, never "within noise"."""
    found = verdicts.judge((1.004, 1.026), (1.006, 1.024), 1, None, min_effect=0.03, band=0.05)
    assert found.verdict == "inconclusive"
    assert verdicts.judge((0.996, 1.026), (1.0, 1.024), 1, None, min_effect=0.03, band=0.05).verdict == "within noise"


@pytest.mark.parametrize(
    ("ci", "tost", "direction", "claimed", "margin"),
    [
        ((0.80, 0.95), (0.82, 0.93), 1, 1.2, None),
        ((1.057, 1.093), (1.06, 1.09), 1, 1.20, None),
        ((0.923, 0.976), (0.928, 0.971), -1, 0.84, None),
        ((1.05, 1.20), (1.06, 1.18), 1, None, None),
        ((0.97, 1.04), (0.975, 1.035), 1, None, None),
        ((1.004, 1.026), (1.006, 1.024), 1, None, None),
        ((0.90, 1.30), (0.93, 1.25), 0, None, None),
        ((0.975, 1.012), (0.981, 1.009), 0, None, 0.02),
        ((1.03, 1.06), (1.035, 1.055), 0, None, 0.02),
        ((0.99, 1.03), (0.995, 1.025), 0, None, 0.02),
    ],
)
def test_the_simulated_rule_is_the_rule(
    ci: tuple[float, float], tost: tuple[float, float], direction: int, claimed: float | None, margin: float | None
) -> None:
    """judge_many, which the trials-needed search applies to simulated draws, gives judge's verdicts."""
    one = verdicts.judge(ci, tost, direction, claimed, 0.01, 0.04) if margin is None else None
    expected = one.verdict if one else verdicts.judge_equivalence(ci, tost, margin or 0.0).verdict
    code = verdicts.judge_many(
        ci, tost, direction=direction, claimed_ratio=claimed, min_effect=0.01, band=0.04, margin=margin
    )
    assert verdicts.VERDICTS[int(code)] == expected


SETTLING = [  # name, true ratio, CV, claimed kind, recommended n, its simulated power, settled of 1,000
    ("a +3% gain at CV 5%, direction claim", 1.03, 0.05, "direction", 104, "supported", 824),
    ("ik_llama.cpp t32 kf16/kq80: +1.3% at CV 1.3%", 1.013, 0.013, "direction", 305, "supported", 773),
    ('"±5%" with no true difference at CV 10%', 1.0, 0.10, "±5%", 71, "supported", 825),
]


@pytest.mark.parametrize(("name", "ratio", "cv", "kind", "n", "outcome", "settled"), SETTLING)
def test_trials_needed_settle_the_verdict(
    name: str, ratio: float, cv: float, kind: str, n: int, outcome: str, settled: int
) -> None:
    """The recommended trials per side, from 5 trials measured at the true effect and spread:
    1,000 fresh replications at that n reach a decided verdict at least 70% of the time (the
    Wilson interval's lower end), and the recommendation exceeds the trials present."""
    from generator.analysis.power import comparison_settling

    sigma = math.sqrt(math.log1p(cv**2))
    margin = 0.05 if kind == "±5%" else None
    direction = 1 if margin is None else 0
    found = comparison_settling(
        math.log(ratio),
        sigma,
        5,
        0.95,
        direction=direction,
        claimed_ratio=None,
        min_effect=0.01,
        band=max(cv, 0.01),
        margin=margin,
    )
    assert (found.trials, found.outcome) == (n, outcome)
    rng = np.random.default_rng(7)
    decided = 0
    for _ in range(1000):
        r = ratios.ratio_interval(*_lognormal_pair(rng, n, cv, ratio))
        if margin is None:
            verdict = verdicts.judge(r.bounds(0.95), r.bounds(0.90), direction, None, 0.01, max(cv, 0.01)).verdict
        else:
            verdict = verdicts.judge_equivalence(r.bounds(0.95), r.bounds(0.90), margin).verdict
        decided += verdict != "inconclusive"
    assert decided == settled
    assert wilson(decided, 1000)[0] >= 0.70


def test_an_estimate_on_the_margin_will_not_be_settled_by_more_trials(tmp_path: Path) -> None:
    from generator.analysis.power import comparison_settling

    found = comparison_settling(
        math.log(1.05), 0.05, 5, 0.95, direction=0, claimed_ratio=None, min_effect=0.01, band=0.05, margin=0.05
    )
    assert found.trials is None


def test_trials_needed_are_never_the_trials_already_there(tmp_path: Path) -> None:
    from generator.analysis.power import comparison_settling

    found = comparison_settling(
        math.log(1.2), 0.05, 10, 0.95, direction=1, claimed_ratio=None, min_effect=0.01, band=0.05, margin=None
    )
    assert found.trials == 11


def test_a_varies_key_in_neither_run_is_a_located_error(tmp_path: Path) -> None:
    root = repo_with(tmp_path, [claim(varies=["setup.draft_vocb", "kernels"])])
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert (
        "site_src/reports/seed.md:14: claims.0.varies.0: 'setup.draft_vocb' is in neither "
        f"'{A}' nor '{B}' (manifest or setup); the closest key they have is 'setup.draft_vocab': correct the key, "
        "or remove it"
    ) in result.output, result.output
    assert "varies.1" not in result.output  # a section above existing keys varies every key under it
    args = ["compare", A, B, "--metric", "tokens_per_second", "--at", "concurrency=8", "--repo", str(root)]
    args += ["--varies", "setup.vocab"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1 and "--varies: 'setup.vocab' is in neither" in refused.output, refused.output


LLAMA_BENCH = "trial,n_prompt,n_gen,tokens_per_second\n" + "".join(
    f"{t},{p},{g},{v * (1 + 0.01 * t)}\n" for t in range(1, 5) for p, g, v in ((512, 0, 900.0), (0, 128, 40.0))
)


def test_compare_at_takes_one_condition_tuple_per_option(tmp_path: Path) -> None:
    """llama-bench's two tests, pp512 (n_gen 0) and tg128 (n_prompt 0), named as two conditions;
    the old form (a key repeated: a cartesian product) keeps working."""
    metrics = {"tokens_per_second": {"unit": "tok/s", "better": "higher"}}
    runs = {}
    for run_id in (A, B):
        meta = yaml.safe_load(measured_run(run_id)[f"runs/{run_id}/run.yaml"])
        meta |= {"conditions": ["n_prompt", "n_gen"], "metrics": metrics, "rates": {}}
        files = measured_run(run_id) | {
            f"runs/{run_id}/run.yaml": yaml.safe_dump(meta),
            f"runs/{run_id}/results.csv": LLAMA_BENCH,
        }
        runs[run_id] = {path: text for path, text in files.items() if not path.endswith("requests.csv")}
    root = write_tree(tmp_path / "pub", publication(*runs.values()))
    args = ["compare", A, B, "--metric", "tokens_per_second", "--repo", str(root), "--json"]
    two = CliRunner().invoke(app, [*args, "--at", "n_prompt=512,n_gen=0", "--at", "n_prompt=0,n_gen=128"])
    assert two.exit_code == 0, two.output
    assert json.loads(two.output)["at"] == [{"n_prompt": 512, "n_gen": 0}, {"n_prompt": 0, "n_gen": 128}]
    one = json.loads(CliRunner().invoke(app, [*args, "--at", "n_prompt=512", "--at", "n_gen=0"]).output)
    assert one["at"] == {"n_prompt": 512, "n_gen": 0}
    product = CliRunner().invoke(app, [*args, "--at", "n_prompt=512", "--at", "n_prompt=0", "--at", "n_gen=0"])
    assert product.exit_code == 1 and "{'n_prompt': 0, 'n_gen': 0} selects no rows" in product.output
    bad = CliRunner().invoke(app, [*args, "--at", "n_prompt=512,0"])
    assert bad.exit_code == 1 and "one condition's keys joined by commas (--at n_prompt=512,n_gen=0)" in bad.output


@given(
    centre=st.floats(0.8, 1.25),
    half=st.floats(0.0, 0.2),
    tost_share=st.floats(0.5, 1.0),
    direction=st.sampled_from([-1, 0, 1]),
    claimed=st.none() | st.floats(0.7, 1.4),
    margin=st.none() | st.floats(0.005, 0.1),
)
def test_the_simulated_rule_agrees_with_the_rule_everywhere(
    centre: float, half: float, tost_share: float, direction: int, claimed: float | None, margin: float | None
) -> None:
    ci = (centre * (1 - half), centre * (1 + half))
    tost = (centre * (1 - half * tost_share), centre * (1 + half * tost_share))
    if margin is None:
        expected = verdicts.judge(ci, tost, direction, claimed if direction else None, 0.01, 0.04).verdict
    else:
        expected = verdicts.judge_equivalence(ci, tost, margin).verdict
    code = verdicts.judge_many(
        ci,
        tost,
        direction=direction,
        claimed_ratio=claimed if direction else None,
        min_effect=0.01,
        band=0.04,
        margin=margin,
    )
    assert verdicts.VERDICTS[int(code)] == expected


def test_an_estimate_off_every_bound_is_not_said_to_sit_on_one() -> None:
    """+0.4% with the smallest change worth calling at ±1.0%: no number of trials settles it, and
    the card said 'the estimate, +0.4%, sits on the bound +1.0%', 0.6 points away. It lies between
    no change and ±1.0%, where a narrower interval decides nothing; one truly on a bound says so,
    and one near a bound says how near, against the interval the most trials searched would give."""
    from generator.analysis.comparison import _unsettled
    from generator.analysis.power import MOST, Settling, comparison_settling
    from generator.analysis.records import Question

    q = Question(settings=Settings(), level=0.95, direction=1, claimed=None, claimed_ratio=None)

    def why(ratio: float, sd_log: float) -> str | None:
        found = ratios.Ratio(log_ratio=math.log(ratio), se=0.0024, df=8.0, sd_log=sd_log, source="trials", exact=None)
        return _unsettled(found, Settling(None, None, 0.0), q, 0.01)

    searched = comparison_settling(
        math.log(1.004), 0.0038, 5, 0.95, direction=1, claimed_ratio=None, min_effect=0.01, band=0.01, margin=None
    )
    assert searched.trials is None  # the search up to MOST finds no count
    assert why(1.004, 0.0038) == (
        "More trials will not settle this: the estimate, +0.4%, lies between no change and the smallest change "
        "worth calling (±1.0%), so more trials would narrow the interval to exclude no change (never within noise) "
        "while it stays inside ±1.0% (never a change worth calling)."
    )
    assert why(1.0100001, 0.0038) == (
        "More trials will not settle this: the estimate, +1.0%, sits on the bound +1.0% (the smallest change worth "
        "calling), so however many trials are added the interval keeps straddling it."
    )
    assert MOST == 100_000
    assert why(1.013, 0.5) == (
        "More trials will not settle this: the estimate, +1.3%, is 0.3 points from the bound +1.0% (the smallest "
        "change worth calling), and even at 100,000 trials per side the interval would reach ±0.44% around it, so "
        "it keeps straddling that bound."
    )
    assert why(1.5, 3.0) == (
        "More trials will not settle this: with the estimate (+50.0%) and the spread as measured, no number of "
        "trials up to 100,000 per side would decide it with 80% probability."
    )
