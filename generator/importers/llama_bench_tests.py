"""Each test of llama-bench's output read into one dict, whatever the format: JSON and JSONL
objects (with their samples, one per repetition), CSV rows and Markdown table rows (with the
mean and SD as printed), every one checked and numbered with its invocation. What the tests
become (conditions, trials, manifest) is `llama_bench`'s."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ..errors import BenchledgerError, Problem
from .common import finite
from .llama_bench_text import Block, find

TEST = ("n_prompt", "n_gen", "n_depth")
RESULT = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts", "test_time", "test", "t/s")
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
Files = Sequence[tuple[str, bytes]]


def read_tests(files: Files) -> tuple[list[dict[str, Any]], str, dict[str, list[int]]]:
    """Every test of every file, in file order, each numbered with its invocation."""
    tests: list[dict[str, Any]] = []
    kinds: set[str] = set()
    skipped: dict[str, list[int]] = {}
    invocation = 0
    for name, data in files:
        found = find(name, _text(name, data))
        kinds.add(found.kind)
        skipped[name] = found.skipped
        for block in found.blocks:
            read = {"md": _markdown, "csv": _csv}.get(block.kind, _json)
            invocation += 1
            seen: set[str] = set()
            for test in read(name, block):
                key = json.dumps({k: v for k, v in test.items() if not k.startswith("_")}, sort_keys=True, default=str)
                if key in seen:  # the same test again: the next invocation appended to this one
                    invocation, seen = invocation + 1, set()
                seen.add(key)
                tests.append(test | {"_invocation": invocation, "_block": block})
    if len(kinds) != 1:
        raise BenchledgerError(
            Problem(file=files[0][0], message="give files of one format (all json, jsonl, csv or Markdown tables)")
        )
    return tests, kinds.pop(), skipped


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise BenchledgerError(
            Problem(file=name, message=f"is not UTF-8 (byte {err.start}); give the tool's own output")
        ) from None


def _json(name: str, block: Block) -> list[dict[str, Any]]:
    out = []
    for i, (line, item) in enumerate(block.items):
        path = f"$[{i}]" if block.kind == "json" else None

        def at(key: str, path: str | None = path) -> str:
            return f"{path}.{key}" if path else key

        if not isinstance(item, dict):
            raise BenchledgerError(Problem(file=name, line=line, field=path, message="expected a test object"))
        samples = item.get("samples_ts")
        nanos = item.get("samples_ns")
        if not isinstance(samples, list) or not samples or not all(_positive(v) for v in samples):
            message = "expected a list of positive numbers, one per repetition"
            raise BenchledgerError(Problem(file=name, line=line, field=at("samples_ts"), message=message))
        if not isinstance(nanos, list) or len(nanos) != len(samples) or not all(_positive(v) for v in nanos):
            message = "expected one positive number per samples_ts value"
            raise BenchledgerError(Problem(file=name, line=line, field=at("samples_ns"), message=message))
        _check_test(item, name, line, path)
        fields = {k: (float(v) if isinstance(v, Decimal) else v) for k, v in item.items() if k not in RESULT}
        label = item.get("test") if isinstance(item.get("test"), str) else None
        samples_of = list(zip(samples, nanos, strict=True))
        out.append(fields | {"_samples": samples_of, "_label": label, "_time": item, "_file": name, "_line": line})
    return out


def _check_test(item: dict[str, Any], name: str, line: int, path: str | None) -> None:
    """n_prompt and n_gen are required whole numbers of tokens; n_depth is optional."""
    for key in TEST:
        value = item.get(key)
        if key == "n_depth" and key not in item:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            where = f"{path}.{key}" if path else key
            message = "expected a whole number of tokens" + ("" if key in item else f" (the field {key} is missing)")
            raise BenchledgerError(Problem(file=name, line=line, field=where, message=message))


def _csv(name: str, block: Block) -> list[dict[str, Any]]:
    header = block.header
    ragged = [(line, len(cells)) for line, cells in block.items if len(cells) != len(header)]
    if ragged:
        line, cells = ragged[0]
        more = f" (and {len(ragged) - 1} more rows)" if len(ragged) > 1 else ""
        message = (
            f"has {cells} cells, the header {len(header)}{more}: not one llama-bench run's -o csv output; "
            "give the file llama-bench wrote"
        )
        raise BenchledgerError(Problem(file=name, line=line, message=message))
    out = []
    for line, cells in block.items:
        item: dict[str, Any] = {k: _scalar(v) for k, v in zip(header, cells, strict=True)}
        for key in ("avg_ts", "stddev_ts"):
            if not _finite(item.get(key)):
                message = "expected a number (is this llama-bench -o csv?)"
                if key not in item:
                    message = f"missing: the header has no {key} column (is this llama-bench -o csv?)"
                raise BenchledgerError(Problem(file=name, line=line, field=key, message=message))
        _check_test(item, name, line, None)
        fields = {k: v for k, v in item.items() if k not in RESULT}
        label = item.get("test") if isinstance(item.get("test"), str) else None
        summary = (_exact_text(cells[header.index("avg_ts")]), cells[header.index("stddev_ts")].strip())
        out.append(fields | {"_summary": summary, "_label": label, "_time": item, "_file": name, "_line": line})
    return out


def _markdown(name: str, block: Block) -> list[dict[str, Any]]:
    header = block.header
    context: dict[str, Any] = {}
    if block.build:
        context |= {"build_commit": block.build[0], "build_number": block.build[1]}
    if block.devices:
        context["gpu_info"] = ", ".join(block.devices)
    out = []
    for line, cells in block.items:
        if len(cells) != len(header):
            message = f"has {len(cells)} cells, the header (line {block.start}) {len(header)}"
            raise BenchledgerError(Problem(file=name, line=line, message=message))
        row = dict(zip(header, cells, strict=True))
        label = row["test"].replace(" ", "")
        test, gp, value = MD_TEST.match(label), MD_GP.match(label), MD_VALUE.match(row["t/s"])
        if test is None and gp is None:
            message = f"{row['test'][:40]!r} is not ppN, tgN, ppN+tgM, tgN@ppM or ppN @ dN"
            raise BenchledgerError(Problem(file=name, line=line, field="test", message=message))
        if value is None or not all(_finite(_scalar(v)) for v in value.groups()):
            message = f"{row['t/s'][:40]!r} is not `mean ± sd` (two finite numbers, e.g. 6.17 ± 0.07)"
            raise BenchledgerError(Problem(file=name, line=line, field="t/s", message=message))
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
        summary = (_exact_text(value.group(1)), value.group(2))
        extra = {"_summary": summary, "_label": label, "_time": {}, "_file": name, "_line": line}
        out.append(tokens | context | item | extra)
    return out


def _exact_text(text: str) -> str:
    """A number printed by llama-bench, kept as printed."""
    try:
        return str(Decimal(text.strip()))
    except InvalidOperation:
        return text.strip()


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
