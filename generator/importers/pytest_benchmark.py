"""pytest-benchmark `--benchmark-json` as a run.

Each benchmark is a condition: its parameters when every benchmark is one test
parametrized the same way (`size=1000`, `size=10000`), else its name. With
`--benchmark-save-data` the rounds (`stats.data`, seconds per iteration) become trials;
they repeat inside one pytest process, so the run says `trial_unit: repetition`. Without
them the export is a summary (mean, stddev, rounds): a reported run with published
summaries whose n counts rounds inside one process (`trial_unit: repetition`, with its
caveat); several summary exports of the same benchmarks are one pytest process each, and
their means become trials (`trial_unit: process`). `machine_info` (every field) and
`commit_info` go to the manifest, the export's `datetime` (with its zone) to `captured.at`, so
runs of one day keep their order in a history; everything else stays in the original file under raw/.
Shapes follow pytest-benchmark's own exports (tests/fixtures/pytest-benchmark/).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.models import NAME_PATTERN
from .common import Imported, load_json, located, positive

METRICS = {"seconds": {"unit": "s", "better": "lower"}}


def parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    """Read one or more pytest-benchmark JSON exports into one run (errors at the lines they cite)."""
    return located(files, _parse)


def _parse(files: Sequence[tuple[str, bytes]]) -> Imported:
    benchmarks: list[tuple[str, str, dict[str, Any]]] = []
    machine: dict[str, Any] = {}
    commit: dict[str, Any] = {}
    days = []
    moments: list[dt.datetime] = []
    for name, data in files:
        found = load_json(name, data, "a pytest-benchmark export")
        items = found.get("benchmarks") if isinstance(found, dict) else None
        if not isinstance(items, list) or not items:
            raise BenchledgerError(
                Problem(file=name, field="$.benchmarks", message="expected the list --benchmark-json writes")
            )
        benchmarks += [
            (name, f"$.benchmarks[{i}]", _benchmark(name, f"$.benchmarks[{i}]", b)) for i, b in enumerate(items)
        ]
        machine = machine or (found.get("machine_info") if isinstance(found.get("machine_info"), dict) else {})
        commit = commit or (found.get("commit_info") if isinstance(found.get("commit_info"), dict) else {})
        if isinstance(found.get("datetime"), str):
            with contextlib.suppress(ValueError):
                days.append(dt.date.fromisoformat(found["datetime"][:10]))
            with contextlib.suppress(ValueError):
                moments.append(dt.datetime.fromisoformat(found["datetime"]))
    per_trial = all("data" in b["stats"] for _, _, b in benchmarks)
    manifest = _manifest(machine, commit)
    day = min(days, default=None)
    at = _earliest(moments)
    if not per_trial and _one_process_per_file(benchmarks, len(files)):
        return replace(_processes(benchmarks, manifest, day, len(files)), captured_at=at)
    conditions = _conditions(benchmarks)
    rows = [row for _, _, b in benchmarks for row in _rows(b, conditions, per_trial)]
    notes = []
    if not per_trial:
        rounds = ", ".join(f"{b['stats']['rounds']:,}" for _, _, b in benchmarks[:4])
        notes.append(
            f"The export holds each benchmark's mean, SD and rounds ({rounds}), not the rounds themselves. The "
            "rounds ran inside one pytest process, so n counts repetitions, not independent runs "
            "(trial_unit: repetition): intervals may be too narrow. Export each of several pytest runs and "
            "import them together to make each run a trial."
        )
    return Imported(
        tool="pytest-benchmark",
        format="json",
        conditions=conditions,
        metrics=dict(METRICS),
        rows=rows,
        manifest=manifest,
        date=day,
        trial_unit="repetition",
        per_trial=per_trial,
        notes=notes,
        captured_at=at,
    )


def _earliest(moments: list[dt.datetime]) -> dt.datetime | None:
    """The first export's `datetime` (when pytest-benchmark recorded machine_info): the manifest's
    captured.at, which orders runs of one day in a history. Kept only when every one says its zone."""
    if not moments or any(m.tzinfo is None for m in moments):
        return None
    return min(moments)


def _one_process_per_file(benchmarks: list[tuple[str, str, dict[str, Any]]], files: int) -> bool:
    """Several summary exports that each hold the same benchmarks: one pytest process each."""
    names: dict[str, list[str]] = {}
    for file, _, b in benchmarks:
        names.setdefault(file, []).append(b["name"])
    found = {tuple(sorted(n)) for n in names.values()}
    return files > 1 and len(names) == files and len(found) == 1


def _processes(
    benchmarks: list[tuple[str, str, dict[str, Any]]], manifest: dict[str, Any], day: dt.date | None, files: int
) -> Imported:
    """Each export's means are one trial: the processes are the independent repetitions."""
    order = list(dict.fromkeys(file for file, _, _ in benchmarks))
    conditions = _conditions([found for found in benchmarks if found[0] == order[0]])
    rows = []
    for file, _, b in benchmarks:
        at = {c: (b["name"] if c == "benchmark" else str(b["params"][c])) for c in conditions}
        rows.append({"trial": order.index(file) + 1, **at, "seconds": b["stats"]["mean"]})
    notes = [
        f"Each of the {files} exports is one pytest process: its mean is one trial (trial_unit: process). "
        "The rounds inside each process and their SD stay in the original files under raw/."
    ]
    return Imported(
        tool="pytest-benchmark",
        format="json",
        conditions=conditions,
        metrics=dict(METRICS),
        rows=rows,
        manifest=manifest,
        date=day,
        trial_unit="process",
        per_trial=True,
        notes=notes,
    )


