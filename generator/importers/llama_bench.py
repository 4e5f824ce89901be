"""llama-bench output (`-o json`, `-o jsonl`, `-o csv`, and the default Markdown table) as a run.

Each test (one object, line or row) is a condition: `n_prompt`, `n_gen`, `n_depth`, and every
other setting whose value differs between tests (`n_threads`, `n_batch`, `flash_attn`,
`type_k`, a model...). JSON and JSONL carry `samples_ts` / `samples_ns`, one value per
repetition: they become trials, and because llama-bench repeats inside one process the run
says `trial_unit: repetition`. CSV and Markdown carry only the mean and SD of each test: the
run is a reported run with published summaries (`M.sd`, and `M.n` when `--repetitions` says
how many repetitions there were). The build, CPU, GPU, backends and model go to the manifest;
fields this importer does not know stay in the original file under raw/, never invented
into the manifest. Shapes follow llama.cpp's tools/llama-bench/README.md and real output of
llama-bench built from the llama-cpp-python 0.3.36 sources (bench/engines/).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.models import NAME_PATTERN
from .common import Imported

TEST = ("n_prompt", "n_gen", "n_depth")
MANIFEST = ("build_commit", "build_number", "cpu_info", "gpu_info", "backends")
MODEL = ("model_filename", "model_type", "model_size", "model_n_params")
SETTINGS = (
    "n_batch",
    "n_ubatch",
    "n_threads",
    "cpu_mask",
    "cpu_strict",
    "poll",
    "type_k",
    "type_v",
    "n_gpu_layers",
    "n_cpu_moe",
    "split_mode",
    "main_gpu",
    "no_kv_offload",
    "flash_attn",
    "devices",
    "tensor_split",
    "tensor_buft_overrides",
    "use_mmap",
    "use_direct_io",
    "load_mode",
    "lazy_mode",
    "moe_cache",
    "embeddings",
    "no_op_offload",
    "no_host",
    "repack",
    "fit_target",
    "fit_min_ctx",
    "n_gen_warmup",
)
METRICS = {
    "tokens_per_second": {"unit": "tok/s", "better": "higher"},
    "seconds": {"unit": "s", "better": "lower"},
}
MD_TEST = re.compile(r"^(?:(pp|tg)\s*(\d{1,9})(?:\+(?:tg)?(\d{1,9}))?)(?:\s*@\s*d(\d{1,9}))?$")
NUMBER = r"(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,3})?"
MD_VALUE = re.compile(rf"^({NUMBER})\s*±\s*({NUMBER})$")
MD_COLUMNS = {"threads": "n_threads", "ngl": "n_gpu_layers", "fa": "flash_attn", "n_batch": "n_batch"}


def parse(files: Sequence[tuple[str, bytes]], repetitions: int | None = None) -> Imported:
    """Read one or more llama-bench outputs of the same format into one run."""
    kinds = {_kind(name, data) for name, data in files}
    if len(kinds) != 1:
        raise BenchledgerError(
            Problem(files[0][0], None, None, "give files of one format (all json, jsonl, csv or md)")
        )
    kind = kinds.pop()
    tests: list[dict[str, Any]] = []
    for name, data in files:
        text = _text(name, data)
        if kind == "md":
            tests += _markdown(name, text, repetitions)
        elif kind == "csv":
            tests += _csv(name, text)
        else:
            tests += _json(name, text, kind)
    if not tests:
        raise BenchledgerError(Problem(files[0][0], None, None, "holds no llama-bench test; give its -o json output"))
    return _imported(tests, kind, repetitions)


def _kind(name: str, data: bytes) -> str:
    head = data.lstrip()[:1]
    if name.endswith(".jsonl") or (head == b"{"):
        return "jsonl"
    if name.endswith(".json") or head == b"[":
        return "json"
    if head == b"|" or name.endswith(".md"):
        return "md"
    return "csv"


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise BenchledgerError(
            Problem(name, None, None, f"is not UTF-8 (byte {err.start}); give the tool's own output")
        ) from None


def _json(name: str, text: str, kind: str) -> list[dict[str, Any]]:
    try:
        if kind == "json":
            found = json.loads(text)
            items = found if isinstance(found, list) else None
            where = ["$"] * len(items or [])
        else:
            lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
            items = [json.loads(line) for _, line in lines]
            where = [f"line {n}" for n, _ in lines]
    except (ValueError, RecursionError) as err:
        raise BenchledgerError(Problem(name, None, None, f"is not llama-bench {kind} ({str(err)[:120]})")) from None
    if items is None:
        raise BenchledgerError(Problem(name, None, "$", "expected a JSON array of test objects (llama-bench -o json)"))
    out = []
    for i, (item, at) in enumerate(zip(items, where, strict=True)):
        path = f"$[{i}]" if kind == "json" else at
        if not isinstance(item, dict):
            raise BenchledgerError(Problem(name, None, path, "expected a test object"))
        samples = item.get("samples_ts")
        nanos = item.get("samples_ns")
        if not isinstance(samples, list) or not samples or not all(_finite(v) and v > 0 for v in samples):
            raise BenchledgerError(
                Problem(name, None, f"{path}.samples_ts", "expected a list of positive numbers, one per repetition")
            )
        if not isinstance(nanos, list) or len(nanos) != len(samples) or not all(_finite(v) and v > 0 for v in nanos):
            raise BenchledgerError(
                Problem(name, None, f"{path}.samples_ns", "expected one positive number per samples_ts value")
            )
        for key in TEST:
            if not isinstance(item.get(key), int) or isinstance(item.get(key), bool) or item[key] < 0:
                raise BenchledgerError(Problem(name, None, f"{path}.{key}", "expected a whole number of tokens"))
        out.append(item | {"_samples": list(zip(samples, nanos, strict=True))})
    return out


def _csv(name: str, text: str) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, [])
    out = []
    for number, cells in enumerate(reader, start=2):
        if len(cells) != len(header):
            message = f"has {len(cells)} cells, the header {len(header)}: not one llama-bench run's -o csv output"
            raise BenchledgerError(Problem(name, number, None, message))
        item: dict[str, Any] = {k: _scalar(v) for k, v in zip(header, cells, strict=True)}
        for key in (*TEST, "avg_ts", "stddev_ts"):
            if not _finite(item.get(key)):
                raise BenchledgerError(Problem(name, number, key, "expected a number (is this llama-bench -o csv?)"))
        out.append(item | {"_summary": (float(item["avg_ts"]), float(item["stddev_ts"]))})
    return out


def _markdown(name: str, text: str, repetitions: int | None) -> list[dict[str, Any]]:
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    if len(lines) < 3:
        raise BenchledgerError(Problem(name, None, None, "holds no Markdown table; give llama-bench's default output"))
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    if "test" not in header or "t/s" not in header:
        raise BenchledgerError(Problem(name, 1, None, "expected llama-bench's table with `test` and `t/s` columns"))
    out = []
    for number, line in enumerate(lines[2:], start=3):
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header):
            raise BenchledgerError(Problem(name, number, None, f"has {len(cells)} cells, the header {len(header)}"))
        row = dict(zip(header, cells, strict=True))
        test, value = MD_TEST.match(row["test"].replace(" ", "")), MD_VALUE.match(row["t/s"])
        if test is None:
            raise BenchledgerError(Problem(name, number, "test", f"{row['test'][:40]!r} is not ppN, tgN or ppN @ dN"))
        if value is None or not all(math.isfinite(float(v)) for v in value.groups()):
            message = f"{row['t/s'][:40]!r} is not `mean ± sd` (two finite numbers, e.g. 6.17 ± 0.07)"
            raise BenchledgerError(Problem(name, number, "t/s", message))
        kind, size, extra, depth = test.groups()
        item: dict[str, Any] = {
            "n_prompt": int(size) if kind == "pp" else 0,
            "n_gen": int(size) if kind == "tg" else int(extra or 0),
            "n_depth": int(depth or 0),
            "model_type": row.get("model"),
            "backends": row.get("backend"),
        }
        item |= {MD_COLUMNS[k]: _scalar(v) for k, v in row.items() if k in MD_COLUMNS}
        out.append(item | {"_summary": (float(value.group(1)), float(value.group(2)))})
    return out


def _imported(tests: list[dict[str, Any]], kind: str, repetitions: int | None) -> Imported:
    present = [k for k in (*MODEL, *SETTINGS) if all(t.get(k) is not None for t in tests)]
    varying = [k for k in present if len({json.dumps(t[k], sort_keys=True) for t in tests}) > 1]
    conditions = [*TEST, *(k for k in varying if re.match(NAME_PATTERN, k))]
    rows = _rows(tests, conditions, repetitions)
    first = tests[0]
    manifest = _manifest(first, varying)
    per_trial = "_samples" in first
    notes = []
    if not per_trial and repetitions is None:
        notes.append(
            "llama-bench published each test's mean and SD but not how many repetitions they came from, so "
            "only the means are kept; import with --repetitions N (llama-bench's -r, 5 by default) to keep the "
            "SD and let claims use it."
        )
    times = [t["test_time"][:10] for t in tests if isinstance(t.get("test_time"), str)]
    day = None
    try:
        day = min(dt.date.fromisoformat(x) for x in times) if times else None
    except ValueError:
        day = None
    metrics = METRICS if per_trial else {"tokens_per_second": METRICS["tokens_per_second"]}
    unit = "repetition" if per_trial else None
    return Imported("llama-bench", kind, conditions, dict(metrics), rows, manifest, day, unit, per_trial, notes)


def _rows(tests: list[dict[str, Any]], conditions: list[str], repetitions: int | None) -> list[dict[str, Any]]:
    rows = []
    for test in tests:
        at = {c: _condition(test.get(c)) for c in conditions}
        if "_samples" in test:
            for trial, (ts, ns) in enumerate(test["_samples"], start=1):
                rows.append({"trial": trial, **at, "tokens_per_second": ts, "seconds": ns / 1e9})
        else:
            mean, sd = test["_summary"]
            summary = {"tokens_per_second.sd": sd, "tokens_per_second.n": repetitions} if repetitions else {}
            rows.append({"trial": None, **at, "tokens_per_second": mean, **summary})
    return rows


def _manifest(first: dict[str, Any], varying: list[str]) -> dict[str, Any]:
    """What stayed the same across tests, under the manifest's usual sections."""
    fixed = {k: first[k] for k in (*MANIFEST, *MODEL, *SETTINGS) if k in first and k not in varying}
    out: dict[str, Any] = {}
    software = {"engine": "llama.cpp"}
    if "build_commit" in fixed:
        software["engine_version"] = str(fixed["build_commit"])
    if "build_number" in fixed:
        software["build_number"] = str(fixed["build_number"])
    if fixed.get("backends"):
        software["backends"] = str(fixed["backends"])
    out["software"] = software
    if fixed.get("cpu_info"):
        out["host"] = {"cpu": str(fixed["cpu_info"])}
    if fixed.get("gpu_info"):
        out["accelerators"] = [
            {"name": str(name).strip()} for name in str(fixed["gpu_info"]).split(",") if name.strip()
        ]
    model = {k.removeprefix("model_"): fixed[k] for k in MODEL if k in fixed}
    if model:
        out["model"] = model
    settings = {k: fixed[k] for k in SETTINGS if k in fixed}
    if settings:
        out["engine"] = {"llama_bench": settings}
    return out


def _condition(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _scalar(text: str | None) -> Any:
    if text is None:
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
