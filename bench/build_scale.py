"""How build time grows with the number of runs, and what benchledger adds over MkDocs.

Creates synthetic publications of 10, 100 and 1,000 runs (5 trials x 3
conditions x 3 metrics) in a temporary folder and prints, in one run:

- `benchledger build` time (check + generate + MkDocs build),
- plain `mkdocs build` time of the same already-generated pages (plugin off), into a site folder
  of its own (each builder keeps its own output between builds, as a user's does),
- their ratio, for the first build (a new copy of the publication and an empty build cache
  each time; target at 1,000 runs <= 0.6: the plugin converts its generated pages itself, the
  search plugin skips them and their files are linked, not copied, while plain MkDocs converts,
  indexes and copies all of them), for a second one with nothing changed (`again`: the build
  cache reuses every page and its HTML) and for one after one run's results.csv changed
  (`changed`, target at 1,000 runs <= 0.25, against plain MkDocs of the changed pages); each `benchledger
  build` is a new process, and both builders use the same Markdown extensions (those the plugin
  needs) and the same search plugin. Each is measured --repeat times (3), each benchledger
  build followed by a plain MkDocs build of the same pages, and the median ratio is printed:
  in wall time, in CPU time (user + system) and in user time alone. System time is mostly the
  file system's work of emptying the site folder and writing 13,000 files, which both builders
  do alike and which moves by seconds between identical builds on a shared machine. User time
  is the builders' own work, but on a shared 2-core machine it too moves by 10-20% between
  identical builds: hence the medians. benchledger's Python bytecode is compiled first, as an
  installed package has it,
- time per run (flat means linear growth; target at 10,000 runs <= 8 ms),
- the site size and the largest page (target < 300 KB),
- the weight of one run page (its HTML plus its chart JSON, without the shared
  chart bundle and the downloadable files; target <= 60 KB),
- the peak memory (maximum resident set) of the `benchledger build` process and of its forked
  workers, the larger of the two (target < 1 GB at 10,000 runs),
- and, at the largest size, after one run's results.csv changes:
  - a second `benchledger generate` in a new process, as a second `benchledger build`
    runs it: the regeneration itself (target < 1 s at 1,000 runs; the build cache
    reuses every other run's pages) and the process's start-up (imports and check);
  - a plain MkDocs build of the same pages, which a second build also pays, reported apart;
  - the rebuild as `serve` does it in one process: regeneration and MkDocs' dirty rebuild.

The build caches go to the same temporary folder as the publications, not the user's; all of it is removed at the end.

Each publication also carries a report with one claim per ten runs (100 at 1,000 runs; each
claim's page draws both sides across the concurrency sweep) and ten sweep charts of four runs.

    python bench/build_scale.py [--sizes 10,100,1000]
    python bench/build_scale.py --sizes 1000,10000      # on request: about 15 minutes on 2 cores
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

MKDOCS = """\
site_name: scale
docs_dir: site_src
theme: {{name: material, font: false}}
plugins: [search{plugin}]
extra_css: [assets/benchledger/benchledger.css]
extra_javascript: [assets/benchledger/vega.js, assets/benchledger/charts.js]
nav: [{{Home: index.md}}, {{Runs: runs/index.md}}, {{Claims: claims/index.md}}, {{Report: reports/scale.md}}]
markdown_extensions:  # what the plugin needs (it adds md_in_html and pymdownx.tilde when missing), so both builds match
  - tables
  - admonition
  - attr_list
  - md_in_html
  - pymdownx.tilde: {{subscript: false}}
  - toc: {{permalink: true}}
"""

RUN = """\
schema: benchledger.run/1
id: {id}
title: Synthetic run {i}
date: 2026-09-{day:02d}
benchmark: scale
setup: {{draft_n_max: {nmax}}}
conditions: [concurrency]
metrics:
  tokens_per_second: {{unit: tok/s, better: higher}}
  ttft_p50_s: {{unit: s, better: lower}}
  draft_accepted: {{unit: tokens}}
