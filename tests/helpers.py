"""Fixture publications built from {path: content} dicts (mkdocs' @tempdir style)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MKDOCS_YML = """\
site_name: fixture
docs_dir: site_src
theme:
  name: material
  font: false
plugins:
  - search
  - benchledger
nav:
  - Home: index.md
  - Runs: runs/index.md
"""


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def run_yaml(run_id: str, **fields: object) -> str:
    data: dict[str, object] = {
        "schema": "benchledger.run/1",
        "id": run_id,
        "title": f"Run {run_id}",
        "date": "2026-09-01",
        "benchmark": "spec-decode-throughput",
        "setup": {"draft_vocab": 16000, "head_kernel": "stock"},
        "conditions": ["concurrency"],
        "metrics": {
            "tokens_per_second": {"unit": "tok/s", "better": "higher"},
            "draft_tokens": {"unit": "tokens"},
            "draft_accepted": {"unit": "tokens"},
        },
        "rates": {"acceptance": {"numerator": "draft_accepted", "denominator": "draft_tokens"}},
        "warmup_trials": 1,
        "source": {"kind": "measured"},
    }
    data.update(fields)
    return yaml.safe_dump(data, sort_keys=False)


MANIFEST = """\
schema: benchledger.manifest/1
captured: {at: 2026-09-01T10:12:00Z, by: benchledger 0.1.0, method: auto}
host: {name: spark-01, cores: 20, memory_gb: 128}
accelerators:
  - {name: NVIDIA GB10, driver: "580.95", cuda: "13.0"}
software: {engine: llama.cpp, engine_version: b6520}
kernels: {draft_head_gemm: stock}
"""

RESULTS = """\
trial,concurrency,tokens_per_second,draft_tokens,draft_accepted
1,1,31.2,2048,1490
1,8,104.1,16384,11790
2,1,30.8,2040,1502
2,8,103.5,16300,11800
3,1,31.0,2050,1480
3,8,104.8,16390,11750
4,1,30.9,2046,1495
4,8,102.9,16310,11820
5,1,31.4,2052,1488
5,8,104.0,16350,11790
"""

REQUESTS = """\
trial,concurrency,request,start_s,ttft_s,latency_s,output_tokens,draft_tokens,draft_accepted,error
1,1,1,0.0,0.05,4.1,128,200,140,
1,1,2,4.1,0.06,4.0,128,205,142,
1,8,1,0.0,0.2,5.0,128,210,150,
1,8,2,0.0,,,,,,HTTP 500
"""


def measured_run(run_id: str = "2026-09-01-measured", **fields: object) -> dict[str, str]:
    base = f"runs/{run_id}"
    return {
        f"{base}/run.yaml": run_yaml(run_id, **fields),
        f"{base}/manifest.yaml": MANIFEST,
        f"{base}/results.csv": RESULTS,
        f"{base}/requests.csv": REQUESTS,
    }


def publication(*runs: dict[str, str], extra: dict[str, str] | None = None) -> dict[str, str]:
    files: dict[str, str] = {
        "mkdocs.yml": MKDOCS_YML,
        "site_src/index.md": "# Fixture\n\nSee [runs](runs/index.md).\n",
    }
    for run in runs:
        files.update(run)
    files.update(extra or {})
    return files


def generate(root: Path) -> dict[str, bytes]:
    """Every generated file of the publication at `root`, rendered in memory (nothing written)."""
    from generator.analysis.audit import audit
    from generator.analysis.claims import evaluate_publication
    from generator.analysis.comparison import Settings
    from generator.analysis.receipts import reproductions
    from generator.render.sweeps import report_sweeps
    from generator.site.cache import BuildCache
    from generator.site.pipeline import Judged, render

    checked = audit(root, stale_is_error=False)
    states = {run_id: r.state for run_id, r in checked.receipts.items()}
    reproduced = reproductions(checked.receipts)
    evaluations, grids = evaluate_publication(checked.ledger, Settings(), states, reproduced)
    sweeps = report_sweeps(checked.ledger, Settings().confidence)
    return render(Judged(checked.ledger, checked.receipts, evaluations, grids, sweeps), Settings(), BuildCache())


def import_into(tmp_path: Path, tool: str, *args: str) -> tuple[int, str, Path]:
    """`benchledger import TOOL ARGS` into a fresh publication under tmp_path."""
    from typer.testing import CliRunner

    from generator.cli import app

    root = tmp_path / "pub"
    if not root.exists():
        write_tree(root, {"mkdocs.yml": MKDOCS_YML, "site_src/index.md": "# Home\n"})
    result = CliRunner().invoke(app, ["import", tool, *args, "--out", str(root / "runs")])
    assert "Traceback" not in result.output
    return result.exit_code, result.output, root


def csv_rows(path: Path) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(path.read_text())))


def cli(*args: str) -> tuple[int, str]:
    """`benchledger ARGS` as a user runs it: its exit code and output, which never holds a traceback."""
    from typer.testing import CliRunner

    from generator.cli import app

    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def unreachable_openai(**more: object) -> Any:
    """`run openai`'s options for one small trial against a port nothing listens on (127.0.0.1:9):
    whatever is refused before the first request is refused with these."""
    from generator.runner.asked import OpenAIOptions

    options: dict[str, Any] = {
        "base_url": "http://127.0.0.1:9/v1",
        "model": None,
        "endpoint": "chat",
        "prompts": None,
        "max_tokens": 8,
        "temperature": 0.0,
        "concurrency": [1],
        "trials": 1,
        "warmup": 0,
        "requests": 1,
        "timeout": 2.0,
    }
    return OpenAIOptions(**(options | more))  # type: ignore[arg-type]


class CommandClock:
    """A fake clock for `benchledger run command`: execution k (warmups included) lasts
    `durations[k % len(durations)] * scale` seconds, however busy the machine is. The command
    still runs and its printed figures are parsed; only its wall time comes from this clock,
    so a test's verdict on wall_seconds never depends on the machine's speed."""

    def __init__(self, monkeypatch: Any, durations: tuple[float, ...]) -> None:
        import dataclasses

        from generator.runner import command

        real, self.scale, self.executions = command.execute, 1.0, 0

        def execute(argv: list[str], found: Any, timeout: float | None) -> Any:
            done = real(argv, found, timeout)
            lasted = durations[self.executions % len(durations)] * self.scale
            self.executions += 1
            return dataclasses.replace(done, wall_seconds=lasted)

        monkeypatch.setattr(command, "execute", execute)
