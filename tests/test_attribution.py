"""Attribution grids: effects computed by hand agree with the fit, a simulation bounds how
often the verdict names the wrong factor, and a malformed grid is a located error."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from typer.testing import CliRunner

from builders import CELLS_2X2, cell, four_cells, grid_attribution, grid_report
from generator.analysis.attribution import Orientation, attribute_all, fit_grid
from generator.analysis.audit import audit
from generator.analysis.comparison import Settings
from generator.analysis.grid_records import Grid
from generator.cli import app
from generator.format.front_matter import Attribution
from helpers import generate, publication, write_tree


def mean_log(values: list[float]) -> float:
    return statistics.fmean(math.log(v) for v in values)


def test_a_2x2_grid_matches_effects_computed_by_hand(tmp_path: Path) -> None:
    runs = four_cells()
    attribution = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"}, credits="B")
    root = write_tree(tmp_path, publication(*runs.values(), extra=grid_report(attribution)))
    checked = audit(root, stale_is_error=False)
    assert not checked.errors, checked.errors
    (grid,) = attribute_all(checked.ledger, Settings())
    m = {k: mean_log(v) for k, v in CELLS_2X2.items()}
    main_a = ((m["a1", "b0"] - m["a0", "b0"]) + (m["a1", "b1"] - m["a0", "b1"])) / 2
    main_b = ((m["a0", "b1"] - m["a0", "b0"]) + (m["a1", "b1"] - m["a1", "b0"])) / 2
    inter = (m["a1", "b1"] - m["a0", "b1"]) - (m["a1", "b0"] - m["a0", "b0"])
    residuals = [math.log(v) - m[k] for k, values in CELLS_2X2.items() for v in values]
    df = 16 - 4
    s = math.sqrt(sum(r * r for r in residuals) / df)
    t = sps.t.ppf(0.975, df)
    se_main, se_inter = s * math.sqrt(4 * 0.25 / 4), s * math.sqrt(4 * 1 / 4)  # contrast weights 1/2 and 1
    effect_a, effect_b, effect_ab = grid.effect("A"), grid.effect("B"), grid.effect("A", "B")
    assert effect_a is not None and effect_b is not None and effect_ab is not None
    assert grid.df == df
    assert effect_a.ratio == pytest.approx(math.exp(main_a), rel=1e-9)
    assert effect_b.ratio == pytest.approx(math.exp(main_b), rel=1e-9)
    assert effect_ab.ratio == pytest.approx(math.exp(inter), rel=1e-9)
    assert effect_a.ci == pytest.approx((math.exp(main_a - t * se_main), math.exp(main_a + t * se_main)), rel=1e-9)
    assert effect_ab.ci == pytest.approx((math.exp(inter - t * se_inter), math.exp(inter + t * se_inter)), rel=1e-9)
    # A (+27.7%) outweighs B (+17.0%), the credited factor: the gain was misattributed
    assert (round(effect_a.ratio, 4), round(effect_b.ratio, 4)) == (1.2767, 1.1701)
    assert grid.verdict == "misattributed" and grid.earned == "A"
    assert grid.levels == {"A": ("a0", "a1"), "B": ("b0", "b1")}


def test_a_2x2x2_grid_three_way_interaction_is_the_change_of_a_two_way_one() -> None:
    rng = random.Random(3)
    effects = {"A": 0.2, "B": 0.05, "C": -0.1, "AB": 0.08, "ABC": 0.12}
    cells = []
    means: dict[tuple[int, ...], float] = {}
    for levels in itertools.product((0, 1), repeat=3):
        x = [lv - 0.5 for lv in levels]
        log_mean = math.log(100) + effects["A"] * x[0] + effects["B"] * x[1] + effects["C"] * x[2]
        log_mean += effects["AB"] * x[0] * x[1] + effects["ABC"] * x[0] * x[1] * x[2]
        values = tuple(math.exp(log_mean + rng.gauss(0, 0.02)) for _ in range(4))
        means[levels] = mean_log(list(values))
        cells.append((f"run-{''.join(map(str, levels))}", tuple(f"l{lv}" for lv in levels), values))
    a = Attribution.model_validate(
        {
            "id": "g",
            "statement": "s",
            "metric": "m",
            "factors": {"A": "setup.a", "B": "setup.b", "C": "setup.c"},
            "runs": [c[0] for c in cells],
            "base": {"A": "l0", "B": "l0", "C": "l0"},
        }
    )
    grid = fit_grid(a, "r", cells, noise=0.02, gain=1, settings=Settings())

    def ab(c: int) -> float:
        return (means[1, 1, c] - means[0, 1, c]) - (means[1, 0, c] - means[0, 0, c])

    three = grid.effect("A", "B", "C")
    two = grid.effect("A", "B")
    assert three is not None and two is not None
    assert math.log(three.ratio) == pytest.approx(ab(1) - ab(0), abs=1e-12)
    assert math.log(two.ratio) == pytest.approx((ab(0) + ab(1)) / 2, abs=1e-12)
    assert [e.name for e in grid.effects] == ["A", "B", "C", "A × B", "A × C", "B × C", "A × B × C"]
    assert grid.df == 32 - 8


def simulate(credits: str, seed: int, runs: int = 300, effect_a: float = 0.10, cv: float = 0.03) -> dict[str, int]:
    """Grids where only factor A moves the metric (+10%), 5 trials per cell at CV 3%."""
    rng = random.Random(seed)
    a = Attribution.model_validate(
        {
            "id": "g",
            "statement": "s",
            "metric": "m",
            "factors": {"A": "setup.a", "B": "setup.b"},
            "runs": ["r00", "r10", "r01", "r11"],
            "credits": credits,
        }
    )
    counts: dict[str, int] = {}
    for _ in range(runs):
        cells = []
        for la, lb in ((0, 0), (1, 0), (0, 1), (1, 1)):
            mean = 100 * (1 + effect_a) ** la
            values = tuple(rng.gauss(mean, mean * cv) for _ in range(5))
            cells.append((f"r{la}{lb}", (f"a{la}", f"b{lb}"), values))
        noise = max(statistics.stdev(c[2]) / statistics.fmean(c[2]) for c in cells)
        verdict = fit_grid(a, "r", cells, noise=noise, gain=1, settings=Settings(), settle=False).verdict
        counts[verdict] = counts.get(verdict, 0) + 1
    return counts


def test_simulation_names_the_factor_that_earned_the_gain() -> None:
    """Only A has an effect. Crediting B: misattributed in at least 80% of grids (measured:
    298 of 300); crediting A: supported in at least 80% (measured: 300 of 300); an
    interaction that does not exist is rarely reported (measured: 2 of 600). At a +5% effect
    the same grids give 236 and 220 of 300 (not asserted: below the issue's size)."""
    wrong, right = simulate("B", seed=11), simulate("A", seed=12)
    assert wrong.get("misattributed", 0) >= 240, wrong
    assert right.get("supported", 0) >= 240, right
    assert wrong.get("interacts", 0) + right.get("interacts", 0) <= 15, (wrong, right)


def test_simulation_without_any_effect_credits_nobody() -> None:
    """No factor moves the metric: a credited factor is supported in at most 5% of grids
    (measured: 1 of 300) and misattributed in at most 5% (measured: 1 of 300); the rest are
    inconclusive (294) or, wrongly, interacts (4)."""
    counts = simulate("A", seed=13, effect_a=0.0)
    assert counts.get("supported", 0) <= 15, counts
    assert counts.get("misattributed", 0) <= 15, counts


def test_the_grid_page_links_the_claim_it_takes_apart(tmp_path: Path) -> None:
    runs = four_cells()
    claim = {
        "id": "b-did-it",
        "statement": "B raised throughput by a third.",
        "metric": "tokens_per_second",
        "baseline": "2026-09-01-a0-b0",
        "candidate": "2026-09-01-a1-b1",
        "at": {"concurrency": 1},
        "varies": ["setup.b"],
    }
    attribution = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"}, credits="B")
    root = write_tree(tmp_path, publication(*runs.values(), extra=grid_report(attribution, [claim])))
    pages = generate(root)
    grid_page = pages["claims/the-grid/index.md"].decode()
    assert "misattributed" in grid_page
    # the factor by its name, its levels in a plain sentence ("credited to A (a0 → a1)" before)
    sentence = (
        "The gain comes from A&#58; setting it to a1 instead of a0 changes tokens&#95;per&#95;second by &#43;27.7&#37;"
    )
    assert sentence in grid_page and "credited to A &#40;a0 → a1&#41;" not in grid_page
    assert "../b-did-it/index.md" in grid_page
    claim_page = pages["claims/b-did-it/index.md"].decode()
    assert "## Taken apart by a grid" in claim_page and "../the-grid/index.md" in claim_page
    assert "Attribution grids" in pages["claims/index.md"].decode()
    assert "## Attribution grids" in pages["methods.md"].decode()
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda runs, att: runs["2026-09-01-a1-b1"].update(
                cell("2026-09-01-a1-b1", {"a": "a1", "b": "b0"}, [1.0, 2.0])
            ),
            "'2026-09-01-a1-b0' and '2026-09-01-a1-b1' are the same cell (A=a1, B=b0); each combination once",
        ),
        (
            lambda runs, att: runs["2026-09-01-a1-b1"].update(
                cell("2026-09-01-a1-b1", {"a": "a2", "b": "b1"}, [1.0, 2.0])
            ),
            "setup.a has 3 levels across the grid's runs (a0, a1, a2); a factor has exactly two levels",
        ),
        (
            lambda runs, att: runs["2026-09-01-a1-b1"].update(
                cell("2026-09-01-a1-b1", {"a": "a1", "b": "b1"}, [1.0, 2.0], benchmark="other")
            ),
            "mixes benchmarks 'grid', 'other'; a grid compares runs of one benchmark",
        ),
        (
            lambda runs, att: att.update(runs=[*att["runs"][:3], "2026-09-01-a1-b2"]),  # type: ignore[index]
            "run '2026-09-01-a1-b2' does not exist; did you mean",
        ),
        (lambda runs, att: att.update(runs=att["runs"][:3]), "2 factors of two levels need 4 runs"),  # type: ignore[index]
        (lambda runs, att: att.update(credits="C"), "credits 'C' is not one of the factors: A, B"),
        (
            lambda runs, att: att.update(factors={"A": "setup.a", "B": "setup.b", "C": "setup.c", "D": "x", "E": "y"}),
            "a grid has 2 to 4 factors; this one has 5",
        ),
        (lambda runs, att: att.update(metric="latency"), "'latency' is neither a metric nor a rate of run"),
    ],
)
def test_a_malformed_grid_is_a_located_error(tmp_path: Path, change: object, message: str) -> None:
    runs = four_cells()
    attribution = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"})
    change(runs, attribution)  # type: ignore[operator]
    root = write_tree(tmp_path, publication(*runs.values(), extra=grid_report(attribution)))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1 and message in result.output, result.output
    assert "site_src/reports/grid.md" in result.output and "Traceback" not in result.output


