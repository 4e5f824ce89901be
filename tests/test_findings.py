"""A correction says what it found (`finding:`, `cause:`), the corrected claim's page shows it
before any table, the correction's runs are held against it, and a key nobody recorded is
never counted as a match."""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from builders import A, B, check, claim, report
from generator.analysis.audit import audit
from generator.analysis.claims import evaluate_publication, evaluation_key
from generator.analysis.comparison import Settings
from generator.render.glance import glance
from helpers import MANIFEST, RESULTS, generate, measured_run, publication, write_tree

EXAMPLE = Path(__file__).parents[1]
THIN = "schema: benchledger.manifest/1\nhost: {name: spark-01}\n"  # records no kernel path
LOWM = MANIFEST.replace("draft_head_gemm: stock", "draft_head_gemm: lowm")
C, D = "2026-09-05-full-vocab-lowm", "2026-09-05-shortlist-lowm"
SAME = RESULTS  # the shortlist as fast as the full vocabulary: the gain is gone
FASTER = RESULTS.replace("104.1", "125.1").replace("103.5", "124.2").replace("104.8", "125.8").replace("102.9", "123.5")


def _publication(tmp_path: Path, fix: dict[str, object], *, original: dict[str, object] | None = None) -> Path:
    """The original claim on two runs that record no kernel path (+20% measured), and its
    correction `fix` on two runs that both record the low-M kernel."""
    runs = []
    for run_id, vocab, results, manifest in (
        (A, 248320, RESULTS, THIN),
        (B, 16000, FASTER, THIN),
        (C, 248320, RESULTS, LOWM),
        (D, 16000, fix.pop("_candidate", SAME), LOWM),
    ):
        files = measured_run(run_id, setup={"draft_vocab": vocab}, warmup_trials=None)
        files[f"runs/{run_id}/results.csv"] = str(results)
        files[f"runs/{run_id}/manifest.yaml"] = manifest
        runs.append(files)
    first = claim(claimed="+20%", **(original or {}))
    correction = claim(id="shortlist-matched", corrects="shortlist-c8", baseline=C, candidate=D, **fix)
    extra = {"site_src/reports/seed.md": report([first, correction], title="The seed story")}
    return write_tree(tmp_path / "pub", publication(*runs, extra=extra))


def _page(root: Path, claim_id: str = "shortlist-c8") -> str:
    return _pages(root)[claim_id]


def _pages(root: Path) -> dict[str, str]:
    """Each claim page as a reader's text: character references decoded, tags kept."""
    found = generate(root).items()
    return {
        path.split("/")[1]: html.unescape(v.decode())
        for path, v in found
        if path.startswith("claims/") and path.endswith("/index.md")
    }


def test_the_example_claim_says_the_credit_was_wrong_before_any_table() -> None:
    page = _page(EXAMPLE)
    lead = (
        "<strong>Corrected (misattributed)</strong>: the credit belongs to the kernel path "
        "(kernels.draft_head_gemm), not to setup.draft_vocab"
    )
    assert page.index(lead) < page.index("## Ratio and interval") < page.index("<table")
    assert page.index(lead) < page.index("Original claim")  # above the card's first heading too
    assert "The correction publishes no runs, so this finding is its author's word, not checked here." in page
    assert "corrected (misattributed)" in page  # the flag says what the correction found


def test_the_example_lists_what_nobody_recorded_never_as_a_match() -> None:
    page = _page(EXAMPLE)
    unmatched = page[page.index("## Unmatched conditions in shortlist-c8") :]
    assert "the 2 keys the manifests and setups of" in unmatched
    assert "record match (host.system, model.name)" in unmatched
    assert "- warmup_trials: not recorded on either side" in unmatched
    assert "- kernels: not recorded on either side" in unmatched
    assert (
        "- kernels.draft_head_gemm: not recorded on either side; its correction names it as the cause "
        "(shortlist-c8-matched)"
    ) in unmatched