warmup_trials: 1
source: {{kind: measured}}
"""


def make_publication(root: Path, runs: int) -> None:
    rng = random.Random(runs)
    (root / "site_src").mkdir(parents=True)
    (root / "site_src" / "index.md").write_text("# Scale\n\n[Runs](runs/index.md)\n")
    for i in range(runs):
        rid = f"2026-09-{1 + i % 28:02d}-run-{i:04d}"
        folder = root / "runs" / rid
        folder.mkdir(parents=True)
        (folder / "run.yaml").write_text(RUN.format(id=rid, i=i, day=1 + i % 28, nmax=1 + i % 8))
        (folder / "manifest.yaml").write_text("schema: benchledger.manifest/1\nhost: {name: bench, cores: 2}\n")
        rows = ["trial,concurrency,tokens_per_second,ttft_p50_s,draft_accepted"]
        for trial in range(1, 6):
            for conc in (1, 4, 16):
                rows.append(
                    f"{trial},{conc},{rng.gauss(30 * conc**0.5, 1):.3f},"
                    f"{rng.gauss(0.05 * conc, 0.005):.4f},{rng.randint(900, 1100)}"
                )
        (folder / "results.csv").write_text("\n".join(rows) + "\n")
    ids = sorted(p.name for p in (root / "runs").iterdir())
    claims = [
        {
            "id": f"claim-{i:03d}",
            "date": "2026-09-28",
            "statement": f"Run {b} beats run {a} at concurrency 4.",
            "metric": "tokens_per_second",
            "baseline": a,
            "candidate": b,
            "at": {"concurrency": 4},
            "varies": ["setup.draft_n_max"],
        }
        for i, (a, b) in enumerate(zip(ids[0::10], ids[5::10], strict=False))
    ]
    meta = yaml.safe_dump({"title": "Scale", "date": "2026-09-28", "claims": claims}, sort_keys=False)
    (root / "site_src" / "reports").mkdir()
    (root / "site_src" / "reports" / "scale.md").write_text(f"---\n{meta}---\n\n# Scale\n\n{sweep_lines(ids)}")


def sweep_lines(ids: list[str]) -> str:
    """One sweep chart per ten claims (10 at 1,000 runs), each of four runs, as a report asks
    for one: `<!-- sweep METRIC: RUN, RUN -->` on a line of its own."""
    picks = [ids[k : k + 4] for k in range(0, len(ids), max(4, len(ids) // 10))][:10]
    return "".join(f"<!-- sweep tokens_per_second: {', '.join(runs)} -->\n\n" for runs in picks if len(runs) >= 2)


@dataclass(frozen=True)
class Timing:
    """One command's wall seconds, CPU seconds (user, system) and peak resident memory (MB)."""

    wall: float
    user: float
    system: float
    peak_mb: float

    @property
    def cpu(self) -> float:
        return self.user + self.system


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Timing:
    """Run one command to its end (it must succeed) and measure it with wait4."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {child.returncode}")
    return Timing(time.perf_counter() - start, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024)  # KiB


@dataclass(frozen=True)
class Ratios:
    """Median ratios of benchledger over plain MkDocs across paired builds."""

    wall: float
    cpu: float
    user: float

    @classmethod
    def of(cls, pairs: list[tuple[Timing, Timing]]) -> Ratios:
        def median(ratio: Callable[[Timing, Timing], float]) -> float:
            return statistics.median(ratio(ours, plain) for ours, plain in pairs)

        wall = median(lambda a, b: a.wall / b.wall)
        return cls(wall, median(lambda a, b: a.cpu / b.cpu), median(lambda a, b: a.user / b.user))

    def __str__(self) -> str:
        return f"wall {self.wall:.2f}, CPU {self.cpu:.2f}, user {self.user:.2f}"


def site_stats(site: Path) -> tuple[int, int, str]:
    files = [p for p in site.rglob("*") if p.is_file()]
    pages = [p for p in files if p.suffix == ".html"]
    largest = max(pages, key=lambda p: p.stat().st_size)
    return sum(p.stat().st_size for p in files), largest.stat().st_size, str(largest.relative_to(site))


def page_weight(site: Path, run_id: str) -> float:
    folder = site / "runs" / run_id
    files = [folder / "index.html", *(folder / "charts").glob("*.json")]
    return sum(p.stat().st_size for p in files) / 1e3


SECOND = """\
import sys, time
start = time.perf_counter()
from generator.analysis.comparison import Settings
from generator.site.cache import BuildCache
from generator.site.pipeline import generate_site
imported = time.perf_counter()
from pathlib import Path
root = Path(sys.argv[1])
generated = generate_site(root, root / "site_src", Settings(), BuildCache.for_publication(root))
print(time.perf_counter() - imported, imported - start, len(generated.ledger.runs) - generated.reused)
"""


def second_build(builds: Builds) -> tuple[float, float, int, float]:
    """After one run changed: a new process's regeneration (with the builds' cache), its
    imports, the runs it rendered, and a plain MkDocs build of the same pages."""
    root = builds.root
    change_one_run(root)
    done = subprocess.run(
        [sys.executable, "-c", SECOND, str(root)], capture_output=True, text=True, check=True, env=builds.env
    )
    regenerate, imports, rendered = done.stdout.split()
    plain = builds.plain().wall
    return float(regenerate), float(imports), int(rendered), plain


def change_one_run(root: Path, digit: str = "1") -> None:
    run = sorted((root / "runs").iterdir())[len(list((root / "runs").iterdir())) // 2]
    results = run / "results.csv"
    results.write_text(results.read_text().replace("\n1,1,", f"\n1,1,{digit}", 1))


def rebuild(root: Path) -> tuple[float, float, int]:
    """In one process, as serve does: build, change one run, regenerate, dirty-rebuild."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from generator.analysis.comparison import Settings
    from generator.site.cache import BuildCache
    from generator.site.pipeline import generate_site

    cache = BuildCache()  # owned by the caller, as the plugin owns it under serve
    (root / "mkdocs.yml").write_text(MKDOCS.format(plugin=""))
    generate_site(root, root / "site_src", Settings(), cache)
    build(load_config(str(root / "mkdocs.yml")))
    change_one_run(root, "2")
    start = time.perf_counter()
    report = generate_site(root, root / "site_src", Settings(), cache).written
    regenerate = time.perf_counter() - start
    start = time.perf_counter()
    build(load_config(str(root / "mkdocs.yml")), dirty=True)
    return regenerate, time.perf_counter() - start, len(report.written)