def test_a_missing_cell_names_its_combination(tmp_path: Path) -> None:
    runs = four_cells()
    runs["2026-09-01-a1-b1"] = cell("2026-09-01-a1-b1", {"a": "a1", "b": "b0"}, [1.0, 2.0])
    runs["2026-09-01-a0-b1"] = cell("2026-09-01-a0-b1", {"a": "a0", "b": "b0"}, [1.0, 2.0])
    runs["2026-09-01-x"] = cell("2026-09-01-x", {"a": "a1", "b": "b1"}, [1.0, 2.0])
    listed = ["2026-09-01-a0-b0", "2026-09-01-a1-b0", "2026-09-01-x", "2026-09-01-a0-b1"]
    attribution = grid_attribution(listed, {"A": "setup.a", "B": "setup.b"})
    root = write_tree(tmp_path, publication(*runs.values(), extra=grid_report(attribution)))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert "no run for A=a0, B=b1; measure that cell and list it under runs" in result.output, result.output


# --- orientation from the claim, misattribution by size, trials per cell (issue 22) ------------

KERNEL, VOCAB = 0.18, 0.01  # the audit's grid: a kernel change +18%, a vocabulary shortlist +1%
SPARK = {  # cell -> run id, listed alphabetically the fast kernel comes first
    ("lowm", "full"): "2026-09-05-a-lowm-full",
    ("lowm", "short"): "2026-09-05-b-lowm-short",
    ("stock", "full"): "2026-09-05-c-stock-full",
    ("stock", "short"): "2026-09-05-d-stock-short",
}
SPARK_FACTORS = {"kernel": "setup.kernel", "vocab": "setup.vocab"}