def test_a_correction_has_its_own_headline() -> None:
    pages = _pages(EXAMPLE)
    original, fix = pages["shortlist-c8"], pages["shortlist-c8-matched"]
    assert original != fix
    assert "\n# With an appropriate low-M kernel on both sides" in fix
    assert "\n# A 16,000-token draft shortlist raises" in original


def test_a_correction_whose_runs_bear_the_finding_out_says_so_on_both_cards(tmp_path: Path) -> None:
    root = _publication(tmp_path, {"finding": "misattributed", "cause": "kernels.draft_head_gemm"})
    page = _page(root)
    assert (
        "<strong>Corrected (misattributed)</strong>: the credit belongs to the kernel path (kernels.draft_head_gemm), "
        'not to setup.draft_vocab (<a href="../shortlist-matched/">the correction shortlist-matched</a>). '
        "Its runs bear this out: the claim, judged again on them, is overstated."
    ) in page
    assert "<strong>Finds misattributed</strong> of" in page
    assert (
        "- kernels.draft_head_gemm: not recorded here; its correction held kernels.draft_head_gemm equal on both "
        "sides (lowm, in shortlist-matched)"
    ) in page
    assert "finding not borne out" not in page


def test_a_finding_the_runs_contradict_is_named_on_both_pages(tmp_path: Path) -> None:
    root = _publication(tmp_path, {"finding": "contradicted"})
    pages = _pages(root)
    words = "Not borne out by its runs: it finds contradicted, but the claim (+20%) judged on its runs is overstated."
    for claim_id in ("shortlist-c8", "shortlist-matched"):
        page = pages[claim_id]
        assert words in page, claim_id
        assert '<span class="bl-flag bl-flag--problem">finding not borne out</span>' in page


def test_misattributed_needs_the_cause_held_equal_and_the_claim_not_supported(tmp_path: Path) -> None:
    held_apart = _publication(tmp_path / "a", {"finding": "misattributed", "cause": "host.cores"})
    assert "but its runs do not hold host.cores" not in _page(held_apart)  # both record 20 cores
    loose = _publication(tmp_path / "b", {"finding": "misattributed", "cause": "software.nonexistent"})
    assert (
        "it names software.nonexistent as the cause, but its runs do not hold software.nonexistent "
        "((not recorded) / (not recorded)) equal"
    ) in _page(loose)
    still = _publication(tmp_path / "c", {"finding": "misattributed", "cause": "host.cores", "_candidate": FASTER})
    assert "it finds the credit misattributed, but the claim (+20%) judged on its runs is supported" in _page(still)


def test_withdrawn_is_never_checked(tmp_path: Path) -> None:
    root = _publication(tmp_path, {"finding": "withdrawn", "_candidate": FASTER})
    page = _page(root)
    assert "<strong>Corrected (withdrawn)</strong>: the claim is withdrawn" in page
    assert "A withdrawal is its author's word; nothing is checked." in page
    assert "Not borne out" not in page


def test_a_finding_or_cause_out_of_place_is_refused_by_check(tmp_path: Path) -> None:
    root = _publication(tmp_path, {"finding": "misattributed"}, original={"finding": "overstated"})
    code, out = check(root)
    assert code == 1
    assert "site_src/reports/seed.md" in out
    assert "finding: only a correction says what it found; add corrects: <the claim's id>" in out
    other = _publication(tmp_path / "b", {"finding": "wrong idea"})
    code, out = check(other)
    assert code == 1 and "finding" in out and "misattributed" in out and "Traceback" not in out


def test_the_build_cache_key_follows_a_corrections_finding(tmp_path: Path) -> None:
    keys = []
    for finding in ("misattributed", "overstated"):
        root = _publication(tmp_path / finding, {"finding": finding})
        checked = audit(root, stale_is_error=False)
        (original,) = [c for _, c in checked.ledger.claims if c.id == "shortlist-c8"]
        fixes = {"shortlist-c8": ("shortlist-matched",)}
        keys.append(evaluation_key(original, checked.ledger, Settings(), states={}, fixes=fixes, reproduced={}))
    assert keys[0] != keys[1]