class Builds:
    """`benchledger build` and plain `mkdocs build` of one publication, each in a new process;
    `cache`, the build cache folder the first uses (a fresh one makes a cold build)."""

    def __init__(self, root: Path, cache: str) -> None:
        self.root, self.env = root, {**os.environ, "BENCHLEDGER_BUILD_CACHE": cache}

    def ours(self) -> Timing:
        (self.root / "mkdocs.yml").write_text(MKDOCS.format(plugin=", benchledger"))
        return timed([sys.executable, "-m", "generator.cli", "build", "--repo", str(self.root)], self.root, self.env)

    def plain(self) -> Timing:
        """Plain MkDocs of the same pages, with the same extensions, into a site folder of its own
        (site-plain/): each builder keeps its own output between builds, as a user's has it. Built
        into benchledger's, it would leave copies where benchledger keeps links, and the next
        benchledger build would pay to undo them, which no user's build does."""
        (self.root / "mkdocs.yml").write_text(MKDOCS.format(plugin=""))
        command = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(self.root / "mkdocs.yml")]
        return timed([*command, "-d", str(self.root / "site-plain")], self.root)


def first_builds(runs: int, tmp: Path, repeat: int) -> list[tuple[Builds, tuple[Timing, Timing]]]:
    """`repeat` first builds, each of a new copy of the publication with an empty build cache
    of its own (both inside `tmp`), each followed by plain MkDocs of the pages it generated."""
    made = []
    for k in range(repeat):
        root = tmp / f"pub-{runs}" / str(k)
        make_publication(root, runs)
        builds = Builds(root, str(tmp / f"pub-{runs}" / f"cache-{k}"))
        made.append((builds, (builds.ours(), builds.plain())))
    return made


