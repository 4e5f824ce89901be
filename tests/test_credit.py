"""A claim a grid takes apart wears the grid's verdict on its credit wherever its own verdict
shows: its card, the claims ledger, the front page's counts, claims.json. The example
publication's grid-threads-credit is the first seed's failure re-enacted: a real gain
credited to the wrong change."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml

from generator.analysis.audit import audit
from generator.analysis.claims import evaluate_publication
from generator.analysis.comparison import Settings
from generator.render.glance import glance
from helpers import MANIFEST, generate, publication, run_yaml, write_tree

EXAMPLE = Path(__file__).parents[1]
SUPPORTED = '<span class="bl-verdict bl-verdict--supported">supported</span>'
MISATTRIBUTED = '<span class="bl-verdict bl-verdict--misattributed">misattributed</span>'


def _example() -> tuple[dict[str, bytes], str]:
    checked = audit(EXAMPLE, stale_is_error=False)
    evaluations, grids = evaluate_publication(checked.ledger, Settings())
    front = glance(checked.ledger, evaluations, checked.receipts, grids, "")
    return generate(EXAMPLE), front


def _row(page: str, claim_id: str) -> str:
    (row,) = [line for line in page.splitlines() if f'href="{claim_id}/"' in line]
    return row


def test_the_misattributed_credit_shows_on_the_card_the_ledger_and_the_front_page() -> None:
    pages, front = _example()
    card = pages["claims/grid-threads-credit/index.md"].decode()
    assert f'data-bl-headline="misattributed">{SUPPORTED} · {MISATTRIBUTED}</span>' in card
    assert "The grid credits the gain to draft, not to threads (the grid " in card
    grid = "Which of the two changes earned the gain at concurrency 4, the second thread or turning the draft off&#63;"
    assert f'<a href="../grid-who-earned-it/">{grid}</a>' in card  # the grid's title links it, not its id
    assert "grid grid&#45;who&#45;earned&#45;it" not in card
    assert '<li class="bl-card bl-card--misattributed">' in card  # the card is coloured by the grid

    ledger = pages["claims/index.md"].decode()
    row = _row(ledger, "grid-threads-credit")
    assert f"{SUPPORTED} · {MISATTRIBUTED}" in row
    assert f"credit misattributed by the grid “{grid}”" in row and "by grid grid" not in row
    assert 'data-bl-verdict="misattributed">misattributed (1)</button>' in ledger
    # a supported claim without a grid keeps its badge alone
    assert f'data-bl-headline="supported">{SUPPORTED}</span>' in _row(ledger, "testbed-throughput-nmax2-vs-nmax12")

    first = front.strip().splitlines()[0]
    assert first.startswith(
        "**15 claims** from 5 reports over 18 runs. **9 judged on measured trials**: 4 hold, 2 contradicted, "
        "1 overstated, 1 credited to the wrong factor, 1 inconclusive."
    )
    assert "claims/index.md#verdict=misattributed" in front

    (row,) = [r for r in json.loads(pages["ledger/claims.json"]) if r["claim"] == "grid-threads-credit"]
    assert (row["verdict"], row["credit_verdict"], row["credit_grid"]) == (
        "supported",
        "misattributed",
        "grid-who-earned-it",
    )


def test_the_front_page_counts_each_run_once() -> None:
    _, front = _example()
    (line,) = [p for p in front.split("\n\n") if p.startswith("**Runs**")]
    counts = [int(n) for n in re.findall(r"(\d+) [a-z]", line.split("(all runs)")[0])]
    assert sum(counts) == 18  # the runs index lists 18 runs
    assert line.startswith("**Runs**: 1 rerun unsettled, 17 unverified")  # a tool's rerun verifies nothing


METRICS = {"tokens_per_second": {"unit": "tok/s", "better": "higher"}}
CELLS = {  # kernel +18%, shortlist +1%: the kernel earned the gain
    ("stock", "full"): [100.0, 101.0, 99.0, 100.5, 99.5, 100.2],
    ("lowm", "full"): [118.0, 119.0, 117.0, 118.5, 117.5, 118.2],
    ("stock", "short"): [101.0, 102.0, 100.0, 101.5, 100.5, 101.2],
    ("lowm", "short"): [119.2, 120.2, 118.2, 119.7, 118.7, 119.4],
}


def _grid_publication(tmp_path: Path, varies: str) -> dict[str, bytes]:
    files: dict[str, str] = {}
    ids = {}
    for (kernel, vocab), values in CELLS.items():
        run_id = ids[kernel, vocab] = f"2026-09-01-{kernel}-{vocab}"
        rows = "".join(f"{i},1,{v}\n" for i, v in enumerate(values, start=1))
        setup = {"kernel": kernel, "vocab": vocab}
        files[f"runs/{run_id}/run.yaml"] = run_yaml(run_id, setup=setup, metrics=METRICS, rates={}, benchmark="g")
        files[f"runs/{run_id}/manifest.yaml"] = MANIFEST
        files[f"runs/{run_id}/results.csv"] = "trial,concurrency,tokens_per_second\n" + rows
    claim = {
        "id": "the-claim",
        "statement": "The change raises throughput.",
        "metric": "tokens_per_second",
        "baseline": ids["stock", "full"],
        "candidate": ids["lowm", "short"],
        "at": {"concurrency": 1},
        "varies": [varies],
    }
    grid = {
        "id": "the-grid",
        "statement": "Who earned it?",
        "metric": "tokens_per_second",
        "at": {"concurrency": 1},
        "factors": {"kernel": "setup.kernel", "vocab": "setup.vocab"},
        "runs": sorted(ids.values()),  # the fast kernel first: the claim orients the grid, not the order
    }
    front = {"title": "Grid", "claims": [claim], "attributions": [grid]}
    report = {"site_src/reports/grid.md": "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n# Grid\n"}
    return generate(write_tree(tmp_path, publication(extra=files | report)))


def test_a_credit_the_grid_confirms_keeps_supported_alone(tmp_path: Path) -> None:
    pages = _grid_publication(tmp_path, "setup.kernel")
    card = pages["claims/the-claim/index.md"].decode()
    assert f'data-bl-headline="supported">{SUPPORTED}</span>' in card
    assert "The grid also credits the gain to kernel" in html.unescape(card)
    assert MISATTRIBUTED not in card


def test_a_credit_to_the_other_factor_is_misattributed(tmp_path: Path) -> None:
    pages = _grid_publication(tmp_path, "setup.vocab")
    card = pages["claims/the-claim/index.md"].decode()
    assert f"{SUPPORTED} · {MISATTRIBUTED}" in card
    assert "The grid credits the gain to kernel, not to vocab" in html.unescape(card)


def test_an_inconclusive_card_says_how_many_trials_settle_it_and_how() -> None:
    pages, _ = _example()
    card = pages["claims/testbed-throughput-nmax3-vs-nmax2/index.md"].decode()
    assert "<dt>Trials needed per side</dt><dd>14 to settle the verdict, most likely as within noise</dd>" in card


def _one_claim(tmp_path: Path, claim: dict[str, object]) -> str:
    """The card of `claim` added to the example's who-earned-it report, in a copy."""
    import shutil

    root = tmp_path / "pub"
    for part in ("runs", "site_src", "mkdocs.yml"):
        source = EXAMPLE / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / part)
    report = root / "site_src/reports/who-earned-it.md"
    front, _, body = report.read_text().partition("\n---\n")
    meta = yaml.safe_load(front.removeprefix("---\n"))
    meta["claims"].append(claim)
    report.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body)
    return generate(root)[f"claims/{claim['id']}/index.md"].decode()


