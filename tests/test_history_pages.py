"""What a reader and a machine see of history: ledger/history.json field by field, the pages'
words, each series chart against the data (the chart oracle: Vega renders it and its marks are
counted and read back through the axis), the Atom feed's stable ids, `history: false`, the
settings' located errors, and a strict build whose link crawl passes."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from test_chart_oracle import SLATE, WHITE, contrast, inverse, panels
from test_history import nightly
from typer.testing import CliRunner

from generator.analysis.audit import audit
from generator.analysis.claims import evaluate_publication
from generator.analysis.comparison import Settings
from generator.analysis.history_settings import HistorySettings
from generator.cli import app
from generator.errors import BenchledgerError
from generator.site.cache import BuildCache
from generator.site.pipeline import Judged, follow, render
from helpers import MKDOCS_YML, publication, write_tree

ATOM = "{http://www.w3.org/2005/Atom}"
FIRST, SECOND = "decode-tokens-per-second-3ecb87235c", "decode-tokens-per-second-55564f2b40"


def _files() -> dict[str, str]:
    """Twelve nightlies as in test_history (a 10% slowdown at b6117, a driver update from the
    tenth night), then on the new driver an incomplete night and a reported figure, and one run
    of a benchmark whose name is markup."""
    runs = [
        nightly(day, build=6109 + day, driver="580.95" if day < 10 else "590.12", level=40.0 if day < 8 else 36.0)
        for day in range(1, 15)
    ]
    files = publication(*runs)
    cut = files["runs/2026-10-13-nightly/run.yaml"].replace(
        "source:", "incomplete:\n  reason: the machine slept\nsource:"
    )
    files["runs/2026-10-13-nightly/run.yaml"] = cut
    files["runs/2026-10-13-nightly/results.csv"] = "trial,concurrency,tokens_per_second\n1,1,36.1\n2,1,36.3\n"
    reported = files["runs/2026-10-14-nightly/run.yaml"].replace(
        "source:\n  kind: measured", "source:\n  kind: reported\n  citation: A forum post"
    )
    files["runs/2026-10-14-nightly/run.yaml"] = reported
    files["runs/2026-10-14-nightly/results.csv"] = "trial,concurrency,tokens_per_second\n,1,35.5\n"
    hostile = nightly(20, build=7000, driver="580.95", level=10.0)
    files |= {
        k.replace("2026-10-20-nightly", "2026-10-20-odd"): v.replace("2026-10-20-nightly", "2026-10-20-odd").replace(
            "benchmark: decode", "benchmark: <img src=x onerror=alert(1)>"
        )
        for k, v in hostile.items()
    }
    return files


def _render(root: Path, chosen: HistorySettings | None = None) -> dict[str, bytes]:
    chosen = chosen or HistorySettings()
    checked = audit(root, stale_is_error=False)
    assert not checked.errors, checked.errors
    evaluations, grids = evaluate_publication(checked.ledger, Settings(), {}, {})
    followed = follow(checked.ledger, Settings(), chosen)
    judged = Judged(checked.ledger, checked.receipts, evaluations, grids, {}, followed, chosen)
    return render(judged, Settings(), BuildCache())


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("history-pages"), _files())


@pytest.fixture(scope="module")
def out(root: Path) -> dict[str, bytes]:
    return _render(root)


def test_history_json_holds_exactly_the_documented_fields(out: dict[str, bytes]) -> None:
    data = json.loads(out["ledger/history.json"])
    assert list(data) == ["series"]
    fields = ["benchmark", "metric", "condition", "environment", "points", "changes", "candidates"]
    assert all(list(s) == fields for s in data["series"])
    assert all(list(p) == ["run", "date", "mean", "low", "high", "n"] for s in data["series"] for p in s["points"])
    change_fields = ["before", "after", "ratio", "low", "high", "verdict"]
    assert all(list(c) == change_fields for s in data["series"] for c in s["changes"] + s["candidates"])
    odd, first, second = data["series"]  # sorted by benchmark: "<" before "d"
    assert (first["benchmark"], first["metric"], first["condition"]) == (
        "decode",
        "tokens_per_second",
        {"concurrency": "1"},
    )
    assert first["environment"]["accelerators.0.driver"] == "580.95"
    assert "software.engine_version" not in first["environment"] and "software.build_number" not in first["environment"]
    assert [p["run"] for p in first["points"]] == [f"2026-10-{d:02d}-nightly" for d in range(1, 10)]
    assert first["points"][0] == {
        "run": "2026-10-01-nightly",
        "date": "2026-10-01",
        "mean": pytest.approx(40.24),
        "low": pytest.approx(39.906029, rel=1e-6),
        "high": pytest.approx(40.576766, rel=1e-6),
        "n": 5,
    }
    [change] = first["changes"]
    assert (change["before"], change["after"], change["verdict"]) == (
        "2026-10-07-nightly",
        "2026-10-08-nightly",
        "worse",
    )
    assert change["low"] < change["ratio"] < change["high"] < 1
    assert second["environment"]["accelerators.0.driver"] == "590.12" and second["changes"] == []
    assert [(p["run"], p["n"], p["low"]) for p in second["points"][3:]] == [
        ("2026-10-13-nightly", 2, pytest.approx(35.0, abs=2)),  # incomplete: its two trials
        ("2026-10-14-nightly", 0, None),  # reported: no trials, no interval
    ]
    assert odd["benchmark"] == "<img src=x onerror=alert(1)>" and len(odd["points"]) == 1


def test_the_same_publication_gives_the_same_bytes(root: Path, out: dict[str, bytes]) -> None:
    again = _render(root)
    history = sorted(k for k in out if k.startswith("history/") or k == "ledger/history.json")
    assert len(history) == 8  # index, changes, feed, history.json, and two series of a page and a chart each
    assert all(again[k] == out[k] for k in history)


def _trials_in_folder(root: Path, run_id: str) -> list[float]:
    rows = csv.DictReader(io.StringIO((root / "runs" / run_id / "results.csv").read_text()))
    return sorted(float(r["tokens_per_second"]) for r in rows if r["trial"])


@pytest.mark.parametrize("slug", [FIRST, SECOND])
def test_each_series_chart_draws_exactly_its_points_and_trials(root: Path, out: dict[str, bytes], slug: str) -> None:
    """The chart oracle: Vega draws one point per point of history.json, at its mean (read back
    through the y axis), hollow where it has no trials or is incomplete, and one dot per trial
    of the run folders (read with the csv module)."""
    series = {"3ecb87235c": 1, "55564f2b40": 2}[slug.rsplit("-", 1)[1]]
    want = json.loads(out["ledger/history.json"])["series"][series]
    (panel,) = panels(json.loads(out[f"history/{slug}/chart.json"]))
    read, pixel = inverse(panel.ticks["left"])
    points = [m for m in panel.of("symbol") if "mean: " in str(m.item.get("description", ""))]
    dots = [m for m in panel.of("symbol") if "(one trial)" in str(m.item.get("description", ""))]
    assert len(points) == len(want["points"]), (
        f"{slug}: {len(points)} points drawn, history.json has {len(want['points'])}"
    )
    assert sorted(m.field("run") for m in points) == sorted(p["run"] for p in want["points"])
    for m in points:
        (p,) = [p for p in want["points"] if p["run"] == m.field("run")]
        assert abs(read(m.y) - p["mean"]) <= 1.5 * pixel, (
            f"{slug}: {p['run']} drawn at {read(m.y)}, its mean is {p['mean']}"
        )
    hollow = sorted(m.field("run") for m in points if m.item.get("fill") in (None, "transparent"))
    assert hollow == (["2026-10-13-nightly", "2026-10-14-nightly"] if series == 2 else [])
    trials = sorted(v for p in want["points"] if p["n"] for v in _trials_in_folder(root, p["run"]))
    assert sorted(read(m.y) for m in dots) == pytest.approx(trials, abs=1.5 * pixel)
    changes = [m for m in panel.of("rule") if "change: " in str(m.item.get("description", ""))]
    assert len(changes) == len(want["changes"])
    colours = {m.item.get("stroke") for m in panel.marks if m.kind in ("rule", "line")} | {
        m.item.get("fill") or m.item.get("stroke") for m in points
    }
    for colour in {
        c for c in colours if str(c).startswith("#")
    }:  # every mark 3:1 or more on both page backgrounds (WCAG, graphics)
        assert min(contrast(str(colour), WHITE), contrast(str(colour), SLATE)) >= 3, colour


def test_the_pages_say_what_history_found(out: dict[str, bytes]) -> None:
    index = out["history/index.md"].decode()
    assert "## 2 series with a page" in index and "## 1 shorter series" in index
    assert (
        '<a href="decode-tokens-per-second-3ecb87235c/">decode&#58; tokens&#95;per&#95;second</a><br><span class="bl-sub">'
        "at concurrency&#61;1&#59; host spark&#45;01&#59; accelerators.0.driver&#61;580.95</span>"
    ) in index
    assert (
        '<td data-label="Latest change"><strong>worse</strong> −9.9&#37; &#91;−13.9&#37;, −5.9&#37;&#93;<br>'
        '<span class="bl-sub">from 2026&#45;10&#45;07&#45;nightly to 2026&#45;10&#45;08&#45;nightly</span></td>'
    ) in index
    assert "<img" not in index and "&#60;img src&#61;x onerror&#61;alert&#40;1&#41;&#62;" in index
    page = out[f"history/{FIRST}/index.md"].decode()
    assert (
        "At concurrency&#61;1 &#40;host spark&#45;01&#59; accelerators.0.driver&#61;580.95&#41;&#59; 9 points in order "
        "of build number, 9 runs&#59; higher is better."
    ) in page  # the driver sets it apart from the series of the same title after the split
    assert (
        "- Split: accelerators.0.driver 580.95 → 590.12 from run "
        '<a href="../../runs/2026-10-10-nightly/">2026&#45;10&#45;10&#45;nightly</a> (a series of its own on each side).'
    ) in page
    assert (
        '<a href="../../compare/?a=2026&#45;10&#45;07&#45;nightly&amp;b=2026&#45;10&#45;08&#45;nightly">'
        "compare these two runs</a>"
    ) in page
    assert "software.build&#95;number 6116 → 6117&#59; software.engine&#95;version b6116 → b6117" in page
    second = out[f"history/{SECOND}/index.md"].decode()
    assert "incomplete run&#58; drawn, not segmented" in second
    assert "reported figure&#58; trials not reported" in second
    assert "No change: the segmentation found no boundary judged worse or better." in second
    assert second.count("latest against the best earlier segment") == 0  # the same two segments, shown once
    changes = out["history/changes.md"].decode()
    assert changes.count("<tr><td") == 1 and '<td data-label="Date">2026&#45;10&#45;08</td>' in changes


def _feed(out: dict[str, bytes]) -> ET.Element:
    return ET.fromstring(out["history/feed.xml"])


def test_the_feed_ids_are_stable_tag_uris_and_links_follow_site_url(root: Path, out: dict[str, bytes]) -> None:
    (entry,) = _feed(out).findall(f"{ATOM}entry")
    want = f"tag:benchledger,2026-10-08:history/{FIRST}/2026-10-07-nightly/2026-10-08-nightly"
    assert entry.findtext(f"{ATOM}id") == want
    assert entry.find(f"{ATOM}link").get("href") == f"{FIRST}/"  # relative to the feed without site_url
    moved = _render(root, HistorySettings(site_url="https://example.org/pub/", site_name="Bench <&> ledger"))
    (entry,) = _feed(moved).findall(f"{ATOM}entry")
    assert entry.findtext(f"{ATOM}id") == want  # the site's address is not part of an id
    assert entry.find(f"{ATOM}link").get("href") == f"https://example.org/pub/history/{FIRST}/"
    assert _feed(moved).findtext(f"{ATOM}title") == "Bench <&> ledger: changes"
    assert "worse" in entry.findtext(f"{ATOM}title") and "−9.9%" in entry.findtext(f"{ATOM}summary")


def test_history_false_publishes_no_history(root: Path) -> None:
    out = _render(root, HistorySettings(enabled=False))
    assert not [k for k in out if k.startswith("history/") or k == "ledger/history.json"]
    assert "runs/index.md" in out


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"history": "no"}, "mkdocs.yml: plugins.benchledger.history: 'no' is not true or false; e.g. history: false"),
        ({"history_along": "setup.x"}, "plugins.benchledger.history_along: 'setup.x' is not a list of keys"),
        ({"history_along": ["ok.key", {"a": 1}]}, "plugins.benchledger.history_along[1]: a dict is not a dotted key"),
    ],
)
def test_history_settings_are_located_errors(given: dict[str, object], message: str) -> None:
    with pytest.raises(BenchledgerError) as err:
        HistorySettings.parse(given, "mkdocs.yml")
    assert message in str(err.value)
    assert (
        HistorySettings.parse({"history_along": ["setup.model_revision"]}, "x").along_keys[-1] == "setup.model_revision"
    )


def test_a_strict_build_crawls_every_history_link_and_check_asks_for_site_url(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", _files())
    checked = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert checked.exit_code == 0, checked.output
    assert "Warning: mkdocs.yml: site_url: not set, and history shows 1 change" in checked.output
    built = CliRunner().invoke(app, ["build", "--repo", str(root), "--strict"])
    assert built.exit_code == 0, built.output
    site = root / "site" / "history"
    assert (site / "index.html").is_file() and (site / FIRST / "index.html").is_file() and (site / "feed.xml").is_file()
    assert (site / "changes" / "index.html").is_file()
    (root / "mkdocs.yml").write_text(MKDOCS_YML + "site_url: https://example.org/pub/\n")
    quiet = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert quiet.exit_code == 0 and "site_url" not in quiet.output


NOTES = """\
schema: benchledger.history/1
annotate:
  - run: 2026-10-08-nightly
    text: "known: <b>flash-attention</b> off by default from b6117"