def spark_values(
    rng: np.random.Generator, kernel: float = KERNEL, vocab: float = VOCAB, cv: float = 0.02, n: int = 6
) -> dict[tuple[str, str], tuple[float, ...]]:
    sigma = math.sqrt(math.log1p(cv**2))
    out = {}
    for k, v in SPARK:
        mu = math.log(100) + math.log1p(kernel) * (k == "lowm") + math.log1p(vocab) * (v == "short")
        out[k, v] = tuple(float(x) for x in np.round(rng.lognormal(mu, sigma, n), 3))
    return out


def spark_publication(tmp_path: Path, runs: list[str], claims: list[dict[str, object]], **more: object) -> Path:
    values = spark_values(np.random.default_rng(22))
    files = [cell(SPARK[k, v], {"kernel": k, "vocab": v}, list(values[k, v])) for k, v in SPARK]
    attribution = grid_attribution(runs, SPARK_FACTORS, credits="vocab") | more
    return write_tree(tmp_path, publication(*files, extra=grid_report(attribution, claims)))


SHORTLIST_CLAIM = {  # the claim the grid takes apart: stock kernel, full vocabulary -> low-M kernel, shortlist
    "id": "shortlist-20",
    "statement": "The shortlist raises throughput about 20%.",
    "metric": "tokens_per_second",
    "baseline": SPARK["stock", "full"],
    "candidate": SPARK["lowm", "short"],
    "at": {"concurrency": 1},
    "varies": ["setup.vocab"],
    "claimed": "+20%",
}


