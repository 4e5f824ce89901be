"""Whatever `check` accepts, `build` builds: generated publications (Hypothesis) and the known
edge cases, each checked and then generated (or built with MkDocs) without an exception."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from generator.cli import app
from helpers import generate, measured_run, publication, write_tree

A, B = "2026-09-01-a", "2026-09-01-b"
# Values `check` accepts (0, or a magnitude from 1e-100 to 1e100: tables.MIN_MAGNITUDE and
# MAX_MAGNITUDE), with their edges, so nearly every example reaches the build; values it refuses
# are test_check's.
magnitudes = st.floats(min_value=1e-100, max_value=1e100)
values = magnitudes | magnitudes.map(lambda v: -v) | st.sampled_from([0.0, -0.0, 1e-100, 1e100, -1e100, 1.0, 100.0])
counts = st.integers(min_value=0, max_value=10**6)
row = st.tuples(values, counts, counts)
rows = st.lists(st.tuples(row, row), min_size=1, max_size=6).map(lambda pairs: [r for pair in pairs for r in pair])
claimed = st.sampled_from([None, "+", "-", "+20%", "-5%", "1.2x", "0.5x", "±2%", "within 1%", "0%", "1.0x", "300%"])
at = st.sampled_from([{"concurrency": 8}, [{"concurrency": 1}, {"concurrency": 8}], "all"])


def results(rows: list[tuple[float, int, int]]) -> str:
    lines = ["trial,concurrency,tokens_per_second,draft_tokens,draft_accepted"]
    for i, (value, drafted, accepted) in enumerate(rows):
        trial, concurrency = i // 2 + 1, (1, 8)[i % 2]
        lines.append(f"{trial},{concurrency},{value!r},{drafted},{min(accepted, drafted)}")
    return "\n".join(lines) + "\n"


def report(claims: list[dict]) -> str:
    return "---\n" + yaml.safe_dump({"title": "R", "date": "2026-09-06", "claims": claims}) + "---\n\n# R\n"


NOT_FINITE = re.compile(r"(?<![A-Za-z])(inf|Infinity|nan|NaN)(?![A-Za-z])")  # what json and f-strings write


def unbounded(files: dict[str, bytes]) -> list[str]:
    """Every generated page, chart spec and ledger file that writes a figure as inf or nan (the
    bundled vega library is not ours)."""
    return [
        f"{path}: {match.group(0)}"
        for path, data in files.items()
        if not path.startswith("assets/")
        for match in NOT_FINITE.finditer(data.decode(errors="replace"))
    ]


def check_then_generate(root: Path) -> None:
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert "Traceback" not in result.output
    event("accepted by check" if result.exit_code == 0 else "refused by check")  # --hypothesis-show-statistics
    if result.exit_code == 0:
        assert unbounded(generate(root)) == []  # must not raise, and every figure is finite or absent


# Trials of 1e-100 and 1e99 on both sides: a ratio interval past the floats. It made the build
# raise OverflowError (render/forest.py) and `compare` print "+inf%"; found on a fresh clone.
SPREAD = [(1e-100, 5, 4), (1e-100, 5, 4), (1e99, 5, 4), (1e99, 5, 4)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(a=SPREAD, b=SPREAD, said="+20%", where={"concurrency": 8}, metric="tokens_per_second")
@given(
    rows,  # a row at concurrency 1 and one at 8 per trial
    rows,
    claimed,
    at,
    st.sampled_from(["tokens_per_second", "acceptance"]),
)
def test_every_accepted_publication_generates(
    tmp_path_factory: pytest.TempPathFactory, a: list, b: list, said: str | None, where: object, metric: str
) -> None:
    first, second = measured_run(A), measured_run(B)
    first[f"runs/{A}/results.csv"], second[f"runs/{B}/results.csv"] = results(a), results(b)
    for run in (first, second):
        run.pop(next(k for k in run if k.endswith("requests.csv")))
    claim = {"id": "c", "statement": "s", "metric": metric, "baseline": A, "candidate": B, "at": where}
    if said is not None:
        claim["claimed"] = said
    root = write_tree(
        tmp_path_factory.mktemp("p") / "pub",
        publication(first, second, extra={"site_src/reports/r.md": report([claim])}),
    )
    check_then_generate(root)


EDGES = {
    "run and claim ids that are index page names": {
        "runs": ["index", "assets"],
        "claim": {"id": "index", "baseline": "index", "candidate": "assets"},
    },
    "a report in a sub-folder": {"report": "site_src/reports/2026/september.md"},
    "a rate at exactly 100%": {
        "results": "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n1,1,1,5,5\n2,1,1,5,5\n"
    },
    "a rate with no attempts": {
        "results": "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n1,1,1,0,0\n2,1,1,0,0\n"
    },
    "dates at both ends of the range": {"fields": {"date": "1970-01-01"}, "other": {"date": "2105-12-31"}},
    "trials alternating 1e100 and 1e-100 (a band past 100%)": {
        "results": "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n"
        "1,1,1e100,5,4\n2,1,1e-100,5,4\n3,1,1e100,5,4\n4,1,1e-100,5,4\n",
        "claim": {"metric": "tokens_per_second"},
    },
    "a published SD of 1e99 against a mean of 5": {
        "other": {"source": {"kind": "reported", "citation": "A blog", "url": "https://example.org/p"}},
        "results": "trial,concurrency,tokens_per_second,tokens_per_second.sd,tokens_per_second.n,"
        "draft_tokens,draft_accepted\n,1,5.0,1e99,5,5,4\n",
        "claim": {"metric": "tokens_per_second"},
    },
}


@pytest.mark.parametrize("case", sorted(EDGES))
def test_known_edge_cases_check_and_build_strictly(tmp_path: Path, case: str) -> None:
    edge = EDGES[case]
    ids = edge.get("runs", [A, B])
    first = measured_run(ids[0], **edge.get("fields", {}))
    second = measured_run(ids[1], **edge.get("other", {}))
    if "results" in edge:
        second[f"runs/{ids[1]}/results.csv"] = edge["results"]
        second.pop(f"runs/{ids[1]}/requests.csv")
    claim = {
        "id": "c",
        "statement": "s",
        "metric": "acceptance",
        "baseline": ids[0],
        "candidate": ids[1],
        "at": {"concurrency": 1},
    }
    claim |= edge.get("claim", {})
    files = publication(first, second, extra={edge.get("report", "site_src/reports/r.md"): report([claim])})
    root = write_tree(tmp_path / "pub", files)
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0
    result = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    page = root / "site" / "claims" / str(claim["id"]) / "index.html"
    assert page.is_file() and (root / "site" / "index.html").is_file()  # the accepted claim is published


def spread_publication(root: Path) -> Path:
    """Both runs' trials 1e-100 and 1e99 at each condition (inside the accepted range): a ratio
    of 1 whose 95% interval lies past the floats at both ends."""
    first, second = measured_run(A), measured_run(B)
    first[f"runs/{A}/results.csv"] = second[f"runs/{B}/results.csv"] = results(SPREAD)
    for run in (first, second):
        run.pop(next(k for k in run if k.endswith("requests.csv")))
    claim = {"id": "c", "statement": "s", "metric": "tokens_per_second", "baseline": A, "candidate": B}
    claim |= {"at": {"concurrency": 8}, "claimed": "+20%"}
    return write_tree(root, publication(first, second, extra={"site_src/reports/r.md": report([claim])}))


def test_trials_hundreds_of_orders_apart_build_and_read_out_of_range(tmp_path: Path) -> None:
    """It raised OverflowError in `build --strict`, and `compare` printed "+inf%"."""
    root = spread_publication(tmp_path / "pub")
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0
    built = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root)])
    assert built.exit_code == 0 and "Traceback" not in built.output, built.output
    page = (root / "site" / "claims" / "c" / "index.html").read_text()
    assert "out of range, out of range&#93;" in page  # the interval's ends, in words
    assert unbounded(generate(root)) == []
    claims = json.loads((root / "site" / "ledger" / "claims.json").read_text())
    assert [(c["ratio"], c["ci_low"], c["ci_high"]) for c in claims] == [(1.0, None, None)]


def test_compare_and_diff_print_no_infinite_figure(tmp_path: Path) -> None:
    root = spread_publication(tmp_path / "pub")
    ask = ["compare", A, B, "--metric", "tokens_per_second", "--at", "concurrency=8", "--repo", str(root)]
    printed = CliRunner().invoke(app, ask, env={"COLUMNS": "200"})
    assert printed.exit_code == 0 and "inf" not in printed.output, printed.output
    assert "ratio candidate/baseline: 1 [out of range, out of range]" in printed.output
    assert "the 95% interval of the ratio runs from out of range to out of range" in printed.output
    found = json.loads(CliRunner().invoke(app, [*ask, "--json"]).stdout)
    assert (found["ratio"], found["ci_low"], found["ci_high"]) == (1.0, None, None)
    table = CliRunner().invoke(app, ["diff", A, B, "--repo", str(root)], env={"COLUMNS": "200"})
    speeds = [line.split("│")[4:6] for line in table.output.splitlines() if "tokens_per_second" in line]
    assert [[cell.strip() for cell in s] for s in speeds] == [["0.0%", "[out of range, out of range]"]] * 2
    assert "inf" not in table.output, table.output
    figures = json.loads(CliRunner().invoke(app, ["diff", A, B, "--json", "--repo", str(root)]).stdout)["figures"]
    speed = [f for f in figures if f["metric"] == "tokens_per_second"]
    assert [(f["ratio"], f["ci_low"], f["ci_high"]) for f in speed] == [(1.0, None, None)] * 2


def test_a_grid_of_trials_hundreds_of_orders_apart_generates_with_every_figure_finite(tmp_path: Path) -> None:
    """A 2x2 attribution grid whose cells hold trials of 1e-100 and 1e99: its effects' intervals
    overflowed numpy's exp (inf in the fit), and the forest's ticks took the log of 1e-250 / 1e250."""
    from builders import cell, grid_attribution, grid_report

    trials = {("a0", "b0"): [1e-100, 1e99, 1e-100], ("a1", "b0"): [1e99, 1e-100, 1e99]}
    trials |= {("a0", "b1"): [1e-100, 1e99, 1e-100], ("a1", "b1"): [1e99, 1e-100, 1e-100]}
    runs = {f"2026-09-01-{a}-{b}": cell(f"2026-09-01-{a}-{b}", {"a": a, "b": b}, v) for (a, b), v in trials.items()}
    grid = grid_attribution(list(runs), {"A": "setup.a", "B": "setup.b"}, credits="B")
    root = write_tree(tmp_path / "pub", publication(*runs.values(), extra=grid_report(grid)))
    assert CliRunner().invoke(app, ["check", "--repo", str(root)]).exit_code == 0
    files = generate(root)
    assert unbounded(files) == []
    assert "out of range" in files["claims/the-grid/index.md"].decode()
