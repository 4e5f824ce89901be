"""Attribution grids: effects computed by hand agree with the fit, a simulation bounds how
often the verdict names the wrong factor, and a malformed grid is a located error."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from pathlib import Path

import pytest
import yaml
from scipy import stats as sps
from typer.testing import CliRunner

from generator.analysis.attribution import attribute_all, fit_grid
from generator.analysis.audit import audit
from generator.analysis.comparison import Settings
from generator.cli import app
from generator.format.models import Attribution
from helpers import MANIFEST, generate, publication, run_yaml, write_tree

METRICS = {"tokens_per_second": {"unit": "tok/s", "better": "higher"}}


def cell(run_id: str, setup: dict[str, object], values: list[float], benchmark: str = "grid") -> dict[str, str]:
    rows = "".join(f"{i},1,{v}\n" for i, v in enumerate(values, start=1))
    meta = run_yaml(run_id, setup=setup, metrics=METRICS, rates={}, benchmark=benchmark)
    return {
        f"runs/{run_id}/run.yaml": meta,
        f"runs/{run_id}/manifest.yaml": MANIFEST,
        f"runs/{run_id}/results.csv": "trial,concurrency,tokens_per_second\n" + rows,
    }


def report(attribution: dict[str, object], claims: list[dict[str, object]] | None = None) -> dict[str, str]:
    front = {"title": "Grid", "claims": claims or [], "attributions": [attribution]}
    return {"site_src/reports/grid.md": "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n# Grid\n"}


def grid_attribution(runs: list[str], factors: dict[str, str], **more: object) -> dict[str, object]:
    found: dict[str, object] = {"id": "the-grid", "statement": "Who earned it?", "metric": "tokens_per_second"}
    return found | {"at": {"concurrency": 1}, "factors": factors, "runs": runs} | more


def mean_log(values: list[float]) -> float:
    return statistics.fmean(math.log(v) for v in values)


CELLS_2X2 = {  # (a, b) -> trials
    ("a0", "b0"): [100.0, 102.0, 98.0, 101.0],
    ("a1", "b0"): [120.0, 118.0, 122.0, 119.0],
    ("a0", "b1"): [110.0, 108.0, 112.0, 109.0],
    ("a1", "b1"): [150.0, 148.0, 152.0, 149.0],
}


def test_a_2x2_grid_matches_effects_computed_by_hand(tmp_path: Path) -> None:
    runs = four_cells()
    attribution = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"}, credits="B")
    root = write_tree(tmp_path, publication(*runs.values(), extra=report(attribution)))
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
    grid = fit_grid(a, "r", cells, 0.02, 1, Settings())

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
        verdict = fit_grid(a, "r", cells, noise, 1, Settings(), settle=False).verdict
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
    root = write_tree(tmp_path, publication(*runs.values(), extra=report(attribution, [claim])))
    pages = generate(root)
    grid_page = pages["claims/the-grid/index.md"].decode()
    assert "misattributed" in grid_page
    assert "The gain is credited to A &#40;a0 → a1&#41;&#58; &#43;27.7&#37;" in grid_page
    assert "../b-did-it/index.md" in grid_page
    claim_page = pages["claims/b-did-it/index.md"].decode()
    assert "## Taken apart by a grid" in claim_page and "../the-grid/index.md" in claim_page
    assert "Attribution grids" in pages["claims/index.md"].decode()
    assert "## Attribution grids" in pages["methods.md"].decode()
    assert CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)]).exit_code == 0


def four_cells() -> dict[str, dict[str, str]]:
    return {f"2026-09-01-{a}-{b}": cell(f"2026-09-01-{a}-{b}", {"a": a, "b": b}, v) for (a, b), v in CELLS_2X2.items()}


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
    root = write_tree(tmp_path, publication(*runs.values(), extra=report(attribution)))
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
    root = write_tree(tmp_path, publication(*runs.values(), extra=report(attribution)))
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert result.exit_code == 1
    assert "no run for A=a0, B=b1; measure that cell and list it under runs" in result.output, result.output
