"""How far a faithful rerun drifts on this machine: one run against the llama.cpp test bed,
then the same server rerun again and again, each rerun judged as `benchledger rerun` judges it.

Within one run, trials share the machine's state; minutes apart they may not. This prints, per
rerun, tokens_per_second's ratio rerun / original with its interval and its status at the
default margin and at `--margin`, then the spread of the ratios: the drift a verifier on this
machine should pass to `benchledger rerun --margin`. On a shared 2-core VM: ratios from 0.81x
to 1.44x here, 0.69x once in CI, each with a tight interval.

    python bench/engines/llama_cpp.py build         # once, about 6 minutes on 2 cores
    python bench/rerun_drift.py --reruns 5 --margin 60
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent / "engines"))
import llama_cpp as engine

from generator.analysis.receipts import kept_results
from generator.analysis.reproduction import Figure, figures
from generator.cli import app
from generator.ledger.load import load

RUN_ID = "2026-12-01-drift"


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    if result.exit_code != 0:
        raise SystemExit(f"benchledger {' '.join(args[:2])} failed:\n{result.output}")
    return result.output


def throughput(pub: Path, margin: float) -> tuple[Figure, Figure]:
    """Rerun once; tokens_per_second judged by the default rule and at `margin`, both from the
    same kept trials (the receipt is then removed, so the next rerun is judged alone)."""
    cli("rerun", RUN_ID, "--by", "Drift", "--repo", str(pub), "--date", "2026-12-01", "--yes")
    (receipt,) = (pub / "runs" / RUN_ID / "receipts").glob("*.yaml")
    run = load(pub).runs[RUN_ID]
    kept = kept_results(run, f"receipts/{receipt.stem}/results.csv")
    default, wide = (next(f for f in figures(run, kept, m) if f.metric == "tokens_per_second") for m in (None, margin))
    receipt.unlink()
    shutil.rmtree(receipt.with_suffix(""))
    return default, wide


def percent(text: str) -> float:
    return float(text.removesuffix("%")) / 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reruns", type=int, default=5, help="reruns after the run (each about 10 s)")
    parser.add_argument("--margin", type=percent, default=0.6, help="a verifier's margin to judge each rerun at too")
    parser.add_argument("--threads", type=int, default=2, help="llama-server threads")
    args = parser.parse_args()
    bin_dir = engine.cache_root() / "build" / "bin"
    if not (bin_dir / "llama-server").is_file():
        raise SystemExit("llama-server not built: run `python bench/engines/llama_cpp.py build` first")
    target, _ = engine.models(engine.cache_root() / "models", 0.02)
    with tempfile.TemporaryDirectory() as folder:
        pub = Path(folder) / "pub"
        cli("init", str(pub))
        with engine.LlamaServer(bin_dir, target, threads=args.threads) as server:
            run = ["run", "openai", "--base-url", server.base_url, "--concurrency", "2", "--trials", "5"]
            cli(*run, "--max-tokens", "128", "--requests", "16", "--id", RUN_ID, "--out", str(pub / "runs"))
            print(f"{'rerun':>5}  {'ratio':>6}  {'interval':>17}  {'default':>9}  at ±{args.margin:.0%}")
            ratios = []
            for i in range(1, args.reruns + 1):
                default, wide = throughput(pub, args.margin)
                assert default.ratio is not None and default.low is not None and default.high is not None
                ratios.append(default.ratio)
                interval = f"[{default.low:.3f}, {default.high:.3f}]"
                print(f"{i:>5}  {default.ratio:>6.3f}  {interval}  {default.status:>9}  {wide.status}", flush=True)
    print(f"tokens_per_second ratios from {min(ratios):.3f} to {max(ratios):.3f} over {len(ratios)} reruns")


if __name__ == "__main__":
    main()
