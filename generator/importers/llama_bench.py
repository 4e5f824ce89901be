"""llama-bench output (`-o json`, `-o jsonl`, `-o csv`, and the default Markdown table) as a run.

Each test (one object, line or row) is a condition: `n_prompt`, `n_gen`, `n_depth` (when the
build records it; ik_llama.cpp and older mainline builds do not), and every other field or
column whose value differs between tests (`n_threads`, `type_k`, `mla_attn`, a model...), under
llama-bench's own field name (Markdown display names such as `threads`, `fa` or `mla` are
translated back). Every field that stays the same is kept in the manifest under its own name:
the build, CPU, GPU and backends under `software`/`host`/`accelerators`, the model under
`model`, and every setting, known to this importer or not (forks add `mla_attn`, `fused_moe`,
`ser`...), under `engine.llama_bench`. JSON and JSONL carry `samples_ts` / `samples_ns`, one
value per repetition: they become trials, and because llama-bench repeats inside one process the
run says `trial_unit: repetition`. CSV and Markdown carry only the mean and SD of each test: a
reported run with published summaries (`M.sd`, and `M.n` from `--repetitions`, which is then
required). Numbers keep the digits the source wrote. Shapes follow llama.cpp's
tools/llama-bench/README.md, ik_llama.cpp's examples/llama-bench/llama-bench.cpp and real output
(tests/fixtures/llama-bench/SOURCES.md).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.models import NAME_PATTERN
from .common import Imported, finite

TEST = ("n_prompt", "n_gen", "n_depth")
RESULT = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts", "test_time", "test", "t/s")
MANIFEST = ("build_commit", "build_number", "cpu_info", "gpu_info", "backends")
MODEL = ("model_filename", "model_type", "model_size", "model_n_params")
METRICS = {
    "tokens_per_second": {"unit": "tok/s", "better": "higher"},
    "seconds": {"unit": "s", "better": "lower"},
}
RESERVED = ("trial", *METRICS, *(f"{m}.{s}" for m in METRICS for s in ("sd", "n")))
MD_TEST = re.compile(r"^(pp|tg)(\d{1,9})(?:\+(?:tg)?(\d{1,9}))?(?:@d(\d{1,9}))?$")
MD_GP = re.compile(r"^tg(\d{1,9})@pp(\d{1,9})$")  # ik_llama.cpp's -gp: generation after a prompt
NUMBER = r"(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,3})?"
MD_VALUE = re.compile(rf"^({NUMBER})\s*±\s*({NUMBER})$")
# Markdown display names (llama.cpp and ik_llama.cpp `get_field_display_name`) -> field names
MD_COLUMNS = {
    "model": "model_type",
    "size": "model_size",
    "params": "model_n_params",
    "backend": "backends",
    "threads": "n_threads",
    "ngl": "n_gpu_layers",
    "sm": "split_mode",
    "nkvo": "no_kv_offload",
    "fa": "flash_attn",
    "mmap": "use_mmap",
    "embd": "embeddings",
    "ts": "tensor_split",
    "dev": "devices",
    "ot": "tensor_buft_overrides",
    "dio": "use_direct_io",
    "mla": "mla_attn",
    "amb": "attn_max_batch",
    "rtr": "repack",
    "fmoe": "fused_moe",
    "gr": "reuse",
    "thp": "use_thp",
    "ger": "grouped_er",
    "defer": "defer_experts",
}


def parse(files: Sequence[tuple[str, bytes]], repetitions: int | None = None) -> Imported:
    """Read one or more llama-bench outputs of the same format into one run."""
    kinds = {_kind(name, data) for name, data in files}
    if len(kinds) != 1:
        raise BenchledgerError(
            Problem(file=files[0][0], message="give files of one format (all json, jsonl, csv or md)")
        )
    kind = kinds.pop()
    tests: list[dict[str, Any]] = []
    for name, data in files:
        text = _text(name, data)
        if kind == "md":
            tests += _markdown(name, text)
        elif kind == "csv":
            tests += _csv(name, text)
        else:
            tests += _json(name, text, kind)
    if not tests:
        raise BenchledgerError(Problem(file=files[0][0], message="holds no llama-bench test; give its -o json output"))
    if "_summary" in tests[0] and repetitions is None:
        raise BenchledgerError(
            Problem(
                file="--repetitions",
                message=f"llama-bench's {kind} output gives each test's mean and SD but not how many repetitions they "
                "come from; give --repetitions N (the -r it ran with; 5 when -r was not given) so the SD is kept",
            )
        )
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
            Problem(file=name, message=f"is not UTF-8 (byte {err.start}); give the tool's own output")
        ) from None


def _json(name: str, text: str, kind: str) -> list[dict[str, Any]]:
    try:
        if kind == "json":
            found = json.loads(text, parse_float=Decimal)
            items = found if isinstance(found, list) else None
            where = ["$"] * len(items or [])
        else:
            lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
            items = [json.loads(line, parse_float=Decimal) for _, line in lines]
            where = [f"line {n}" for n, _ in lines]
    except (ValueError, RecursionError) as err:
        raise BenchledgerError(Problem(file=name, message=f"is not llama-bench {kind} ({str(err)[:120]})")) from None
    if items is None:
        raise BenchledgerError(
            Problem(file=name, field="$", message="expected a JSON array of test objects (llama-bench -o json)")
        )
    out = []
    for i, (item, at) in enumerate(zip(items, where, strict=True)):
        path = f"$[{i}]" if kind == "json" else at
        if not isinstance(item, dict):
            raise BenchledgerError(Problem(file=name, field=path, message="expected a test object"))
        samples = item.get("samples_ts")
        nanos = item.get("samples_ns")
        if not isinstance(samples, list) or not samples or not all(_positive(v) for v in samples):
            raise BenchledgerError(
                Problem(
                    file=name,
                    field=f"{path}.samples_ts",
                    message="expected a list of positive numbers, one per repetition",
                )
            )
        if not isinstance(nanos, list) or len(nanos) != len(samples) or not all(_positive(v) for v in nanos):
            raise BenchledgerError(
                Problem(
                    file=name, field=f"{path}.samples_ns", message="expected one positive number per samples_ts value"
                )
            )
        _check_test(item, name, None, path)
        fields = {k: (float(v) if isinstance(v, Decimal) else v) for k, v in item.items() if k not in RESULT}
        label = item.get("test") if isinstance(item.get("test"), str) else None
        samples_of = list(zip(samples, nanos, strict=True))
        out.append(fields | {"_samples": samples_of, "_label": label, "_time": item, "_file": name})
    return out


def _check_test(item: dict[str, Any], name: str, line: int | None, path: str | None) -> None:
    """n_prompt and n_gen are required whole numbers of tokens; n_depth is optional."""
    for key in TEST:
        value = item.get(key)
        if key == "n_depth" and key not in item:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            where = f"{path}.{key}" if path else key
            message = "expected a whole number of tokens" + ("" if key in item else f" (the field {key} is missing)")
            raise BenchledgerError(Problem(file=name, line=line, field=where, message=message))


def _csv(name: str, text: str) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, [])
    out = []
    for number, cells in enumerate(reader, start=2):
        if len(cells) != len(header):
            message = f"has {len(cells)} cells, the header {len(header)}: not one llama-bench run's -o csv output"
            raise BenchledgerError(Problem(file=name, line=number, message=message))
        item: dict[str, Any] = {k: _scalar(v) for k, v in zip(header, cells, strict=True)}
        for key in ("avg_ts", "stddev_ts"):
            if not _finite(item.get(key)):
                message = "expected a number (is this llama-bench -o csv?)"
                if key not in item:
                    message = f"missing: the header has no {key} column (is this llama-bench -o csv?)"
                raise BenchledgerError(Problem(file=name, line=number, field=key, message=message))
        _check_test(item, name, number, None)
        fields = {k: v for k, v in item.items() if k not in RESULT}
        label = item.get("test") if isinstance(item.get("test"), str) else None
        summary = (_exact_text(cells[header.index("avg_ts")]), _exact_text(cells[header.index("stddev_ts")]))
        out.append(fields | {"_summary": summary, "_label": label, "_time": item, "_file": name})
    return out


def _markdown(name: str, text: str) -> list[dict[str, Any]]:
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    if len(lines) < 3:
        raise BenchledgerError(Problem(file=name, message="holds no Markdown table; give llama-bench's default output"))
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    if "test" not in header or "t/s" not in header:
        raise BenchledgerError(
            Problem(file=name, line=1, message="expected llama-bench's table with `test` and `t/s` columns")
        )
    out = []
    for number, line in enumerate(lines[2:], start=3):
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header):
            raise BenchledgerError(
                Problem(file=name, line=number, message=f"has {len(cells)} cells, the header {len(header)}")
            )
        row = dict(zip(header, cells, strict=True))
        label = row["test"].replace(" ", "")
        test, gp, value = MD_TEST.match(label), MD_GP.match(label), MD_VALUE.match(row["t/s"])
        if test is None and gp is None:
            message = f"{row['test'][:40]!r} is not ppN, tgN, ppN+tgM, tgN@ppM or ppN @ dN"
            raise BenchledgerError(Problem(file=name, line=number, field="test", message=message))
        if value is None or not all(_finite(_scalar(v)) for v in value.groups()):
            message = f"{row['t/s'][:40]!r} is not `mean ± sd` (two finite numbers, e.g. 6.17 ± 0.07)"
            raise BenchledgerError(Problem(file=name, line=number, field="t/s", message=message))
        if gp is not None:
            tokens = {"n_prompt": int(gp.group(2)), "n_gen": int(gp.group(1)), "n_depth": 0}
        else:
            kind, size, extra, depth = test.groups() if test else ("", "0", None, None)
            tokens = {
                "n_prompt": int(size) if kind == "pp" else 0,
                "n_gen": int(size) if kind == "tg" else int(extra or 0),
                "n_depth": int(depth or 0),
            }
        item: dict[str, Any] = {MD_COLUMNS.get(k, k): _scalar(v) for k, v in row.items() if k not in RESULT and k}
        summary = (_exact_text(value.group(1)), _exact_text(value.group(2)))
        out.append(tokens | item | {"_summary": summary, "_label": label, "_time": {}, "_file": name})
    return out


def _imported(tests: list[dict[str, Any]], kind: str, repetitions: int | None) -> Imported:
    keys = list(dict.fromkeys(k for t in tests for k in t if not k.startswith("_")))
    tokens = [k for k in TEST if any(k in t for t in tests)]
    varying = [k for k in keys if k not in TEST and len({_condition(t.get(k)) for t in tests}) > 1]
    for key in varying:
        if not re.match(NAME_PATTERN, key) or key in RESERVED:
            raise BenchledgerError(
                Problem(
                    file=tests[0]["_file"],
                    field=key,
                    message="differs between tests but cannot name a results.csv column; import the tests that share "
                    "it as separate runs",
                )
            )
    conditions = [*tokens, *varying]
    if _labels_needed(tests, conditions):
        conditions.append("test")
    rows = _rows(tests, conditions, repetitions)
    first = tests[0]
    manifest = _manifest(first, [*TEST, *varying])
    per_trial = "_samples" in first
    times = [t["_time"]["test_time"][:10] for t in tests if isinstance(t["_time"].get("test_time"), str)]
    day = None
    try:
        day = min(dt.date.fromisoformat(x) for x in times) if times else None
    except ValueError:
        day = None
    metrics = METRICS if per_trial else {"tokens_per_second": METRICS["tokens_per_second"]}
    return Imported(
        tool="llama-bench",
        format=kind,
        conditions=conditions,
        metrics=dict(metrics),
        rows=rows,
        manifest=manifest,
        date=day,
        trial_unit="repetition",
        per_trial=per_trial,
    )


def _labels_needed(tests: list[dict[str, Any]], conditions: list[str]) -> bool:
    """The test label joins the conditions when token counts alone do not tell two tests apart
    (ik_llama.cpp's tg64@pp128 and mainline's pp128+tg64 share n_prompt and n_gen)."""
    labels: dict[tuple[str, ...], set[str]] = {}
    for t in tests:
        labels.setdefault(tuple(_condition(t.get(c)) for c in conditions), set()).add(str(t.get("_label")))
    return any(len(found) > 1 for found in labels.values())


def _rows(tests: list[dict[str, Any]], conditions: list[str], repetitions: int | None) -> list[dict[str, Any]]:
    rows = []
    for test in tests:
        at = {c: _condition(test.get("_label") if c == "test" else test.get(c)) for c in conditions}
        if "_samples" in test:
            for trial, (ts, ns) in enumerate(test["_samples"], start=1):
                seconds = Decimal(ns).scaleb(-9)
                rows.append({"trial": trial, **at, "tokens_per_second": _exact(ts), "seconds": _exact(seconds)})
        else:
            mean, sd = test["_summary"]
            summary = {"tokens_per_second.sd": sd, "tokens_per_second.n": repetitions}
            rows.append({"trial": None, **at, "tokens_per_second": mean, **summary})
    return rows


def _manifest(first: dict[str, Any], varying: list[str]) -> dict[str, Any]:
    """Every field that stayed the same across tests, under the manifest's usual sections."""
    fixed = {k: v for k, v in first.items() if not k.startswith("_") and k not in varying and v is not None}
    out: dict[str, Any] = {}
    software = {"engine": "llama.cpp"}
    if "build_commit" in fixed:
        software["engine_version"] = str(fixed["build_commit"])
    if "build_number" in fixed:
        software["build_number"] = str(fixed["build_number"])
    if fixed.get("backends"):
        software["backends"] = str(fixed["backends"])
    out["software"] = software
    if str(fixed.get("cpu_info") or "").strip():
        out["host"] = {"cpu": str(fixed["cpu_info"]).strip()}
    if fixed.get("gpu_info"):
        out["accelerators"] = [
            {"name": str(name).strip()} for name in str(fixed["gpu_info"]).split(",") if name.strip()
        ]
    model = {k.removeprefix("model_"): fixed[k] for k in MODEL if k in fixed}
    if model:
        out["model"] = model
    settings = {k: v for k, v in fixed.items() if k not in (*MANIFEST, *MODEL)}
    if settings:
        out["engine"] = {"llama_bench": settings}
    return out


def _condition(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _exact(value: Any) -> str:
    """A number with the digits the source wrote (JSON floats are read as decimals)."""
    text = str(value)
    if isinstance(value, Decimal) and "." in text and "E" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _exact_text(text: str) -> str:
    """A number printed by llama-bench, kept as printed."""
    return str(Decimal(text.strip()))


def _scalar(text: str | None) -> Any:
    if text is None:
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _positive(value: Any) -> bool:
    return _finite(value) and value > 0


def _finite(value: Any) -> bool:
    """A finite number: a JSON number (`common.finite`), or a Decimal (JSON floats are read as Decimal)."""
    return value.is_finite() if isinstance(value, Decimal) else finite(value)