def test_the_front_page_counts_corrections_by_finding_and_names_what_holds() -> None:
    checked = audit(EXAMPLE, stale_is_error=False)
    evaluations, grids = evaluate_publication(checked.ledger, Settings())
    front = html.unescape(glance(checked.ledger, evaluations, checked.receipts, grids, ""))
    first = front.strip().split("\n\n")[0]
    assert first == (
        "**15 claims** from 5 reports over 18 runs. **9 judged on measured trials**: 4 hold, 2 contradicted, "
        "1 overstated, 1 credited to the wrong factor, 1 inconclusive. **6 without trial data**: figures "
        "published without trials, or prose; shown, never judged. **2 corrections**: 1 contradicted, "
        "1 misattributed."
    )
    (wrong,) = [line for line in front.splitlines() if line.startswith("- **Corrected (misattributed)**")]
    assert "[A 16,000-token draft shortlist raises speculative-decoding throughput" in wrong
    assert "The credit belongs to the kernel path (kernels.draft_head_gemm), not to setup.draft_vocab." in wrong
    assert "As reported: +19.0% (reported figures, no interval), n = trials not reported." in wrong
    holds = [line for line in front.splitlines() if line.startswith("- **Holds**")]
    assert len(holds) == 4
    assert all(", n = 5 / 5" in line for line in holds), holds
    (matched,) = [line for line in front.splitlines() if line.startswith("- **Corrected (contradicted)**")]
    assert "The data show the opposite of the claim. On its own runs: −38.5% [−42.3%, −34.5%], n = 5 / 5." in matched
    assert "Also 4 without trial data" in front


def test_the_methods_page_prints_the_finding_rule_from_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.analysis import findings
    from generator.render.methods_page import methods_page

    page = html.unescape(methods_page(Settings()))
    section = page[page.index("## Corrections") : page.index("## Attribution grids")]
    for finding, when in findings.RULE.items():
        assert f"- **{finding}**: {when}" in section
    assert "(`host`, `accelerators`, `software`, `engine`, `kernels`, `model`)" in page
    monkeypatch.setitem(findings.RULE, "withdrawn", "checked against the moon")
    assert "- **withdrawn**: checked against the moon" in html.unescape(methods_page(Settings()))


# --- seeded simulation: how often the finding check errs ----------------------------


def _simulated(tmp_path: Path, *, ratio: float, cv: float, draws: int, seed: int) -> dict[str, int]:
    """`draws` corrections whose runs (5 trials a side, log-normal at `cv`) differ by the true
    `ratio`, each saying the +20% claim was misattributed to the shortlist (the kernel held
    equal): how often the check bears the finding out, flags it, or cannot settle it."""
    from generator.analysis.findings import correction_of
    from generator.ledger.runs import parse_run

    root = _publication(tmp_path, {"finding": "misattributed", "cause": "kernels.draft_head_gemm"})
    ledger = audit(root, stale_is_error=False).ledger
    claims = {c.id: c for _, c in ledger.claims}
    folder = root / "runs" / D
    blobs = {name: (folder / name).read_bytes() for name in ("run.yaml", "manifest.yaml")}
    rng = np.random.default_rng(seed)
    sigma = float(np.sqrt(np.log(1 + cv**2)))
    counts = {"borne out": 0, "flagged": 0, "unsettled": 0}
    for _ in range(draws):
        b, c = 100 * rng.lognormal(0, sigma, 5), 100 * ratio * rng.lognormal(0, sigma, 5)
        rows = (
            [f"{i},8,{float(x)!r},1,1" for i, x in enumerate(b, 1)],
            [f"{i},8,{float(x)!r},1,1" for i, x in enumerate(c, 1)],
        )
        runs = dict(ledger.runs)
        for run_id, lines in ((C, rows[0]), (D, rows[1])):
            files = dict(
                blobs,
                **{
                    "results.csv": (
                        "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n" + "\n".join(lines) + "\n"
                    ).encode()
                },
            )
            files["run.yaml"] = (root / "runs" / run_id / "run.yaml").read_bytes()
            run, problems = parse_run(root / "runs" / run_id, files, [], run_id)
            assert run is not None, problems
            runs[run_id] = run
        found = correction_of(
            claims["shortlist-c8"], claims["shortlist-matched"], replace(ledger, runs=runs), Settings()
        )
        kind = "flagged" if found.disagreement else "borne out" if found.settled else "unsettled"
        counts[kind] += 1
    return counts


