"""The build cache across processes: a second `benchledger generate` re-renders only the run
that changed, and nothing it cannot re-verify is reused (a hand-edited or deleted page, a
corrupt or foreign cache file, --no-cache)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import measured_run, publication, write_tree

FIRST, SECOND = "2026-09-01-first", "2026-09-02-second"


def generate(root: Path, *args: str, cache: Path) -> str:
    """`benchledger generate` in a fresh process, as a user runs it; its summary line."""
    env = {**os.environ, "BENCHLEDGER_BUILD_CACHE": str(cache)}
    env.pop("BENCHLEDGER_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", "--repo", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "pub", publication(measured_run(FIRST), measured_run(SECOND)))


def counts(line: str) -> tuple[int, int]:
    """(files written, runs rendered) from the summary line."""
    files, runs = line.split(": ", 1)[1].split("; ")
    return int(files.split()[0]), int(runs.split()[0])


def run_files(root: Path, run_id: str) -> int:
    return sum(1 for p in (root / "site_src" / "runs" / run_id).rglob("*") if p.is_file())


def test_a_second_process_renders_only_the_run_that_changed(two_runs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    line = generate(two_runs, cache=cache)
    assert counts(line)[1] == 2 and line.endswith("2 of 2 runs rendered")
    assert len(list(cache.glob("*.pickle"))) == 1
    assert counts(generate(two_runs, cache=cache)) == (0, 0)
    untouched = two_runs / "site_src" / "runs" / SECOND / "index.md"
    before = untouched.stat().st_mtime_ns
    results = two_runs / "runs" / FIRST / "results.csv"
    results.write_text(results.read_text().replace("1,8,104.1,", "1,8,140.1,"))
    written, rendered = counts(generate(two_runs, cache=cache))
    assert rendered == 1 and written >= 2  # the run's page and charts, the ledger export
    assert untouched.stat().st_mtime_ns == before
    assert "140.1" in (two_runs / "site_src" / "ledger" / "trials.csv").read_text()


def test_a_generated_page_edited_or_deleted_by_hand_is_rendered_again(two_runs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    generate(two_runs, cache=cache)
    page = two_runs / "site_src" / "runs" / FIRST / "index.md"
    original = page.read_bytes()
    page.write_bytes(original.replace(b"\n# ", b"\n# Tampered ", 1))
    chart = sorted((two_runs / "site_src" / "runs" / SECOND / "charts").glob("*.json"))[0]
    chart_bytes = chart.read_bytes()
    chart.unlink()
    assert counts(generate(two_runs, cache=cache)) == (2, 2)
    assert page.read_bytes() == original
    assert chart.read_bytes() == chart_bytes


def test_a_corrupt_cache_or_one_from_other_code_is_ignored(two_runs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    generate(two_runs, cache=cache)
    (saved,) = cache.glob("*.pickle")
    saved.write_bytes(b"not a pickle")
    assert counts(generate(two_runs, cache=cache)) == (0, 2)  # rendered again, same bytes: nothing written
    assert counts(generate(two_runs, cache=cache)) == (0, 0)  # and saved again
    with saved.open("rb") as fh:  # the code's version, then each part of the cache
        pickle.load(fh)
        kept = fh.read()
    saved.write_bytes(pickle.dumps("other code") + kept)
    assert counts(generate(two_runs, cache=cache)) == (0, 2)


def test_a_saved_cache_loads_as_it_was_saved_part_by_part_chunk_by_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each part is pickled in chunks, each with a memo of its own (a memo of a whole part
    grew a 10,000-run build by 80 MB); what loads is what was saved, whatever the chunks' borders."""
    from generator.site import cache as built

    monkeypatch.setenv("BENCHLEDGER_BUILD_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "pub"
    root.mkdir()
    shared = ("one", "tuple")
    saved = built.BuildCache.for_publication(root)
    for i in range(2 * built.CHUNK + 1):
        saved.written[f"runs/r{i}/index.md"] = (bytes([i % 256]) * 32, i, -i, i, i)
    saved.written["odd"] = (b"short", 1 << 70, 0, 0, 0)  # held as it is, not packed
    saved.trial_lines = {f"r{i}": (shared, "a,b\n") for i in range(built.CHUNK + 1)}
    saved.save()
    loaded = built.BuildCache.for_publication(root)
    assert dict(loaded.written) == dict(saved.written) and list(loaded.written) == list(saved.written)
    n = built.CHUNK
    assert loaded.written[f"runs/r{n}/index.md"] == (bytes([n % 256]) * 32, n, -n, n, n)
    assert loaded.written["odd"] == (b"short", 1 << 70, 0, 0, 0)
    assert loaded.trial_lines == saved.trial_lines and loaded.parsed == {} and loaded.path == saved.path
    first, last = loaded.trial_lines["r0"][0], loaded.trial_lines[f"r{built.CHUNK - 1}"][0]
    assert first is last  # shared inside one chunk stays shared


def test_no_cache_neither_reads_nor_saves_it(two_runs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert counts(generate(two_runs, "--no-cache", cache=cache))[1] == 2
    assert not cache.exists()
    assert counts(generate(two_runs, "--no-cache", cache=cache)) == (0, 2)  # the files on disk are compared
    assert not cache.exists()


def test_a_cache_folder_that_cannot_be_written_only_costs_time(two_runs: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    assert counts(generate(two_runs, cache=blocked / "builds"))[1] == 2
    assert counts(generate(two_runs, cache=blocked / "builds")) == (0, 2)  # nothing saved: rendered again


def test_no_cache_lasts_only_for_its_command(two_runs: Path) -> None:
    from typer.testing import CliRunner

    from generator.cli import app

    result = CliRunner().invoke(app, ["generate", "--repo", str(two_runs), "--no-cache"])
    assert result.exit_code == 0 and result.output.strip().endswith("2 of 2 runs rendered")
    assert "BENCHLEDGER_NO_CACHE" not in os.environ  # a later build of this process (serve, tests) uses the cache


def test_a_build_evaluates_again_only_the_claims_whose_inputs_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each claim's evaluation is kept in the build cache under its claim, its runs' digests and
    the verdict settings: a new process evaluates again exactly the claims whose runs, words or
    settings changed, shows a changed report title on the others, and writes the same pages as
    a build without the cache."""
    from builders import A, B, claim, report
    from generator.analysis import claims
    from generator.analysis.comparison import Settings
    from generator.site.cache import BuildCache
    from generator.site.pipeline import generate_site
    from helpers import generate as render_all

    c = "2026-09-03-third"
    files = publication(
        measured_run(A, setup={"draft_vocab": 248320}),
        measured_run(B),
        measured_run(c, setup={"draft_vocab": 8000}),
        extra={"site_src/reports/seed.md": report([claim(id="ab"), claim(id="ac", candidate=c)])},
    )
    root = write_tree(tmp_path / "pub", files)
    monkeypatch.setenv("BENCHLEDGER_BUILD_CACHE", str(tmp_path / "cache"))
    evaluated: list[str] = []
    evaluate = claims.evaluate
    monkeypatch.setattr(claims, "evaluate", lambda r, cl, *a, **k: evaluated.append(cl.id) or evaluate(r, cl, *a, **k))

    def build(settings: Settings | None = None) -> dict[str, claims.Evaluation]:
        """One generation as a new process runs it: the cache read from disk, used, saved."""
        evaluated.clear()
        cache = BuildCache.for_publication(root)
        return generate_site(root, root / "site_src", settings or Settings(), cache).evaluations

    build()
    assert sorted(evaluated) == ["ab", "ac"]
    build()
    assert evaluated == []
    results = root / "runs" / c / "results.csv"
    results.write_text(results.read_text().replace("1,8,104.1,", "1,8,94.1,"))
    assert build()["ac"].conditions[0].baseline.values[0] == 104.1 and evaluated == ["ac"]
    seed = root / "site_src" / "reports" / "seed.md"
    seed.write_text(seed.read_text().replace("title: A report", "title: A retitled report"))
    assert build()["ab"].report.meta.title == "A retitled report" and evaluated == []
    seed.write_text(seed.read_text().replace("The shortlist is faster.", "The shortlist is quicker.", 1))
    assert build()["ab"].claim.statement == "The shortlist is quicker." and evaluated == ["ab"]
    build(Settings(min_effect=0.05))
    assert sorted(evaluated) == ["ab", "ac"]
    build()
    expected = render_all(root)
    on_disk = {k: (root / "site_src" / k).read_bytes() for k in expected}
    assert on_disk == expected


def test_build_reads_each_run_once(two_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchledger build` hands the publication `check` just read to the plugin's generation;
    the objects the plugin froze out of the garbage collector's walks are unfrozen after it."""
    import gc

    from typer.testing import CliRunner

    from generator.analysis import audit
    from generator.cli import app

    loads: list[Path] = []
    load = audit.load
    monkeypatch.setattr(audit, "load", lambda root, *a: loads.append(root) or load(root, *a))
    monkeypatch.setenv("BENCHLEDGER_BUILD_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["build", "--repo", str(two_runs), "--strict"])
    assert result.exit_code == 0, result.output
    assert len(loads) == 1 and (two_runs / "site" / "runs" / FIRST / "index.html").is_file()
    assert gc.get_freeze_count() == 0


def test_the_collector_is_relaxed_only_while_benchledger_works(
    two_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While benchledger reads and renders, young collections run every 50,000 allocations; MkDocs
    builds the pages with the thresholds the process had, and they are the same after the build.
    A collector turned off (threshold 0) stays off."""
    import gc

    from typer.testing import CliRunner

    from generator.cli import app
    from generator.site import pipeline
    from generator.site.collector import RELAXED, relaxed
    from generator.site.plugin import BenchledgerPlugin

    seen: dict[str, int] = {}
    generated, on_page = pipeline._generated, BenchledgerPlugin.on_page_markdown

    def generating(*args: Any, **kwargs: Any) -> Any:
        seen["generating"] = gc.get_threshold()[0]
        return generated(*args, **kwargs)

    def page(self: BenchledgerPlugin, markdown: str, /, **kwargs: Any) -> str:
        seen["mkdocs"] = gc.get_threshold()[0]
        return on_page(self, markdown, **kwargs)

    monkeypatch.setattr(pipeline, "_generated", generating)
    monkeypatch.setattr(BenchledgerPlugin, "on_page_markdown", page)
    monkeypatch.setenv("BENCHLEDGER_BUILD_CACHE", str(tmp_path / "cache"))
    before = gc.get_threshold()
    assert CliRunner().invoke(app, ["build", "--repo", str(two_runs)]).exit_code == 0
    assert seen == {"generating": RELAXED, "mkdocs": before[0]} and gc.get_threshold() == before
    try:
        gc.set_threshold(0)
        with relaxed():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_a_build_that_fails_after_rendering_saves_no_cache(
    two_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: a build that failed while writing pages saved a cache remembering pages
    it never wrote, and the next build kept the run's old page beside claims on its new data."""
    from typer.testing import CliRunner

    from generator.cli import app
    from generator.errors import BenchledgerError, Problem
    from generator.site import pipeline

    cache = tmp_path / "cache"
    generate(two_runs, cache=cache)
    results = two_runs / "runs" / FIRST / "results.csv"
    results.write_text(results.read_text().replace("1,8,104.1,", "1,8,140.1,"))

    def refuse(*_: object, **__: object) -> None:
        raise BenchledgerError([Problem(file="site_src", message="the disk is full")])

    monkeypatch.setenv("BENCHLEDGER_BUILD_CACHE", str(cache))
    monkeypatch.setattr(pipeline, "write", refuse)
    result = CliRunner().invoke(app, ["build", "--repo", str(two_runs)])
    assert result.exit_code == 1 and "the disk is full" in result.output
    monkeypatch.undo()
    assert generate(two_runs, cache=cache).endswith("1 of 2 runs rendered")
    assert "140.1" in (two_runs / "site_src" / "runs" / FIRST / "index.md").read_text()


def test_serve_renders_again_only_the_claims_whose_inputs_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve` keeps each claim's files by what they are rendered from (`outputs.claim_key`). The
    key is made of values alone: a rebuild with nothing changed renders no claim (it rendered
    all 15 of the example's before, when the claims' records pickled differently), and one whose
    candidate run changed renders that run's claims only."""
    from builders import copy_example
    from generator.analysis.comparison import Settings
    from generator.render import outputs
    from generator.site.cache import BuildCache
    from generator.site.pipeline import generate_site

    root = copy_example(tmp_path / "pub")
    rendered: list[str] = []
    real = outputs._claim_files
    monkeypatch.setattr(outputs, "_claim_files", lambda claim_id, *a: rendered.append(claim_id) or real(claim_id, *a))
    cache = BuildCache(serving=True)
    first = generate_site(root, root / "site_src", Settings(), cache, save=False)
    assert len(rendered) == len(first.evaluations) == 15
    rendered.clear()
    generate_site(root, root / "site_src", Settings(), cache, save=False)
    assert rendered == []
    run = "2026-11-29-testbed-nmax2"
    results = root / "runs" / run / "results.csv"
    results.write_text(results.read_text().replace("\n1,1,820.133,", "\n1,1,820.134,", 1))  # one trial's value
    from generator.analysis.claims import chain

    ledger, evaluations = first.ledger, first.evaluations
    sides = {c for c, ev in evaluations.items() if run in (ev.claim.baseline, ev.claim.candidate)}
    grids = {g.attribution.id for g in first.grids if run in g.attribution.runs}
    # a claim's page shows its whole correction chain and the grids that hold its runs
    changed = {c for c in evaluations if sides & set(chain(c, ledger)) or any(g in grids for g in _grid_ids(c, first))}
    assert sides and changed != set(evaluations)
    rendered.clear()
    generate_site(root, root / "site_src", Settings(), cache, save=False)
    assert sorted(rendered) == sorted(changed)


def _grid_ids(claim_id: str, generated: Any) -> list[str]:
    from generator.render.attribution_pages import related

    return [g.attribution.id for g in related(generated.evaluations[claim_id], generated.grids)]


@pytest.mark.parametrize("at_once", [1000, 1])
def test_a_build_that_fails_before_writing_leaves_no_run_taken_for_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_once: int
) -> None:
    """A run is remembered as rendered before its files are written; when the write fails (a
    person's file in the way), the cache goes back to what it said, so the next build of the
    same process (`serve`) renders the run again instead of keeping its old page."""
    from builders import copy_example
    from generator.analysis.comparison import Settings
    from generator.errors import BenchledgerError
    from generator.site import pipeline
    from generator.site.cache import BuildCache
    from generator.site.pipeline import generate_site

    monkeypatch.setattr(pipeline, "RUNS_AT_ONCE", at_once)
    root = copy_example(tmp_path / "pub")
    cache = BuildCache(serving=True)
    generate_site(root, root / "site_src", Settings(), cache, save=False)
    run = "2026-11-29-testbed-nmax2"
    meta = root / "runs" / run / "run.yaml"
    meta.write_text(meta.read_text().replace("title: ", "title: Retitled ", 1))
    methods = root / "site_src" / "methods.md"
    methods.unlink()
    methods.write_text("# My methods\n")
    with pytest.raises(BenchledgerError):
        generate_site(root, root / "site_src", Settings(), cache, save=False)
    methods.unlink()
    generate_site(root, root / "site_src", Settings(), cache, save=False)
    assert "Retitled" in (root / "site_src" / "runs" / run / "index.md").read_text()
