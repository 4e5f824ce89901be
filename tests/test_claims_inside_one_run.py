"""A claim inside one run (`{run: ID, at: {...}}` sides) and `benchledger compare RUN --at
--versus`: what was compared with what, on every page and in every file, and the same verdict
from the command line as from the claim (issue 35, items 4, 8 and 9). The runs are imported
from the real exports under tests/fixtures (SOURCES.md there says where each comes from)."""

from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import generate, import_into

FIXTURES = Path(__file__).parent / "fixtures"
GZIP = "2026-11-30-gzip"  # hyperfine -P size 100 200: a parameter scan, `size` its condition
SORT = "2026-11-30-sort"  # pytest-benchmark, parametrized on `size`
FAIL = "2026-11-30-fail"  # hyperfine, two commands: `command` its condition
SLOW = 'sh -c "exit $(( $(date +%N) % 2 ))"'
FAST = 'sh -c "exit 0"'


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def publication(tmp_path: Path, *imports: tuple[str, str, str], claims: list[dict[str, Any]]) -> Path:
    """The runs imported (tool, fixture, id) and one report holding `claims`."""
    root = tmp_path / "pub"
    for tool, fixture, run_id in imports:
        code, out, root = import_into(tmp_path, tool, str(FIXTURES / fixture), "--id", run_id, "--date", "2026-11-30")
        assert code == 0, out
    front = {"title": "Inside one run", "date": "2026-11-30", "claims": claims}
    (root / "site_src" / "reports").mkdir(parents=True, exist_ok=True)
    (root / "site_src" / "reports" / "inside.md").write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n")
    return root


def inside(claim_id: str, run_id: str, metric: str, key: str, baseline: str, candidate: str) -> dict[str, Any]:
    return {
        "id": claim_id,
        "statement": f"{key}={candidate} takes less time than {key}={baseline}.",
        "metric": metric,
        "baseline": {"run": run_id, "at": {key: baseline}},
        "candidate": {"run": run_id, "at": {key: candidate}},
    }


def page(pages: dict[str, bytes], claim_id: str) -> str:
    return html.unescape(pages[f"claims/{claim_id}/index.md"].decode())


GZIP_CLAIM = inside("smaller-input-faster", GZIP, "seconds", "size", "200", "100")


def test_a_claim_inside_one_run_names_both_sides_conditions_everywhere(tmp_path: Path) -> None:
    root = publication(tmp_path, ("hyperfine", "hyperfine/gzip-sizes.json", GZIP), claims=[GZIP_CLAIM])
    pages = generate(root)
    (row,) = json.loads(pages["ledger/claims.json"])
    assert (row["baseline"], row["baseline_condition"]) == (GZIP, "size=200")
    assert (row["candidate"], row["candidate_condition"]) == (GZIP, "size=100")
    assert row["condition"] == "size=200 → size=100"
    text = page(pages, "smaller-input-faster")
    assert "<dt>Baseline</dt><dd>2026-11-30-gzip at size=200: mean 0.001783 [0.001709, 0.001861] s, n = 5</dd>" in text
    assert "<dt>Candidate</dt><dd>2026-11-30-gzip at size=100: mean 0.001372 [0.001307, 0.00144] s, n = 5</dd>" in text
    assert '<td data-label="Claim">smaller-input-faster</td><td data-label="Condition">size=200 → size=100</td>' in text
    assert text.count(f'<a href="../../runs/{GZIP}/">{GZIP}</a>') == 1  # one run, linked once
    assert (
        "The claim compares size=200 (baseline) with size=100 (candidate).</figcaption>" in text
        and "baseline: 2026-11-30-gzip" not in text  # the sweep draws the one run once
    )
    assert '<td data-label="Condition">size=200</td><td data-label="Side">baseline</td>' in text  # trials table
    assert '<td data-label="Condition">size=100</td><td data-label="Side">candidate</td>' in text
    assert (
        "Both sides are run 2026-11-30-gzip, so nothing differs but the condition (size=200 → size=100); "
        "the run records no manifest or setup key, so its build, kernel, flags or hardware are not shown."
    ) in text
    assert "not recorded on either side" not in text  # one run: no side can differ from the other
    trials = json.loads(pages["claims/smaller-input-faster/charts/trials-smaller-input-faster.json"])
    assert {r["side"] for r in trials["datasets"][next(iter(trials["datasets"]))]} == {
        "baseline: 2026-11-30-gzip at size=200",
        "candidate: 2026-11-30-gzip at size=100",
    }
    (forest,) = json.loads(pages["claims/smaller-input-faster/charts/forest.json"])["datasets"]["table"]
    assert forest["label"].split("\n")[:3] == [
        "size=100 takes less time",
        "than size=200",
        "at size=200 → size=100",
    ]
    out = tmp_path / "export"
    code, said = cli("export", "--repo", str(root), "--out", str(out))
    assert code == 0, said
    (exported,) = csv.DictReader(io.StringIO((out / "claims.csv").read_text()))
    assert [exported[k] for k in ("condition", "baseline_condition", "candidate_condition")] == [
        "size=200 → size=100",
        "size=200",
        "size=100",
    ]