def judged(root: Path) -> Grid:
    checked = audit(root, stale_is_error=False)
    assert not checked.errors, checked.errors
    (grid,) = attribute_all(checked.ledger, Settings())
    return grid


def test_the_claim_orients_the_grid_whatever_the_order_of_its_runs(tmp_path: Path) -> None:
    """Listed alphabetically the low-M kernel comes first; the claim goes stock -> low-M and
    full -> shortlist, so those are the base levels, and the credit to the shortlist is
    misattributed to the kernel, in this order of runs: and in the reverse one."""
    listed = sorted(SPARK.values())
    grids = [
        judged(spark_publication(tmp_path / str(i), order, [SHORTLIST_CLAIM]))
        for i, order in enumerate((listed, listed[::-1]))
    ]
    for grid in grids:
        assert grid.levels == {"kernel": ("stock", "lowm"), "vocab": ("full", "short")}
        assert grid.oriented == {
            "kernel": "the baseline of claim 'shortlist-20'",
            "vocab": "the baseline of claim 'shortlist-20'",
        }
        assert (grid.verdict, grid.earned) == ("misattributed", "kernel")
        kernel, vocab = grid.effect("kernel"), grid.effect("vocab")
        assert kernel is not None and vocab is not None
        assert (round(kernel.ratio, 4), round(vocab.ratio, 4), round(grid.gain or 0, 4)) == (1.177, 1.0167, 1.1967)
        assert grid.reason == (
            "the publisher credits vocab, but the effect of vocab, +1.7% [-0.2%, +3.6%], cannot account for the "
            "gain: even its interval falls short of +9.4%, what it would give if the 2 factors that changed shared "
            "the gain of +19.7% equally. The effect of kernel is real and clearly larger, +17.7% [+15.5%, +20.0%]"
        )
        assert (grid.trials_needed, grid.unsettled) == (None, None)  # decided: 6 trials a cell are enough
    assert grids[0] == grids[1].__class__(**{**grids[1].__dict__, "attribution": grids[0].attribution})