def test_a_true_misattribution_is_rarely_flagged_and_never_easier_to_bear_out_when_noisier(tmp_path: Path) -> None:
    quiet = _simulated(tmp_path / "q", ratio=1.0, cv=0.05, draws=400, seed=33)
    noisy = _simulated(tmp_path / "n", ratio=1.0, cv=0.30, draws=400, seed=34)
    assert quiet["flagged"] <= 12 and noisy["flagged"] <= 12  # 3%: the verdict's one-sided 2.5%
    assert quiet["borne out"] >= 388  # 97%: at CV 5% five trials settle "not supported"
    assert noisy["borne out"] <= quiet["borne out"]


def test_a_false_misattribution_is_flagged(tmp_path: Path) -> None:
    found = _simulated(tmp_path, ratio=1.2, cv=0.05, draws=400, seed=35)
    assert found["flagged"] >= 380  # 95%: the shortlist really earned +20%, the correction is wrong


def test_the_claims_export_carries_the_finding_and_its_check(tmp_path: Path) -> None:
    import json

    pages = generate(_publication(tmp_path, {"finding": "contradicted", "cause": ["a bad kernel", "kernels.x"]}))
    rows = {row["claim"]: row for row in json.loads(pages["ledger/claims.json"])}
    fix = rows["shortlist-matched"]
    assert (fix["finding"], fix["cause"], fix["finding_check"]) == (
        "contradicted",
        "a bad kernel; kernels.x",
        "not borne out",
    )
    assert (rows["shortlist-c8"]["finding"], rows["shortlist-c8"]["finding_check"]) == ("", "")
    example = {row["claim"]: row for row in json.loads(generate(EXAMPLE)["ledger/claims.json"])}
    assert example["shortlist-c8-matched"]["finding_check"] == "not checked"
    assert example["testbed-drafting-matched"]["finding_check"] == "borne out"


def test_review_names_a_new_corrections_finding_and_what_its_runs_say(tmp_path: Path) -> None:
    from generator.analysis.review import judge, review
    from generator.render.review_text import review_markdown

    before = _publication(tmp_path / "a", {"finding": "contradicted"})
    claims_only = (before / "site_src/reports/seed.md").read_text()
    first = claims_only[: claims_only.index("- id: shortlist-matched")]
    (before / "site_src/reports/seed.md").write_text(first.rstrip() + "\nlimits: []\n---\n\n# The seed story\n")
    after = _publication(tmp_path / "b", {"finding": "contradicted"})
    found = review(judge(before, "site_src", Settings()), judge(after, "site_src", Settings()))
    text = review_markdown(found, "main", "fix")
    assert (
        "- `shortlist-matched` corrects `shortlist-c8`: finds contradicted (it finds contradicted, but the claim "
        "&#40;&#43;20&#37;&#41; judged on its runs is overstated)"
    ) in text
    assert "1 new correction" in text and "(s)" not in text


def test_the_methods_page_states_the_out_of_range_rule_from_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.format import signed
    from generator.render.methods_page import methods_page

    assert 'above 1e300 in\n  magnitude, or nearer 0 than 1e-300 (and not 0), reads "out of range"' in html.unescape(
        methods_page(Settings())
    )
    monkeypatch.setattr(signed, "RANGE_HIGH", 1e200)
    assert "above 1e200 in" in methods_page(Settings())