CASES = [  # (tool, fixture, run id, metric, condition, baseline's value, candidate's value)
    ("hyperfine", "hyperfine/gzip-sizes.json", GZIP, "seconds", "size", "200", "100"),
    ("pytest-benchmark", "pytest-benchmark/sort-rounds.json", SORT, "seconds", "size", "10000", "1000"),
    ("hyperfine", "hyperfine/two-commands-failing.json", FAIL, "seconds", "command", SLOW, FAST),
]


@pytest.mark.parametrize(("tool", "fixture", "run_id", "metric", "key", "baseline", "candidate"), CASES)
def test_compare_versus_gives_the_verdict_of_the_claim(
    tmp_path: Path, tool: str, fixture: str, run_id: str, metric: str, key: str, baseline: str, candidate: str
) -> None:
    claim = inside("c", run_id, metric, key, baseline, candidate)
    root = publication(tmp_path, (tool, fixture, run_id), claims=[claim])
    (row,) = json.loads(generate(root)["ledger/claims.json"])
    args = ["compare", run_id, "--metric", metric, "--at", f"{key}={baseline}", "--versus", f"{key}={candidate}"]
    code, out = cli(*args, "--repo", str(root), "--json")
    assert code == 0, out
    found = json.loads(out)
    assert (found["baseline"], found["candidate"]) == (run_id, run_id)
    assert (found["baseline_condition"], found["candidate_condition"]) == (f"{key}={baseline}", f"{key}={candidate}")
    for k in ("verdict", "ratio", "ci_low", "ci_high", "n_baseline", "n_candidate"):
        assert found[k] == row[k], k
    code, out = cli(*args, "--repo", str(root))
    assert code == 0 and f"verdict: {row['verdict']}\n" in out, out


def test_compare_versus_keeps_the_other_keys_shared_and_the_two_run_form(tmp_path: Path) -> None:
    root = publication(tmp_path, ("hyperfine", "hyperfine/gzip-sizes.json", GZIP), claims=[GZIP_CLAIM])
    code, out = cli(
        "compare", GZIP, "--metric", "seconds", "--at", "size=200", "--versus", "size=100", "--repo", str(root)
    )
    assert code == 0, out
    assert "seconds at size=200 → size=100" in out and "verdict: supported\n" in out
    code, out = cli(
        "compare", GZIP, GZIP, "--metric", "seconds", "--at", "size=200", "--versus", "size=100", "--repo", str(root)
    )
    assert code == 0 and "verdict: supported\n" in out, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [GZIP, GZIP],
            f"Error: command line: '{GZIP}' is compared with itself; to compare two of its conditions write "
            f"compare {GZIP} --metric M --at KEY=A --versus KEY=B\n",
        ),
        (
            [GZIP],
            f"Error: give a candidate run, or compare two conditions of '{GZIP}': "
            f"compare {GZIP} --metric M --at KEY=A --versus KEY=B\n",
        ),
        (
            [GZIP, "--at", "size=200", "--versus", "size=200"],
            "Error: --versus size=200 is the baseline's own condition; give the candidate another value\n",
        ),
        (
            [GZIP, "--versus", "size=100"],
            "Error: --versus size=100: --at gives no baseline size; give one (--at size=A --versus size=B)\n",
        ),
        (
            [GZIP, "--at", "size=200", "--versus", "size=300"],
            f"Error: command line: --versus: {{'size': 300}} selects no rows of run '{GZIP}'; "
            "values that exist: size: 100, 200\n",
        ),
        (
            [GZIP, "--at", "all", "--versus", "size=100"],
            "Error: --at all cannot be combined with --versus: give the baseline's condition with --at (--at KEY=A)\n",
        ),
        (
            [GZIP, "--at", "size=200", "--versus", "size=100", "--varies", "size"],
            f"Error: command line: --varies: size is a condition of run '{GZIP}' (a column of results.csv); "
            "`varies` lists manifest and setup keys: remove it, and choose each side's size with --at and --versus\n",
        ),
    ],
)
def test_compare_refusals_say_the_command_line_that_works(tmp_path: Path, args: list[str], message: str) -> None:
    root = publication(tmp_path, ("hyperfine", "hyperfine/gzip-sizes.json", GZIP), claims=[GZIP_CLAIM])
    code, out = cli("compare", *args, "--metric", "seconds", "--repo", str(root))
    assert (code, out) == (1, message)
    assert "found dict" not in out


