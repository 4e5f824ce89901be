"""Where llama-bench's output lies in a text file, found by its content, not by the file's name.

Output as people save it (`llama-bench ... > out.log 2>&1`) holds more than llama-bench's
table: the device lines the backends print first (`ggml_cuda_init: found 1 CUDA devices:` and
`  Device 0: NAME, compute capability 8.9, ...`; `ggml_vulkan: 0 = NAME (DRIVER) | uma: ...`),
warnings, the command line when it was copied from a terminal, the `build: COMMIT (NUMBER)`
line after a Markdown table, and often several invocations appended one after another. This
module finds each invocation, whatever the extension (`.txt`, `.log`, `.md`, `.json`...):

- a Markdown table: a `|` line whose cells include `test` and `t/s`, then its `| --- |` line,
  then its rows (other lines inside it, such as `ggml_vulkan: Compiling shaders...Done!`, are
  skipped); it ends at a blank line, a `build:` line or the next table;
- a JSON array (`-o json`), however many are appended;
- a run of JSONL lines (`-o jsonl`): lines that are not JSON between them end the run;
- a CSV header (`-o csv`, starting `build_commit,`) and its rows, up to the next header.

Each `Block` keeps the file lines it spans, and the lines around it that say what the table
does not: the accelerators the device lines name, the build line, the command line. Every
other line is skipped and counted; the original file under raw/ keeps it.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..errors import BenchledgerError, Problem

BUILD = re.compile(r"^build: (\S{1,80}) \((\d{1,12})\)\s*$")
VULKAN_DEVICE = re.compile(r"^ggml_vulkan:\s*(\d{1,3}) = (.{1,300}) \(([^()]{0,200})\) \| ")
CUDA_INIT = re.compile(r"^ggml_cuda_init: found \d{1,3} \w{1,20} devices?")
CUDA_DEVICE = re.compile(r"^\s{1,8}Device (\d{1,3}): ([^,]{1,300}),")
SEPARATOR = re.compile(r"^:?-{1,}:?$")
CSV_HEADER = re.compile(r'^"?build_commit"?,')
COMMAND = "llama-bench"
MAX_COMMAND = 300


@dataclass(kw_only=True)
class Block:
    """One llama-bench invocation's output: its kind, the file lines it spans, its items (each
    with the file line it starts on) and what the lines around it say."""

    kind: str  # md | json | jsonl | csv
    start: int
    end: int
    header: list[str] = field(default_factory=list)  # md and csv: the column names
    items: list[tuple[int, Any]] = field(default_factory=list)  # md, csv: cells; json, jsonl: objects
    devices: list[str] = field(default_factory=list)  # accelerator names from the device lines before it
    build: tuple[str, int] | None = None  # md: the `build: COMMIT (NUMBER)` line after it
    command: str | None = None  # the last line before it that names llama-bench


@dataclass(kw_only=True)
class Found:
    """Every block of one file, and the lines that belong to none (left out of the run)."""

    kind: str
    blocks: list[Block]
    skipped: list[int]


def find(name: str, text: str) -> Found:
    """The llama-bench output in `text`, of the kind its first recognizable line shows."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    kind = _kind(name, lines)
    if kind == "md":
        return _markdown(lines)
    if kind == "csv":
        return _csv(name, lines)
    return _json(name, text, lines)


def _kind(name: str, lines: list[str]) -> str:
    table = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if _md_header(stripped):
            return "md"
        if stripped.startswith(("[", "{")):
            return "json"
        if CSV_HEADER.match(stripped):
            return "csv"
        if table is None and stripped.startswith("|"):
            table = number
    if table is not None:
        message = (
            "holds a Markdown table, but none with llama-bench's `test` and `t/s` columns; give llama-bench's "
            "default output (or -o json)"
        )
        raise BenchledgerError(Problem(file=name, line=table, message=message))
    message = (
        "holds no llama-bench output: no Markdown table with `test` and `t/s` columns, no JSON and no CSV header "
        "starting build_commit; give llama-bench's output (-o json, jsonl, csv, or its default table)"
    )
    raise BenchledgerError(Problem(file=name, message=message))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _md_header(stripped: str) -> bool:
    if not stripped.startswith("|"):
        return False
    cells = _cells(stripped)
    return "test" in cells and "t/s" in cells


class _Context:
    """What the lines between two blocks say: accelerators, and the command that ran."""

    def __init__(self) -> None:
        self.devices: dict[tuple[str, str], str] = {}
        self.command: str | None = None
        self.cuda = False
        self.skipped: list[int] = []

    def read(self, number: int, line: str) -> None:
        if line.strip():
            self.skipped.append(number)
        vulkan = VULKAN_DEVICE.match(line)
        if vulkan:
            self.devices.setdefault(("vulkan", vulkan.group(1)), vulkan.group(2).strip())
            return
        if CUDA_INIT.match(line):
            self.cuda = True
            return
        cuda = CUDA_DEVICE.match(line)
        if cuda and self.cuda:
            self.devices.setdefault(("cuda", cuda.group(1)), cuda.group(2).strip())
            return
        if COMMAND in line and not line.lstrip().startswith(("|", "{", "[")):
            self.command = line.strip()[:MAX_COMMAND]

    def start(self, block: Block) -> None:
        block.devices = list(self.devices.values())
        block.command = self.command
        self.devices, self.command, self.cuda = {}, None, False


