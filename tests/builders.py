"""Builders of the fixture publications several test modules share, so that no test module
imports another: the two-run claim publication (claims, verdicts, golden pages), the 2x2
attribution grid (attribution, links, browser), `check` through the CLI, and the example
publication built."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml
from typer.testing import CliRunner

from generator.cli import app
from helpers import MANIFEST, RESULTS, measured_run, publication, run_yaml, write_tree

# --- a claim between two runs ----------------------------------------------------

A, B = "2026-09-01-full-vocab", "2026-09-01-shortlist"
SLOWER = RESULTS.replace("104.1", "99.1").replace("103.5", "98.2").replace("104.8", "98.9").replace("102.9", "97.5")


def report(claims: list[dict], limits: list[str] | None = None, title: str = "A report") -> str:
    meta = {"title": title, "date": "2026-09-06", "claims": claims, "limits": limits or []}
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n# " + title + "\n\nProse.\n"


def claim(**fields: object) -> dict:
    base = {
        "id": "shortlist-c8",
        "date": "2026-09-02",
        "statement": "The shortlist is faster.",
        "metric": "tokens_per_second",
        "baseline": A,
        "candidate": B,
        "at": {"concurrency": 8},
        "varies": ["setup.draft_vocab"],
    }
    base.update(fields)
    return base


def repo_with(
    tmp_path: Path,
    claims: list[dict],
    candidate_results: str = SLOWER,
    candidate_manifest: str = MANIFEST,
    **run_fields: object,
) -> Path:
    b = measured_run(B, setup={"draft_vocab": 16000, "head_kernel": "stock"}, **run_fields)
    b[f"runs/{B}/results.csv"] = candidate_results
    b[f"runs/{B}/manifest.yaml"] = candidate_manifest
    files = publication(
        measured_run(A, setup={"draft_vocab": 248320, "head_kernel": "stock"}),
        b,
        extra={"site_src/reports/seed.md": report(claims)},
    )
    return write_tree(tmp_path / "pub", files)


# --- a 2x2 attribution grid ------------------------------------------------------

METRICS = {"tokens_per_second": {"unit": "tok/s", "better": "higher"}}


def cell(run_id: str, setup: dict[str, object], values: list[float], benchmark: str = "grid") -> dict[str, str]:
    rows = "".join(f"{i},1,{v}\n" for i, v in enumerate(values, start=1))
    meta = run_yaml(run_id, setup=setup, metrics=METRICS, rates={}, benchmark=benchmark)
    return {
        f"runs/{run_id}/run.yaml": meta,
        f"runs/{run_id}/manifest.yaml": MANIFEST,
        f"runs/{run_id}/results.csv": "trial,concurrency,tokens_per_second\n" + rows,
    }


def grid_report(attribution: dict[str, object], claims: list[dict[str, object]] | None = None) -> dict[str, str]:
    front = {"title": "Grid", "claims": claims or [], "attributions": [attribution]}
    return {"site_src/reports/grid.md": "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n# Grid\n"}


def grid_attribution(runs: list[str], factors: dict[str, str], **more: object) -> dict[str, object]:
    found: dict[str, object] = {"id": "the-grid", "statement": "Who earned it?", "metric": "tokens_per_second"}
    return found | {"at": {"concurrency": 1}, "factors": factors, "runs": runs} | more


CELLS_2X2 = {  # (a, b) -> trials
    ("a0", "b0"): [100.0, 102.0, 98.0, 101.0],
    ("a1", "b0"): [120.0, 118.0, 122.0, 119.0],
    ("a0", "b1"): [110.0, 108.0, 112.0, 109.0],
    ("a1", "b1"): [150.0, 148.0, 152.0, 149.0],
}


def four_cells() -> dict[str, dict[str, str]]:
    return {f"2026-09-01-{a}-{b}": cell(f"2026-09-01-{a}-{b}", {"a": a, "b": b}, v) for (a, b), v in CELLS_2X2.items()}


# --- the CLI and the example publication -----------------------------------------


def check(root: Path) -> tuple[int, str]:
    """`benchledger check` through the CLI: its exit code and output, never a traceback."""
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.output


ROOT = Path(__file__).parents[1]
PUBLICATION = ("mkdocs.yml", "site_src", "runs", "allowed_signers")


def copy_example(dest: Path) -> Path:
    """The repository's own publication (its committed files only) copied to `dest`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *PUBLICATION], cwd=ROOT, capture_output=True, check=False
    ).stdout
    names = [n for n in listed.decode().split("\0") if n]
    if not names:  # not a git checkout (an unpacked sdist): everything there is the publication
        names = [str(p.relative_to(ROOT)) for top in PUBLICATION for p in (ROOT / top).rglob("*") if p.is_file()]
        names += [top for top in PUBLICATION if (ROOT / top).is_file()]
    for name in names:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, target)
    return dest


def build_example(dest: Path, *args: str) -> Path:
    """The example publication built with `benchledger build --strict`: its site folder."""
    root = copy_example(dest)
    result = CliRunner().invoke(app, ["build", "--strict", "--repo", str(root), *args])
    assert result.exit_code == 0, result.output
    return root / "site"