def one_trial(tmp_path: Path, keep: tuple[int, int]) -> Path:
    """gzip-sizes.json with only the first `keep` times of each size (hyperfine --runs 1)."""
    export = json.loads((FIXTURES / "hyperfine" / "gzip-sizes.json").read_text())
    for result, n in zip(export["results"], keep, strict=True):
        for k in ("times", "exit_codes"):
            result[k] = result[k][:n]
    path = tmp_path / "one-trial.json"
    path.write_text(json.dumps(export))
    return path


@pytest.mark.parametrize(
    ("keep", "said"),
    [((1, 1), "1 trial a side, no interval"), ((5, 1), "1 trial of the baseline, no interval")],
)
def test_one_trial_measured_sides_read_as_measured_not_reported(
    tmp_path: Path, keep: tuple[int, int], said: str
) -> None:
    from generator.analysis.wording import pct
    from generator.render.text import minus

    export = one_trial(tmp_path, keep)  # results[0] is size 100 (the candidate), results[1] size 200
    code, out, root = import_into(tmp_path, "hyperfine", str(export), "--id", GZIP, "--date", "2026-11-30")
    assert code == 0, out
    (root / "site_src" / "reports").mkdir(parents=True)
    front = {"title": "One trial", "date": "2026-11-30", "claims": [GZIP_CLAIM]}
    (root / "site_src" / "reports" / "one.md").write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n")
    times = [r["times"] for r in json.loads(export.read_text())["results"]]
    ratio = (sum(times[0]) / len(times[0])) / (sum(times[1]) / len(times[1]))
    text = page(generate(root), "smaller-input-faster")
    assert f"<dt>Measured</dt><dd>{minus(pct(ratio))} ({said})</dd>" in text
    assert "reported figures" not in text
    code, out = cli(
        "compare", GZIP, "--metric", "seconds", "--at", "size=200", "--versus", "size=100", "--repo", str(root)
    )
    (line,) = [x for x in out.splitlines() if x.startswith("ratio candidate/baseline: ")]
    assert code == 0 and line.endswith(f" ({said})"), out


def test_a_claim_without_varies_reads_without_apart_from_nothing(tmp_path: Path) -> None:
    two = {"id": "rerun", "statement": "The rerun is no faster.", "metric": "seconds", "at": {"size": "1000"}}
    two |= {"baseline": "2026-11-30-sort-a", "candidate": "2026-11-30-sort-b"}
    one = inside("one", SORT, "seconds", "size", "10000", "1000")
    fixture = "pytest-benchmark/sort-rounds.json"
    imports = [("pytest-benchmark", fixture, run) for run in (SORT, "2026-11-30-sort-a", "2026-11-30-sort-b")]
    pages = generate(publication(tmp_path, *imports, claims=[two, one]))
    keys = (
        "(host.arch, host.cores, host.cpu, host.name, host.os, machine_info.processor, "
        "machine_info.python_compiler, machine_info.python_implementation_version, …)"
    )
    assert (
        "No key that both record differs: the 13 keys the manifests and setups of 2026-11-30-sort-a and "
        f"2026-11-30-sort-b record match {keys}. Conditions nobody recorded cannot be checked."
    ) in page(pages, "rerun")
    assert (
        f"Both sides are run {SORT}, so its 13 manifest and setup keys {keys} hold on both: only the condition "
        "differs (size=10000 → size=1000)."
    ) in page(pages, "one")
    assert "apart from nothing" not in page(pages, "rerun") + page(pages, "one")


def test_varies_naming_a_condition_says_it_is_a_condition(tmp_path: Path) -> None:
    claim = inside("fast-exit", FAIL, "seconds", "command", SLOW, FAST) | {"varies": ["command"]}
    root = publication(tmp_path, ("hyperfine", "hyperfine/two-commands-failing.json", FAIL), claims=[claim])
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    assert (
        f"claims.0.varies.0: command is a condition of run '{FAIL}' (a column of results.csv); `varies` lists "
        "manifest and setup keys: remove it, and choose each side's command with `at`"
    ) in out.replace("\n", " ").replace("  ", " "), out
    assert "is in neither" not in out


def test_a_run_compared_with_itself_is_refused_without_found_dict(tmp_path: Path) -> None:
    same = inside("itself", GZIP, "seconds", "size", "100", "100")
    root = publication(tmp_path, ("hyperfine", "hyperfine/gzip-sizes.json", GZIP), claims=[same])
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    assert out.endswith(
        f"claims.0: baseline and candidate are both run '{GZIP}' at the same condition: a run compared with itself "
        "is no claim; give each side its own condition ({run: ID, at: {...}}) or two runs\n"
    ), out