def test_base_orients_a_grid_no_claim_takes_apart(tmp_path: Path) -> None:
    """Without a claim, `base:` sets the base level; a factor neither orients reads as a gain.
    From the shortlist back to the full vocabulary the credited factor loses: misattributed."""
    grid = judged(spark_publication(tmp_path / "a", list(SPARK.values()), [], base={"vocab": "short"}))
    assert grid.levels == {"kernel": ("stock", "lowm"), "vocab": ("short", "full")}
    assert grid.oriented["vocab"] == "base: in the attribution"
    assert grid.oriented["kernel"].startswith("nothing: it reads as a gain")
    vocab = grid.effect("vocab")
    assert vocab is not None and round(vocab.ratio, 4) == 0.9835  # short -> full: the +1.7% read backwards
    assert (grid.verdict, grid.earned, round(grid.gain or 0, 4)) == ("misattributed", "kernel", 1.1576)


@pytest.mark.parametrize(
    ("claims", "more", "message"),
    [
        (
            [
                SHORTLIST_CLAIM,
                SHORTLIST_CLAIM
                | {"id": "back", "baseline": SPARK["lowm", "full"], "candidate": SPARK["stock", "short"]},
            ],
            {},
            "claims 'shortlist-20' and 'back' take this grid apart from opposite ends of kernel (stock and lowm); "
            "each factor's base level comes from the claims' baselines, so they must agree",
        ),
        (
            [SHORTLIST_CLAIM],
            {"base": {"kernel": "lowm"}},
            "base.kernel is lowm but the baseline of claim 'shortlist-20' has kernel=stock; the claim decides the "
            "orientation: remove base.kernel or set it to stock",
        ),
        (
            [],
            {"base": {"kernel": "fast"}},
            "'fast' is not a level of kernel (setup.kernel); give one of its levels: lowm, stock",
        ),
        ([], {"base": {"threads": 2}}, "base names threads, not a factor; name one of the factors: kernel, vocab"),
    ],
)
def test_an_orientation_that_cannot_hold_is_a_located_error(
    tmp_path: Path, claims: list[dict[str, object]], more: dict[str, object], message: str
) -> None:
    root = spark_publication(tmp_path, list(SPARK.values()), claims, **more)
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1 and message in result.output, result.output
    assert "site_src/reports/grid.md:" in result.output


SPARK_ATTRIBUTION = {"id": "g", "statement": "s", "metric": "m", "factors": SPARK_FACTORS, "runs": ["a", "b", "c", "d"]}
FROM_THE_CLAIM = Orientation(
    base={"kernel": "stock", "vocab": "full"}, why={}, path=(("stock", "full"), ("lowm", "short"))
)