def _markdown(lines: list[str]) -> Found:
    blocks: list[Block] = []
    context = _Context()
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not (_md_header(stripped) and i + 1 < len(lines) and _separator(lines[i + 1])):
            context.read(i + 1, lines[i])
            i += 1
            continue
        block = Block(kind="md", start=i + 1, end=i + 2, header=_cells(stripped))
        context.start(block)
        j = i + 2
        while j < len(lines):
            row = lines[j].strip()
            if not row or BUILD.match(row) or _md_header(row):
                break
            if row.startswith("|"):
                block.items.append((j + 1, _cells(row)))
                block.end = j + 1
            else:
                context.skipped.append(j + 1)  # a line printed inside the table (stderr)
            j += 1
        k = j
        while k < len(lines) and not lines[k].strip():
            k += 1
        build = BUILD.match(lines[k].strip()) if k < len(lines) else None
        if build:
            block.build = (build.group(1), int(build.group(2)))
            block.end, j = k + 1, k + 1
        blocks.append(block)
        i = j
    return Found(kind="md", blocks=blocks, skipped=context.skipped)


def _separator(line: str) -> bool:
    cells = _cells(line)
    return line.strip().startswith("|") and bool(cells) and all(SEPARATOR.match(c) for c in cells)


def _csv(name: str, lines: list[str]) -> Found:
    blocks: list[Block] = []
    context = _Context()
    i = 0
    while i < len(lines):
        if not CSV_HEADER.match(lines[i].strip()):
            context.read(i + 1, lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() and not CSV_HEADER.match(lines[j].strip()):
            j += 1
        block = Block(kind="csv", start=i + 1, end=j)
        context.start(block)
        rows = _csv_rows(name, "\n".join(lines[i:j]), i)
        block.header = [h.strip() for h in rows[0][1]] if rows else []
        block.items = rows[1:]
        blocks.append(block)
        i = j
    return Found(kind="csv", blocks=blocks, skipped=context.skipped)


def _csv_rows(name: str, text: str, offset: int) -> list[tuple[int, list[str]]]:
    """The rows of one CSV block, each with the file line it starts on."""
    reader = csv.reader(io.StringIO(text, newline=""))
    out: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for cells in reader:
            out.append((offset + start, cells))
            start = reader.line_num + 1
    except csv.Error as err:
        line = offset + reader.line_num
        if "field larger than field limit" in str(err):
            message = (
                f"a cell is longer than {csv.field_size_limit():,} characters, which llama-bench never writes; "
                "give llama-bench's own -o csv output"
            )
        else:
            message = f"is not llama-bench -o csv output (CSV error: {str(err)[:120]})"
        raise BenchledgerError(Problem(file=name, line=line, message=message)) from None
    return out


def _json(name: str, text: str, lines: list[str]) -> Found:
    """JSON arrays (-o json) or JSON lines (-o jsonl), with the lines between them skipped."""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]  # the offset each file line starts at
    blocks: list[Block] = []
    context = _Context()
    kind = ""
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("["):
            kind = kind or "json"
            block = Block(kind="json", start=i + 1, end=i + 1)
            context.start(block)
            items, end = _array(name, text, starts[i] + lines[i].index("["), starts)
            block.items, block.end = items, _line_of(starts, end - 1)
            blocks.append(block)
            i = block.end
            continue
        if stripped.startswith("{"):
            kind = kind or "jsonl"
            block = Block(kind="jsonl", start=i + 1, end=i + 1)
            context.start(block)
            while i < len(lines) and (lines[i].strip().startswith("{") or not lines[i].strip()):
                if lines[i].strip():
                    block.items.append((i + 1, _object(name, lines[i], i + 1)))
                    block.end = i + 1
                i += 1
            blocks.append(block)
            continue
        context.read(i + 1, lines[i])
        i += 1
    return Found(kind=kind, blocks=blocks, skipped=context.skipped)


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)


def _object(name: str, line: str, number: int) -> Any:
    try:
        return json.loads(line, parse_float=Decimal)
    except (ValueError, RecursionError) as err:
        raise BenchledgerError(
            Problem(file=name, line=number, message=f"is not llama-bench jsonl ({str(err)[:120]})")
        ) from None


_SPACE = re.compile(r"\s*")


def _array(name: str, text: str, pos: int, starts: list[int]) -> tuple[list[tuple[int, Any]], int]:
    """The items of the JSON array that opens at `pos`, each with its file line, and the offset
    just past the array."""
    decoder = json.JSONDecoder(parse_float=Decimal)
    items: list[tuple[int, Any]] = []
    i = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
    try:
        if text.startswith("]", i):
            return items, i + 1
        while True:
            found, end = decoder.raw_decode(text, i)
            items.append((_line_of(starts, i), found))
            i = _SPACE.match(text, end).end()  # type: ignore[union-attr]
            if text.startswith(",", i):
                i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
            elif text.startswith("]", i):
                return items, i + 1
            else:
                raise json.JSONDecodeError("expected ',' or ']'", text, i)
    except json.JSONDecodeError as err:
        line = _line_of(starts, err.pos)
        raise BenchledgerError(Problem(file=name, line=line, message=f"is not llama-bench json ({err.msg})")) from None
    except RecursionError:
        raise BenchledgerError(
            Problem(file=name, line=_line_of(starts, i), message="is not llama-bench json (nested too deeply)")
        ) from None
