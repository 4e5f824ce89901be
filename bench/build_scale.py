"""How build time grows with the number of runs, and what benchledger adds over MkDocs.

Creates synthetic publications of 10, 100 and 1,000 runs (5 trials x 3
conditions x 3 metrics) in a temporary folder and prints, in one run:

- `benchledger build` time (check + generate + MkDocs build),
- plain `mkdocs build` time of the same already-generated pages (plugin off),
- their ratio (target <= 1.5), time per run (flat means linear growth),
- the site size and the largest page.

    python bench/build_scale.py [--sizes 10,100,1000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MKDOCS = """\
site_name: scale
docs_dir: site_src
theme: {{name: material, font: false}}
plugins: [search{plugin}]
extra_css: [assets/benchledger/benchledger.css]
extra_javascript: [assets/benchledger/vega.js, assets/benchledger/charts.js]
nav: [{{Home: index.md}}, {{Runs: runs/index.md}}]
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


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def site_stats(site: Path) -> tuple[int, int, str]:
    files = [p for p in site.rglob("*") if p.is_file()]
    pages = [p for p in files if p.suffix == ".html"]
    largest = max(pages, key=lambda p: p.stat().st_size)
    return sum(p.stat().st_size for p in files), largest.stat().st_size, str(largest.relative_to(site))


def measure(runs: int, tmp: Path) -> dict[str, object]:
    root = tmp / f"pub-{runs}"
    make_publication(root, runs)
    (root / "mkdocs.yml").write_text(MKDOCS.format(plugin=", benchledger"))
    full = timed([sys.executable, "-m", "generator.cli", "build", "--repo", str(root)], root)
    (root / "mkdocs.yml").write_text(MKDOCS.format(plugin=""))  # same pages, plugin off
    plain = timed([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(root / "mkdocs.yml")], root)
    size, largest, name = site_stats(root / "site")
    return {
        "runs": runs,
        "benchledger": full,
        "mkdocs": plain,
        "ratio": full / plain,
        "per_run_ms": 1000 * full / runs,
        "site_mb": size / 1e6,
        "largest_kb": largest / 1e3,
        "largest": name,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000")
    args = parser.parse_args()
    print(
        f"{'runs':>6} {'benchledger s':>14} {'mkdocs s':>9} {'ratio':>6} {'ms/run':>7} "
        f"{'site MB':>8} {'largest KB':>10}  largest page"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for runs in (int(s) for s in args.sizes.split(",")):
            r = measure(runs, Path(tmp))
            print(
                f"{r['runs']:>6} {r['benchledger']:>14.2f} {r['mkdocs']:>9.2f} {r['ratio']:>6.2f} "
                f"{r['per_run_ms']:>7.1f} {r['site_mb']:>8.1f} {r['largest_kb']:>10.1f}  {r['largest']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