@settings(max_examples=20, deadline=None)
@given(
    order=st.permutations(range(4)),
    names=st.permutations(["w", "x", "y", "z"]),
    kernel=st.floats(-0.3, 0.3),
    vocab=st.floats(-0.3, 0.3),
    seed=st.integers(0, 2**16),
    credits=st.sampled_from(["kernel", "vocab", None]),
    claimed=st.booleans(),
)
def test_the_order_of_runs_never_changes_a_verdict(
    order: list[int], names: list[str], kernel: float, vocab: float, seed: int, credits: str | None, claimed: bool
) -> None:
    """Permute the cells and rename the runs (so a different run sorts first): the same
    levels, effects, verdict, credit and trials needed."""
    values = spark_values(np.random.default_rng(seed), kernel, vocab, cv=0.05, n=3)
    a = Attribution.model_validate(SPARK_ATTRIBUTION | {"credits": credits})
    oriented = FROM_THE_CLAIM if claimed else None
    listed = [(f"run-{k}-{v}", (k, v), values[k, v]) for k, v in SPARK]
    reference = fit_grid(a, "r", listed, noise=0.05, gain=1, settings=Settings(), oriented=oriented)
    shuffled = [(names[i], listed[i][1], listed[i][2]) for i in order]
    grid = fit_grid(a, "r", shuffled, noise=0.05, gain=1, settings=Settings(), oriented=oriented)
    assert grid.levels == reference.levels
    assert [(e.factors, e.verdict) for e in grid.effects] == [(e.factors, e.verdict) for e in reference.effects]
    # the same effects but for the order of summation (rounding to 12 digits could still split a tie)
    assert [e.ratio for e in grid.effects] == pytest.approx([e.ratio for e in reference.effects], rel=1e-9)
    assert (grid.verdict, grid.earned, grid.trials_needed, grid.unsettled) == (
        reference.verdict,
        reference.earned,
        reference.trials_needed,
        reference.unsettled,
    )


def spark_simulation(
    credits: str, kernel: float, vocab: float, seed: int, oriented: Orientation | None
) -> dict[str, int]:
    """500 grids (CV 2%, 6 trials a cell), runs listed alphabetically: the fast kernel first."""
    rng = np.random.default_rng(seed)
    a = Attribution.model_validate(SPARK_ATTRIBUTION | {"credits": credits})
    counts: dict[str, int] = {}
    for _ in range(500):
        values = spark_values(rng, kernel, vocab)
        cells = [(SPARK[k, v], (k, v), values[k, v]) for k, v in SPARK]
        verdict = fit_grid(
            a, "r", cells, noise=0.02, gain=1, settings=Settings(), oriented=oriented, settle=False
        ).verdict
        counts[verdict] = counts.get(verdict, 0) + 1
    return counts


@pytest.mark.parametrize("oriented", [FROM_THE_CLAIM, None], ids=["from the claim", "by the data"])
def test_simulation_misattribution_by_size(oriented: Orientation | None) -> None:
    """+18% for the kernel, +1% for the shortlist: the credit to the shortlist is misattributed in
    500 of 500 grids, the credit to the kernel supported in 500 of 500 (Wilson lower ends above
    99%); with two equal effects (+9% each) the credit to either is misattributed in 2 of 500
    (Wilson upper end 1.5%)."""
    wrong = spark_simulation("vocab", KERNEL, VOCAB, 101, oriented)
    right = spark_simulation("kernel", KERNEL, VOCAB, 102, oriented)
    equal = spark_simulation("vocab", 0.09, 0.09, 103, oriented)
    assert (wrong, right) == ({"misattributed": 500}, {"supported": 500})
    assert wilson(wrong["misattributed"], 500)[0] >= 0.80
    assert wilson(right["supported"], 500)[0] >= 0.80
    assert equal == {"supported": 498, "misattributed": 2}
    assert wilson(equal["misattributed"], 500)[1] <= 0.05


