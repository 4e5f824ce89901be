"""Re-measure the Play-1 sweep on the CPU test bed and commit it as runs.

A no-draft control and --spec-draft-n-max 2, 3, 4 and 12 with one fixed noisy
draft (noise 0.02: about half the drafted tokens accepted), at concurrency 1
and 4, 5 trials each after 1 warmup trial, all with 2 threads. Plus, for the
seed story re-enacted, the no-draft control with 1 thread: a comparison that
differs in a second factor besides drafting: n_max 2 on a GGML_NATIVE=ON build,
whose CPU kernels differ from the GGML_NATIVE=OFF build of every other run.

    python bench/play1_sweep.py [--out runs] [--force]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent / "engines"))
import llama_cpp as engine

NOISE = 0.02
DATE = "2026-11-29"
CONFIGS = [  # (id suffix, n_max or None for no draft, threads, GGML_NATIVE build)
    ("nodraft", None, 2, False),
    ("nmax2", 2, 2, False),
    ("nmax3", 3, 2, False),
    ("nmax4", 4, 2, False),
    ("nmax12", 12, 2, False),
    ("nmax2-native", 2, 2, True),
]


def arguments(doc: str) -> argparse.Namespace:
    """--out, --force and --trials, shared by the test-bed measuring scripts."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", default="runs")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--trials", type=int, default=5)
    return parser.parse_args()


def main() -> None:
    args = arguments(__doc__ or "")
    for suffix, n_max, threads, native in CONFIGS:
        measure(f"{DATE}-testbed-{suffix}", n_max, threads, native, args.out, args.trials, args.force)


def measure(
    run_id: str,
    n_max: int | None,
    threads: int,
    native: bool,
    out: str,
    trials: int,
    force: bool,
    benchmark: str = "testbed-spec-decode",
) -> None:
    """One test-bed configuration measured by `benchledger run openai` into out/run_id."""
    bin_dir = engine.build(native=native)
    if (Path(out) / run_id).exists() and not force:
        print(f"{run_id}: exists, skipped (--force re-measures it)")
        return
    target, draft = engine.models(engine.cache_root() / "models", None if n_max is None else NOISE)
    extra = {
        "build": engine.build_flags(native),
        "engine": {
            "threads": threads,
            "parallel_slots": 4,
            "ctx": 2048,
            "spec_type": "draft-simple" if n_max else "none",
            "spec_draft_n_max": n_max,
        },
        "model": {
            "target": "benchledger tiny llama (random weights, seed 0, 64-dim, 2 blocks, f32)",
            "draft": f"target weights + noise {NOISE} (seed 1)" if n_max else None,
            "draft_noise": NOISE if n_max else None,
        },
    }
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        yaml.safe_dump(extra, fh)
    with engine.LlamaServer(bin_dir, target, draft, n_max=n_max or 0, threads=threads) as server:
        plural = "s" if threads > 1 else ""
        title = (
            f"CPU test bed, draft n_max {n_max}, {threads} thread{plural}"
            if n_max
            else f"CPU test bed, no draft, {threads} thread{plural}"
        )
        setup = [f"draft={'noise-' + str(NOISE) if n_max else 'none'}", f"draft_n_max={n_max or 0}"]
        command = [
            sys.executable,
            "-m",
            "generator.cli",
            "run",
            "openai",
            "--base-url",
            server.base_url,
            "--concurrency",
            "1,4",
            "--trials",
            str(trials),
            "--warmup",
            "1",
            "--max-tokens",
            "128",
            "--manifest-extra",
            fh.name,
            "--title",
            title,
            "--id",
            run_id,
            "--out",
            out,
            "--benchmark",
            benchmark,
            *[a for s in setup for a in ("--setup", s)],
        ]
        if force:
            command.append("--force")
        subprocess.run(command, check=True)
    Path(fh.name).unlink()


if __name__ == "__main__":
    main()