def measure(runs: int, tmp: Path, repeat: int) -> dict[str, object]:
    """Each `benchledger build` in a new process, against plain MkDocs of the same pages."""
    made = first_builds(runs, tmp, repeat)
    builds, first_pair = made[0]  # the later builds are of the first copy, with its cache
    root, ours, plain, first = builds.root, builds.ours, builds.plain, first_pair[0]
    size, largest, name = site_stats(root / "site")
    weight = page_weight(root / "site", sorted(p.name for p in (root / "runs").iterdir())[0])
    again = [(ours(), plain()) for _ in range(repeat)]
    changed = []
    for k in range(repeat):
        change_one_run(root, str(k + 1))
        changed.append((ours(), plain()))
    return {
        "runs": runs,
        "benchledger": first.wall,
        "mkdocs": first_pair[1].wall,
        "ratio": Ratios.of([pair for _, pair in made]),
        "again": Ratios.of(again),
        "changed": Ratios.of(changed),
        "per_run_ms": 1000 * first.wall / runs,
        "peak_mb": first.peak_mb,
        "site_mb": size / 1e6,
        "largest_kb": largest / 1e3,
        "largest": name,
        "run_page_kb": weight,
        "root": root,
        "builds": builds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeat", type=int, default=3, help="paired builds per ratio (first, again, changed)")
    args = parser.parse_args()
    # As an installed package has it: Python's bytecode written (PYTHONDONTWRITEBYTECODE=1 would
    # otherwise have every build compile benchledger's sources, a third of a second, which a
    # user's first import does once), as the site-packages MkDocs runs from already have.
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "generator"), quiet=1)
    print(
        f"{'runs':>6} {'benchledger s':>14} {'mkdocs s':>9} {'ratio':>6} {'again':>6} {'changed':>7} {'ms/run':>7} "
        f"{'peak MB':>8} {'site MB':>8} {'run page KB':>11} {'largest KB':>10}  largest page"
    )
    with tempfile.TemporaryDirectory() as tmp:
        last: dict[str, object] = {}
        for runs in (int(s) for s in args.sizes.split(",")):
            r = last = measure(runs, Path(tmp), args.repeat)
            ratio, again, changed = r["ratio"], r["again"], r["changed"]
            assert isinstance(ratio, Ratios) and isinstance(again, Ratios) and isinstance(changed, Ratios)
            print(
                f"{r['runs']:>6} {r['benchledger']:>14.2f} {r['mkdocs']:>9.2f} {ratio.wall:>6.2f} {again.wall:>6.2f} "
                f"{changed.wall:>7.2f} {r['per_run_ms']:>7.1f} {r['peak_mb']:>8.0f} {r['site_mb']:>8.1f} "
                f"{r['run_page_kb']:>11.1f} {r['largest_kb']:>10.1f}"
                f"  {r['largest']}",
                flush=True,
            )
            print(f"{'':>6} medians of {args.repeat}: first build: {ratio}; again: {again}; changed: {changed}")
        regenerate, imports, rendered, plain = second_build(last["builds"])  # type: ignore[arg-type]
        print(
            f"\nsecond build after one run changed ({last['runs']} runs, a new process): benchledger "
            f"regeneration {regenerate:.2f} s ({rendered} run rendered; start-up {imports:.2f} s), "
            f"plain MkDocs build of the same pages {plain:.2f} s"
        )
        regenerate, dirty, written = rebuild(last["root"])  # type: ignore[arg-type]
        print(
            f"after one run changed ({last['runs']} runs, in one process as serve does): benchledger "
            f"regeneration {regenerate:.2f} s ({written} files rewritten), MkDocs dirty rebuild {dirty:.2f} s"
        )


if __name__ == "__main__":
    main()