def _benchmark(name: str, path: str, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("stats"), dict):
        raise BenchledgerError(Problem(file=name, field=path, message="expected a benchmark with a name and stats"))
    stats = item["stats"]
    if "data" in stats:
        data = stats["data"]
        if not isinstance(data, list) or not data or not all(positive(v) for v in data):
            raise BenchledgerError(
                Problem(file=name, field=f"{path}.stats.data", message="expected one positive time per round")
            )
    for key in ("mean", "stddev"):
        if not (positive(stats.get(key)) or (key == "stddev" and stats.get(key) == 0)):
            raise BenchledgerError(
                Problem(file=name, field=f"{path}.stats.{key}", message="expected a number of seconds")
            )
    rounds = stats.get("rounds")
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        raise BenchledgerError(
            Problem(file=name, field=f"{path}.stats.rounds", message="expected the number of rounds")
        )
    params = item.get("params") or {}
    if not isinstance(params, dict):
        raise BenchledgerError(Problem(file=name, field=f"{path}.params", message="expected a mapping of parameters"))
    return {"name": item["name"][:500], "base": item["name"].split("[")[0], "params": params, "stats": stats}


def _conditions(found: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    benchmarks = [b for _, _, b in found]
    keys = [tuple(sorted(map(str, b["params"]))) for b in benchmarks]
    one_test = len({b["base"] for b in benchmarks}) == 1 and len(set(keys)) == 1 and keys[0]
    names = list(keys[0]) if one_test else []
    if names and all(re.match(NAME_PATTERN, n) and n not in ("trial", "seconds") for n in names):
        values = {tuple(str(b["params"][n]) for n in names) for b in benchmarks}
        if len(values) == len(benchmarks):
            return names
    seen: dict[str, tuple[str, str]] = {}
    for file, path, b in found:
        if b["name"] in seen:
            first = " ".join(seen[b["name"]])
            message = f"{b['name'][:100]!r} is named twice (first at {first}); import the two as separate runs"
            raise BenchledgerError(Problem(file=file, field=f"{path}.name", message=message))
        seen[b["name"]] = (file, path)
    return ["benchmark"]


def _rows(b: dict[str, Any], conditions: list[str], per_trial: bool) -> list[dict[str, Any]]:
    at = {c: (b["name"] if c == "benchmark" else str(b["params"][c])) for c in conditions}
    stats = b["stats"]
    if per_trial:
        return [{"trial": i, **at, "seconds": v} for i, v in enumerate(stats["data"], start=1)]
    summary = {"seconds.sd": stats["stddev"], "seconds.n": stats["rounds"]}
    return [{"trial": None, **at, "seconds": stats["mean"], **summary}]


def _manifest(machine: dict[str, Any], commit: dict[str, Any]) -> dict[str, Any]:
    """What machine_info and commit_info say, under the manifest's usual sections."""
    out: dict[str, Any] = {}
    found = machine.get("cpu")
    cpu: dict[str, Any] = found if isinstance(found, dict) else {}
    host = {
        "name": machine.get("node"),
        "cpu": cpu.get("brand_raw"),
        "cores": cpu.get("count"),
        "os": " ".join(str(machine[k]) for k in ("system", "release") if machine.get(k)) or None,
        "arch": machine.get("machine"),
    }
    host = {k: v for k, v in host.items() if isinstance(v, str | int) and not isinstance(v, bool)}
    if host:
        out["host"] = host
    software = {
        "python": machine.get("python_version"),
        "python_implementation": machine.get("python_implementation"),
        "commit": commit.get("id"),
        "branch": commit.get("branch"),
        "dirty": commit.get("dirty"),
    }
    software = {k: v for k, v in software.items() if isinstance(v, str | bool)}
    if software:
        out["software"] = software
    used = {"node", "cpu", "system", "release", "machine", "python_version", "python_implementation"}
    rest = {k: v for k, v in machine.items() if k not in used and isinstance(v, str | int | float | bool)}
    if rest:
        out["machine_info"] = rest  # every other field pytest-benchmark recorded, under its own name
    return out