GRID_CLAIM = {"statement": "Two threads are faster.", "metric": "tokens_per_second", "varies": ["engine.threads"]}


def test_a_claim_whose_runs_differ_only_in_the_credited_factor_is_not_overruled(tmp_path: Path) -> None:
    card = _one_claim(
        tmp_path,
        GRID_CLAIM
        | {"id": "clean", "baseline": "2026-11-30-grid-nmax2-1t", "candidate": "2026-11-30-grid-nmax2-2t"}
        | {"at": {"concurrency": 4}},
    )
    assert f'data-bl-headline="supported">{SUPPORTED}</span>' in card  # its own verdict stands alone
    assert f"{SUPPORTED} · {MISATTRIBUTED}" not in card and "credit misattributed" not in card


def test_conditions_given_per_side_do_not_escape_the_grid(tmp_path: Path) -> None:
    card = _one_claim(
        tmp_path,
        GRID_CLAIM
        | {"id": "per-side", "baseline": {"run": "2026-11-30-grid-nmax2-1t", "at": {"concurrency": 4}}}
        | {"candidate": {"run": "2026-11-30-grid-nodraft-2t", "at": {"concurrency": 4}}},
    )
    assert f"{SUPPORTED} · {MISATTRIBUTED}" in card


def test_a_claim_is_taken_apart_only_by_grids_at_its_own_condition() -> None:
    pages, _ = _example()
    card = pages["claims/grid-threads-credit/index.md"].decode()
    assert "../grid-who-earned-it/" in card and "grid-who-earned-it-c1" not in card  # c1 is judged at concurrency 1


def test_a_reported_acceptance_in_percent_reads_in_points_first() -> None:
    pages, _ = _example()
    card = pages["claims/play1-acceptance-inversion/index.md"].decode()
    said = "&#43;49.5 pp, 22.7&#37; → 72.2&#37; &#40;ratio 3.181x&#59; reported figures, no interval&#41;"
    assert f"<dt>Reported</dt><dd>{said}</dd>" in card
    assert "218.1" not in card  # a relative change beside percentages reads as points


def test_each_condition_names_its_own_band_of_no_difference() -> None:
    pages, _ = _example()
    card = pages["claims/testbed-throughput-nmax2-vs-nmax12-every-load/index.md"].decode()
    assert (
        "<dt>Within&#45;noise band</dt><dd>concurrency&#61;1&#58; ±4.5&#37;&#59; concurrency&#61;4&#58; ±4.4&#37;</dd>"
        in card
    )


def test_a_comparison_without_spread_says_so_instead_of_a_point_interval() -> None:
    pages, _ = _example()
    card = pages["claims/testbed-acceptance-nmax2-vs-nmax12/index.md"].decode()
    assert (
        "Supported&#58; every trial of each side gave the same rate, so for this prompt set the difference is "
        "exactly &#43;39.0 pp, 28.2&#37; → 67.2&#37; &#40;ratio 2.386x&#59; another prompt set may differ&#41;" in card
    )
    assert "from &#43;138.6&#37; to &#43;138.6&#37;" not in card and "138.6" not in card  # one unit: points, then ratio
