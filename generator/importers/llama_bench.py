"""llama-bench output (`-o json`, `-o jsonl`, `-o csv`, and the default Markdown table) as runs.

The output is found by its content, wherever it lies in the file (`llama_bench_text`): a log
saved with `> out.log 2>&1` keeps its device lines, warnings and `build:` lines, and every
line that is not llama-bench output stays only in the original under raw/.

Each test (one object, line or row) is a condition: `n_prompt`, `n_gen`, `n_depth` (when the
build records it; ik_llama.cpp and older mainline builds do not), and every other field or
column whose value differs between tests (`n_threads`, `type_k`, `mla_attn`, a model...), under
llama-bench's own field name (Markdown display names such as `threads`, `fa` or `mla` are
translated back). Every field that stays the same is kept in the manifest under its own name:
the build under `software` (`engine_version`: the commit as llama-bench prints it;
`build_number`: its build number, an integer), CPU and GPUs under `host`/`accelerators`, the
model under `model`, and every setting, known to this importer or not (forks add `mla_attn`,
`fused_moe`, `ser`...), under `engine.llama_bench`. A Markdown table takes its build from the
`build: COMMIT (NUMBER)` line after it and its accelerators from the device lines before it.

JSON and JSONL carry `samples_ts` / `samples_ns`, one value per repetition: they become trials,
and because llama-bench repeats inside one process the run says `trial_unit: repetition`. CSV
and Markdown carry only the mean and SD of each test: a reported run with published summaries
(`M.sd`, and `M.n` from `--repetitions`, which is then required). An SD printed as zero
(`0.00`) means below half its last digit: it is kept as that bound (`<0.005`), never as 0.

Several invocations in one input (the tables of a log, appended JSON arrays, JSONL or CSV
runs; a test repeating one of its own invocation starts the next) stay apart: when two of them
hold a test of the same conditions, an `invocation` condition numbers them in file order. They
are never pooled, since llama-bench does not record what may have changed between them (an
environment variable, a driver). Tests from different machines never share a run
(`common.by_machine`). Numbers keep the digits the source wrote. Shapes follow llama.cpp's
tools/llama-bench/README.md, ik_llama.cpp's examples/llama-bench/llama-bench.cpp and real output
(tests/fixtures/llama-bench/SOURCES.md).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.models import NAME_PATTERN
from ..format.paths import file_name, is_local_path
from .common import Imported
from .llama_bench_tests import TEST, Files, read_tests
from .machines import Machine, OnMachine, by_machine

MANIFEST = ("build_commit", "build_number", "cpu_info", "gpu_info", "backends")
MODEL = ("model_filename", "model_type", "model_size", "model_n_params")
METRICS = {
    "tokens_per_second": {"unit": "tok/s", "better": "higher"},
    "seconds": {"unit": "s", "better": "lower"},
}
INVOCATION = "invocation"
RESERVED = ("trial", INVOCATION, *METRICS, *(f"{m}.{s}" for m in METRICS for s in ("sd", "n")))


def parse(files: Files, repetitions: int | None = None) -> list[tuple[OnMachine[tuple[str, bytes]], Imported]]:
    """Read one or more llama-bench outputs of the same format: one run per machine."""
    tests, kind, skipped = read_tests(files)
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
    groups = by_machine((t, _machine(t), t["_file"]) for t in tests)
    out = []
    for group in groups:
        imported = _imported(group.items, kind, repetitions)
        imported.notes = [*_skipped_note(skipped, group.items), *imported.notes]
        where = [_span(name, [t["_line"] for t in group.items if t["_file"] == name]) for name in group.where]
        mine = [f for f in files if f[0] in group.where]
        out.append((OnMachine(machine=group.machine, items=mine, where=where), imported))
    return out


def _machine(test: dict[str, Any]) -> Machine:
    """What llama-bench records of the machine: the CPU, and the GPUs as its backend names them."""
    gpus = tuple(g.strip() for g in str(test.get("gpu_info") or "").split(",") if g.strip())
    cpu = str(test.get("cpu_info") or "").strip() or None
    return Machine(cpu=cpu, accelerators=gpus, naming=str(test.get("backends") or "") or None)


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
    notes = []
    if _collide(tests, conditions):
        conditions.append(INVOCATION)
        notes.append(_invocations_note(tests))
    rows, bounds = _rows(tests, conditions, repetitions)
    if bounds:
        notes.append(_bounds_note(bounds))
    manifest = _manifest(tests[0], [*TEST, *varying])
    if "engine_version" not in manifest["software"] and tests[0].get("build_commit") == "unknown":
        notes.append("llama-bench printed its build as `unknown (0)` (built without git): no version is recorded.")
    per_trial = "_samples" in tests[0]
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
        notes=notes,
    )


def _labels_needed(tests: list[dict[str, Any]], conditions: list[str]) -> bool:
    """The test label joins the conditions when token counts alone do not tell two tests apart
    (ik_llama.cpp's tg64@pp128 and mainline's pp128+tg64 share n_prompt and n_gen)."""
    labels: dict[tuple[str, ...], set[str]] = {}
    for t in tests:
        labels.setdefault(tuple(_condition(t.get(c)) for c in conditions), set()).add(str(t.get("_label")))
    return any(len(found) > 1 for found in labels.values())


def _at(test: dict[str, Any], condition: str) -> str:
    key = {"test": "_label", INVOCATION: "_invocation"}.get(condition, condition)
    return _condition(test.get(key))


def _collide(tests: list[dict[str, Any]], conditions: list[str]) -> bool:
    """Two invocations hold a test of the same conditions (nothing recorded tells them apart)."""
    seen: dict[tuple[str, ...], int] = {}
    return any(
        seen.setdefault(tuple(_at(t, c) for c in conditions), t["_invocation"]) != t["_invocation"] for t in tests
    )


def _invocations_note(tests: list[dict[str, Any]]) -> str:
    spans: dict[int, list[dict[str, Any]]] = {}
    for t in tests:
        spans.setdefault(t["_invocation"], []).append(t)
    shown = []
    for number, members in list(spans.items())[:8]:
        where = _span(members[0]["_file"], [t["_line"] for t in members])
        command = members[0]["_block"].command if members[0] is _first_of_block(members[0], tests) else None
        shown.append(f"{number}: {where}" + (f" (after the line `{_code(command)}`)" if command else ""))
    more = f"; and {len(spans) - 8} more" if len(spans) > 8 else ""
    return (
        f"The input appends {len(spans)} llama-bench invocations whose tests record the same settings, so each is its "
        f"own condition `invocation` ({'; '.join(shown)}{more}). They are not pooled: llama-bench does not record "
        "what may have changed between them (an environment variable, a driver), so say what did in the notes, "
        "and compare them with `at: {invocation: ...}`."
    )


def _first_of_block(test: dict[str, Any], tests: list[dict[str, Any]]) -> dict[str, Any]:
    return next(t for t in tests if t["_block"] is test["_block"])


def _code(text: str) -> str:
    """A command line as a note quotes it: one space between words, a local path as its file name."""
    words = [file_name(w) if is_local_path(w) else w for w in text.replace("`", "'").split()]
    return " ".join(words)[:200]


def _rows(
    tests: list[dict[str, Any]], conditions: list[str], repetitions: int | None
) -> tuple[list[dict[str, Any]], list[tuple[str, int, str, str]]]:
    rows, bounds = [], []
    for test in tests:
        at = {c: _at(test, c) for c in conditions}
        if "_samples" in test:
            for trial, (ts, ns) in enumerate(test["_samples"], start=1):
                seconds = Decimal(ns).scaleb(-9)
                rows.append({"trial": trial, **at, "tokens_per_second": _exact(ts), "seconds": _exact(seconds)})
            continue
        mean, printed = test["_summary"]
        sd = _sd(printed)
        if sd.startswith("<"):
            bounds.append((test["_file"], test["_line"], printed, sd))
        summary = {"tokens_per_second.sd": sd, "tokens_per_second.n": repetitions}
        rows.append({"trial": None, **at, "tokens_per_second": mean, **summary})
    return rows, bounds


def _sd(printed: str) -> str:
    """An SD as printed; printed as zero (`0.00`), it means below half its last digit: `<0.005`."""
    value = Decimal(printed.strip())
    if value != 0:
        return str(value)
    exponent = value.as_tuple().exponent
    places = exponent if isinstance(exponent, int) else 0
    return "<" + format(Decimal(5).scaleb(places - 1), "f")


def _bounds_note(bounds: list[tuple[str, int, str, str]]) -> str:
    file, line, printed, bound = bounds[0]
    more = f" and {len(bounds) - 1} more" if len(bounds) > 1 else ""
    return (
        f"llama-bench printed an SD of {printed} ({file} line {line}{more}): an SD below half its last digit, kept as "
        f"`{bound}` (an upper bound, which intervals use), not as an SD of zero."
    )


def _skipped_note(skipped: dict[str, list[int]], tests: list[dict[str, Any]]) -> list[str]:
    files = list(dict.fromkeys(t["_file"] for t in tests))
    parts = [f"{name} {_ranges(skipped[name])}" for name in files if skipped.get(name)]
    if not parts:
        return []
    return [
        f"Lines that are not llama-bench output (device lines, warnings, commands) were left out: {'; '.join(parts)}. "
        "The original under raw/ keeps them."
    ]


def _ranges(lines: list[int]) -> str:
    runs: list[list[int]] = []
    for n in lines:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:6]]
    word = "line" if len(lines) == 1 else "lines"
    return f"{word} {', '.join(shown)}" + (f" (+{len(runs) - 6} more)" if len(runs) > 6 else "")


def _span(name: str, lines: list[int]) -> str:
    if not lines:
        return name
    low, high = min(lines), max(lines)
    return f"{name} line {low}" if low == high else f"{name} lines {low}-{high}"


def _manifest(first: dict[str, Any], varying: list[str]) -> dict[str, Any]:
    """Every field that stayed the same across tests, under the manifest's usual sections."""
    fixed = {k: v for k, v in first.items() if not k.startswith("_") and k not in varying and v is not None}
    out: dict[str, Any] = {}
    software: dict[str, Any] = {"engine": "llama.cpp"}
    unknown = fixed.get("build_commit") == "unknown" and fixed.get("build_number") == 0
    if "build_commit" in fixed and not unknown:
        software["engine_version"] = str(fixed["build_commit"])
    number = _build_number(fixed.get("build_number"))
    if number is not None and not unknown:
        software["build_number"] = number
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


def _build_number(value: Any) -> int | None:
    """llama-bench's build number, the orderable integer of its version (JSON gives an integer,
    CSV a number, the Markdown `build:` line a number in parentheses)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 13:
        return int(value.strip())
    return None


def _condition(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if value == "":
        return "empty"  # a condition cell is never empty (check refuses one)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _exact(value: Any) -> str:
    """A number with the digits the source wrote (JSON floats are read as decimals)."""
    text = str(value)
    if isinstance(value, Decimal) and "." in text and "E" not in text:
        text = text.rstrip("0").rstrip(".")
    return text