@pytest.mark.parametrize(
    ("kernel", "credits", "needed", "decided"), [(0.08, "vocab", 16, 431), (0.05, "kernel", 14, 415)]
)
def test_trials_per_cell_settle_a_grid(kernel: float, credits: str, needed: int, decided: int) -> None:
    """3 trials a cell measured exactly at the truth (kernel +8% or +5%, shortlist +1%, CV 5%):
    inconclusive; at the recommended trials per cell, 500 fresh grids reach a decided verdict
    at least 70% of the time (the Wilson interval's lower end)."""
    a = Attribution.model_validate(SPARK_ATTRIBUTION | {"credits": credits})
    sigma = math.sqrt(math.log1p(0.05**2))
    pilot = []
    for k, v in SPARK:
        mu = math.log(100) + math.log1p(kernel) * (k == "lowm") + math.log1p(VOCAB) * (v == "short")
        pilot.append((SPARK[k, v], (k, v), tuple(math.exp(mu + sigma * d) for d in (-1, 0, 1))))
    grid = fit_grid(a, "r", pilot, noise=0.05, gain=1, settings=Settings(), oriented=FROM_THE_CLAIM)
    assert (grid.verdict, grid.trials_needed) == ("inconclusive", needed)
    rng = np.random.default_rng(55)
    found = 0
    for _ in range(500):
        fresh = spark_values(rng, kernel, VOCAB, cv=0.05, n=needed)
        cells = [(SPARK[k, v], (k, v), fresh[k, v]) for k, v in SPARK]
        verdict = fit_grid(
            a, "r", cells, noise=0.05, gain=1, settings=Settings(), oriented=FROM_THE_CLAIM, settle=False
        ).verdict
        found += verdict != "inconclusive"
    assert found == decided
    assert wilson(found, 500)[0] >= 0.70


def wilson(count: int, total: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(count, total, alpha=0.05, method="wilson")
    return float(low), float(high)


def test_a_credited_effect_on_the_bound_will_not_be_settled_by_more_trials() -> None:
    a = Attribution.model_validate(SPARK_ATTRIBUTION | {"credits": "vocab"})
    sigma = math.sqrt(math.log1p(0.05**2))
    pilot = []
    for k, v in SPARK:  # the shortlist exactly +1%, the kernel nothing: measured exactly at the truth
        mu = math.log(100) + math.log1p(VOCAB) * (v == "short")
        pilot.append((SPARK[k, v], (k, v), tuple(math.exp(mu + sigma * d) for d in (-1, 0, 1))))
    grid = fit_grid(a, "r", pilot, noise=0.05, gain=1, settings=Settings(), oriented=FROM_THE_CLAIM)
    assert (grid.verdict, grid.trials_needed) == ("inconclusive", None)
    assert grid.unsettled == (
        "more trials per cell will not settle it: no number of trials per cell up to 100,000 would decide it with "
        "80% probability; the estimate of the credited effect of vocab, +1.0%, sits on the bound +1.0% (the "
        "smallest change worth calling), and no other effect is clearly larger"
    )


def test_a_credited_effect_off_the_bound_is_not_said_to_sit_on_it() -> None:
    """The shortlist exactly +0.4%: more trials narrow the interval away from no change but it
    stays inside +-1%, so nothing settles it; the sentence says how far the estimate is from the
    bound instead of claiming it sits there (it said 'sits on the bound +1.0%')."""
    a = Attribution.model_validate(SPARK_ATTRIBUTION | {"credits": "vocab"})
    sigma = math.sqrt(math.log1p(0.05**2))
    pilot = []
    for k, v in SPARK:
        mu = math.log(100) + math.log1p(0.004) * (v == "short")
        pilot.append((SPARK[k, v], (k, v), tuple(math.exp(mu + sigma * d) for d in (-1, 0, 1))))
    grid = fit_grid(a, "r", pilot, noise=0.05, gain=1, settings=Settings(), oriented=FROM_THE_CLAIM)
    assert (grid.verdict, grid.trials_needed) == ("inconclusive", None)
    assert grid.unsettled == (
        "more trials per cell will not settle it: no number of trials per cell up to 100,000 would decide it with "
        "80% probability; the estimate of the credited effect of vocab, +0.4%, is 0.6 points from the bound +1.0% "
        "(the smallest change worth calling), and no other effect is clearly larger"
    )