exclude:
  - run: 2026-10-04-nightly
    reason: the fan was unplugged that night
accept:
  - run: 2026-10-08-nightly
    reason: b6117 trades decode speed for exact sampling
"""


def test_history_files_show_on_the_pages_the_chart_and_the_feed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", {**_files(), "history/known.yaml": NOTES})
    out = _render(root)
    page = out[f"history/{FIRST}/index.md"].decode()
    known = "known&#58; &#60;b&#62;flash&#45;attention&#60;&#47;b&#62; off by default from b6117 &#40;history&#47;known.yaml&#41;"
    assert f'- <a href="../../runs/2026-10-08-nightly/">2026&#45;10&#45;08&#45;nightly</a>: {known}' in page
    assert f'<br><span class="bl-sub">{known}</span></td>' in page  # beside the keys that moved at the change
    assert "accepted by history&#47;known.yaml&#58; b6117 trades decode speed for exact sampling" in page
    assert "excluded by history&#47;known.yaml&#58; the fan was unplugged that night" in page
    assert "<b>" not in page
    (panel,) = panels(json.loads(out[f"history/{FIRST}/chart.json"]))
    notes = [m for m in panel.of("rule") if "note: " in str(m.item.get("description", ""))]
    assert len(notes) == 1 and "flash-attention" in notes[0].field("note")
    (entry,) = _feed(out).findall(f"{ATOM}entry")
    assert "Accepted by history/known.yaml: b6117 trades decode speed for exact sampling." in entry.findtext(
        f"{ATOM}summary"
    )


def _with_plugin_settings(root: Path, settings: str) -> None:
    (root / "mkdocs.yml").write_text(
        MKDOCS_YML.replace("  - benchledger\n", f"  - benchledger:\n{settings}")
        .replace("  - Runs: runs/index.md\n", "")
        .replace("nav:\n  - Home: index.md\n", "")
    )


def test_history_false_in_mkdocs_yml_builds_no_history_and_a_bad_setting_is_located(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", _files())
    _with_plugin_settings(root, "      history: false\n")
    built = CliRunner().invoke(app, ["build", "--repo", str(root), "--strict"])
    assert built.exit_code == 0, built.output
    assert "site_url" not in built.output  # nothing to warn of: no history, no feed
    assert not (root / "site" / "history").exists() and not (root / "site_src" / "history").exists()
    assert not (root / "site" / "ledger" / "history.json").exists()
    assert "History" not in (root / "site" / "index.html").read_text()
    _with_plugin_settings(root, "      history_along: software.commit_date\n")
    refused = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert refused.exit_code == 1
    assert "mkdocs.yml: plugins.benchledger.history_along: 'software.commit_date' is not a list of keys" in (
        refused.output
    )


def test_claims_resting_on_a_series_runs_are_named_on_its_page_and_chart(tmp_path: Path) -> None:
    slower = {
        "id": "b6117-slower",
        "statement": "Build b6117 decodes <i>slower</i>.",
        "metric": "tokens_per_second",
        "baseline": "2026-10-07-nightly",
        "candidate": "2026-10-08-nightly",
        "at": {"concurrency": 1},
        "varies": ["software"],
    }
    meta = {"title": "Nightlies", "date": "2026-10-09", "claims": [slower]}
    report = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n# Nightlies\n"
    root = write_tree(tmp_path / "pub", {**_files(), "site_src/reports/nightlies.md": report})
    out = _render(root)
    page = out[f"history/{FIRST}/index.md"].decode()
    assert "## Claims on these runs" in page
    claim = '<a href="../../claims/b6117-slower/">b6117&#45;slower</a> &#40;'
    assert page.count(claim) == 2 and "<i>" not in page  # at its baseline and its candidate
    (panel,) = panels(json.loads(out[f"history/{FIRST}/chart.json"]))
    notes = [m.field("note") for m in panel.of("rule") if "note: " in str(m.item.get("description", ""))]
    assert len(notes) == 2 and all("claim b6117-slower (" in n for n in notes)


def test_the_methods_page_states_the_history_rules_from_the_code() -> None:
    from generator.analysis import changes, segmentation
    from generator.render.methods_page import methods_page

    page = methods_page(Settings(min_effect=0.02)).split("## History", 1)[1]
    assert f"The penalty for a boundary is\n{segmentation.PENALTY_PER_LOG_POINT:g} × ln(points)" in page
    assert f"never taken below\n{segmentation.FLOOR_SD:.1%} on the log scale" in page
    assert [v for v in changes.CHANGE_VERDICTS if f"- **{v}**" in page or f"or **{v}**" in page] == list(
        changes.CHANGE_VERDICTS
    )
    assert "at least 2.0% away from 1" in page and "lies inside 1 ± 2.0%" in page  # the publication's min_effect
    assert "PELT (Killick, Fearnhead and Eckley" in page  # the method and its paper, from the docstring
    assert "A change smaller than the run-to-run noise" in page and "runs of one evening" in page  # cannot know


def test_a_second_build_of_the_same_runs_reuses_history_and_a_changed_run_follows_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.analysis import history as history_module
    from generator.site.pipeline import generate_site

    root = write_tree(tmp_path / "pub", _files())
    cache = BuildCache()
    generate_site(root, root / "site_src", Settings(), cache)
    first = {p: (root / "site_src" / p).read_bytes() for p in ("ledger/history.json", f"history/{FIRST}/index.md")}

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("history followed again though no run changed")

    with monkeypatch.context() as m:
        m.setattr(history_module, "history", refused)
        again = generate_site(root, root / "site_src", Settings(), cache)
    assert again.history is not None and len(again.history.series) == 3
    assert {p: (root / "site_src" / p).read_bytes() for p in first} == first
    results = root / "runs" / "2026-10-09-nightly" / "results.csv"
    results.write_text(results.read_text().replace("\n1,1,", "\n1,1,3", 1))  # trial 1: 36.x -> 336.x tok/s
    changed = generate_site(root, root / "site_src", Settings(), cache)
    assert changed.history is not None
    assert (root / "site_src" / "ledger" / "history.json").read_bytes() != first["ledger/history.json"]
