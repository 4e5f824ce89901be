"""Measure the test-bed attribution grid and commit it as runs: drafting (no draft, or
n_max 2 with the noisy draft) crossed with llama-server's thread count (1 or 2), every
cell at concurrency 1 and 4, 5 trials after 1 warmup, all on the GGML_NATIVE=OFF build,
measured one after the other in one session. The report site_src/reports/who-earned-it.md
judges a claim that credits drafting for a comparison that also changed the threads.

    python bench/attribution_grid.py [--out runs] [--force]
"""

from __future__ import annotations

from play1_sweep import arguments, measure

DATE = "2026-11-30"
CELLS = [  # (id suffix, n_max or None for no draft, threads)
    ("nodraft-1t", None, 1),
    ("nmax2-1t", 2, 1),
    ("nodraft-2t", None, 2),
    ("nmax2-2t", 2, 2),
]


def main() -> None:
    args = arguments(__doc__ or "")
    for suffix, n_max, threads in CELLS:
        run_id = f"{DATE}-grid-{suffix}"
        measure(run_id, n_max, threads, False, args.out, args.trials, args.force, benchmark="testbed-grid")


if __name__ == "__main__":
    main()
