"""What history costs a build: 1,000 runs in 100 series, built with history on and with
`history: false` (target: at most 1.15 times).

Creates a synthetic publication (100 benchmarks, each one series of --runs / 100 nightly runs
of 5 trials at one condition, every run a new engine build; half the series slow down by 10%
two thirds of the way along) and prints:

- `benchledger build` (a new process each time) with history on and off, for a first build (a
  new copy of the publication and an empty build cache each time) and for a second build
  with nothing changed (the build cache reuses every run page; history is computed again):
  the median ratio over --repeat pairs, in wall time and in CPU time (user + system);
- in one process, the history step alone: following every series (summaries, segmentation,
  judgement) and rendering its pages, charts, history.json and feed, in seconds;
- how many series have a page, and how many changes were found.

On a shared 2-core machine identical builds move by 10-20%; hence the medians.

    python bench/history_scale.py [--runs 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MKDOCS = """\
site_name: history scale
docs_dir: site_src
theme: {{name: material, font: false}}
plugins:
  - search
  - benchledger:
      history: {history}
extra_css: [assets/benchledger/benchledger.css]
extra_javascript: [assets/benchledger/vega.js, assets/benchledger/charts.js]
"""

RUN = """\
schema: benchledger.run/1
id: {id}
title: Nightly {day} of bench-{series:02d}
date: {date}
benchmark: bench-{series:02d}
setup: {{model: tiny}}
conditions: [concurrency]
metrics:
  tokens_per_second: {{unit: tok/s, better: higher}}
warmup_trials: 1
source: {{kind: measured}}
"""

MANIFEST = """\
schema: benchledger.manifest/1
host: {{name: bench, cores: 2}}
software: {{engine: llama.cpp, engine_version: b{build}, build_number: {build}}}
"""

SERIES = 100


def make_publication(root: Path, runs: int) -> None:
    rng = random.Random(runs)
    per = max(1, runs // SERIES)
    (root / "site_src").mkdir(parents=True)
    (root / "site_src" / "index.md").write_text("# History at scale\n")
    for s in range(SERIES):
        for day in range(per):
            month, dom = divmod(day, 28)
            run_id = f"2026-{9 + month:02d}-{1 + dom:02d}-bench-{s:02d}"
            folder = root / "runs" / run_id
            folder.mkdir(parents=True)
            (folder / "run.yaml").write_text(
                RUN.format(id=run_id, day=day, series=s, date=f"2026-{9 + month:02d}-{1 + dom:02d}")
            )
            (folder / "manifest.yaml").write_text(MANIFEST.format(build=6000 + day))
            level = 40.0 * (0.9 if s % 2 == 0 and day >= 2 * per // 3 else 1.0) * rng.gauss(1, 0.01)
            rows = [f"{t},1,{rng.gauss(level, level * 0.02):.3f}" for t in range(1, 6)]
            (folder / "results.csv").write_text("trial,concurrency,tokens_per_second\n" + "\n".join(rows) + "\n")


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one command, which must succeed."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def build(root: Path, cache: Path, history: bool) -> tuple[float, float]:
    (root / "mkdocs.yml").write_text(MKDOCS.format(history="true" if history else "false"))
    env = {**os.environ, "BENCHLEDGER_BUILD_CACHE": str(cache)}
    return timed([sys.executable, "-m", "generator.cli", "build", "--repo", str(root)], root, env)


def history_step(root: Path) -> tuple[float, float, int, int]:
    """In one process: following every series, then rendering what history publishes (s)."""
    from generator.analysis.audit import audit
    from generator.analysis.comparison import Settings
    from generator.analysis.history_settings import HistorySettings
    from generator.render.chart_templates import ChartTemplates
    from generator.render.history_feed import history_feed
    from generator.render.history_json import history_json
    from generator.render.history_pages import Context, history_pages
    from generator.site.pipeline import follow

    ledger = audit(root, stale_is_error=False).ledger
    start = time.perf_counter()
    found = follow(ledger, Settings(), HistorySettings())
    followed = time.perf_counter() - start
    assert found is not None
    start = time.perf_counter()
    history_pages(found.series, Context(ledger.runs, found.summaries, "95%"), ChartTemplates())
    history_json(found.series)
    history_feed(found.series, ledger.runs, None, "history scale")
    rendered = time.perf_counter() - start
    pages = sum(1 for f in found.series if len(f.series.points) >= 3)
    return followed, rendered, pages, sum(len(f.changes) for f in found.series)


def ratio(pairs: list[tuple[tuple[float, float], tuple[float, float]]], k: int) -> float:
    return statistics.median(on[k] / off[k] for on, off in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "generator"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        first, again = [], []
        for k in range(args.repeat):
            pair = []
            for history in (True, False):
                root = Path(tmp) / f"pub-{k}-{history}"
                make_publication(root, args.runs)
                cache = Path(tmp) / f"cache-{k}-{history}"
                pair.append(build(root, cache, history))
                again_one = build(root, cache, history)
                pair.append(again_one)
            on_first, on_again, off_first, off_again = pair
            first.append((on_first, off_first))
            again.append((on_again, off_again))
        followed, rendered, pages, changes = history_step(Path(tmp) / "pub-0-True")
        print(f"{args.runs} runs in {SERIES} series ({pages} with a page, {changes} changes found)")
        print(f"  history step in one process: follow {followed:.2f} s, render {rendered:.2f} s")
        for name, pairs in (("first build", first), ("again", again)):
            on, off = statistics.median(p[0][0] for p in pairs), statistics.median(p[1][0] for p in pairs)
            print(
                f"  {name:<11} history on {on:6.2f} s, off {off:6.2f} s: ratio wall {ratio(pairs, 0):.3f}, "
                f"CPU {ratio(pairs, 1):.3f} (median of {len(pairs)}; target <= 1.15)"
            )


if __name__ == "__main__":
    main()
