"""`benchledger import`: a foreign tool's output as a run folder."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import fail, reported

if TYPE_CHECKING:
    from ..importers.common import Imported
    from ..importers.machines import OnMachine

    Parts = list[tuple[OnMachine[tuple[str, bytes]], Imported]]

FORMATS = ("llama-bench", "vllm-bench", "guidellm", "hyperfine", "pytest-benchmark")


Tool = Annotated[
    str,
    typer.Argument(
        help="The tool that wrote the files: llama-bench, vllm-bench, guidellm, hyperfine, pytest-benchmark."
    ),
]
Files = Annotated[
    list[Path],
    typer.Argument(
        help="Its output: llama-bench -o json|jsonl|csv or its Markdown table; vllm bench serve --save-result "
        "JSON (one file per pass); guidellm's benchmarks.json or .yaml; hyperfine --export-json; "
        "pytest --benchmark-json."
    ),
]
Citation = Annotated[str | None, typer.Option(help="Who measured it, when not you (a republished or reported run).")]
Repetitions = Annotated[
    int | None,
    typer.Option(
        help="Repetitions behind each mean of a llama-bench csv or Markdown summary (its -r; 5 when not "
        "given); required for those formats, so their SDs are kept."
    ),
]
SplitBy = Annotated[
    str | None,
    typer.Option(
        "--split-by",
        help="machine: files (or llama-bench tests) measured on different machines become one run each, "
        "ID-1, ID-2, ... in order of appearance; without it they are refused, naming both machines.",
    ),
]
KeepPaths = Annotated[
    bool,
    typer.Option(
        help="Keep local absolute paths (model files) as written; by default they become file names. "
        "check refuses a run that publishes them."
    ),
]


def import_results(
    *,
    tool: Tool,
    files: Files,
    run_id: Annotated[str, typer.Option("--id", help="Run id (the folder name), e.g. 2026-09-01-q4-cpu.")],
    title: Annotated[str | None, typer.Option(help="One line saying what this run is.")] = None,
    benchmark: Annotated[str | None, typer.Option(help="Workload name.", show_default="the tool's name")] = None,
    setup: Annotated[list[str] | None, typer.Option(help="KEY=VALUE knob recorded in run.yaml; repeatable.")] = None,
    citation: Citation = None,
    url: Annotated[str | None, typer.Option(help="Where they published it (http or https).")] = None,
    repetitions: Repetitions = None,
    date: Annotated[str | None, typer.Option(help="Day measured, YYYY-MM-DD.", show_default="from the file")] = None,
    out: Annotated[Path, typer.Option(help="Folder the run folder is written into.")] = Path("runs"),
    force: Annotated[bool, typer.Option(help="Replace an existing run folder of the same id.")] = False,
    keep_paths: KeepPaths = False,
    split_by: SplitBy = None,
) -> None:
    """Import results from a tool you already run into a run folder that benchledger check accepts.

    llama-bench: its output is found by content in any text file (a saved log's device and
    build lines are read, other lines left out); each test becomes a condition (n_prompt,
    n_gen, n_depth when recorded, and every field or column that varies between tests); every
    other field, a fork's included, is kept in the manifest; JSON and JSONL repetitions become
    trials (trial_unit: repetition); CSV and Markdown means and SDs become a reported run with
    published summaries (give --repetitions; an SD printed 0.00 is kept as <0.005); appended
    invocations of the same tests get an invocation condition.
    vllm-bench: each saved result is one pass (a trial, trial_unit: session) at its traffic
    (request_rate, max_concurrency, and whatever else differs between files); every figure it
    measured is a metric, never a setting (throughputs, latency percentiles, the older
    *_latency_ms as *_e2el_ms, completed and failed requests, a fork's counters); unfinished
    prompts count as failed; --save-detailed requests go to requests.csv (no token: an error); a
    pass in which no request completed, or passes reporting different metrics, are refused.
    guidellm: each benchmark of the report is one pass at its load (concurrency, rate, or
    strategy); several reports of the same sweep are trials; sampled requests go to requests.csv.
    hyperfine: each command's times become trials (trial_unit: process), its parameters (or
    the command) the conditions; failed runs are excluded with their exit code.
    pytest-benchmark: rounds (--benchmark-save-data) become trials, parameters the conditions;
    a summary export is a reported run (trial_unit: repetition), several summary exports one
    trial per pytest process; machine_info and commit_info the manifest. Local paths become file
    names (unless --keep-paths). The original files are kept in raw/ with their sha256 in run.yaml.
    A run is measured on one machine: files from different machines are refused, or with
    --split-by machine become one run per machine.
    """
    from ..importers.common import Options, read_inputs, write_run
    from ..importers.machines import refuse_machines

    _check(tool, repetitions, split_by)
    with reported():
        inputs = read_inputs(files)
        parts = _parse(tool, inputs, repetitions)
        if split_by is None:
            refuse_machines([group for group, _ in parts])
        written = []
        for k, (group, imported) in enumerate(parts, start=1):
            shown = title or f"{imported.tool} results imported from {', '.join(n for n, _ in group.items)}"
            options = Options(
                run_id=run_id if len(parts) == 1 else f"{run_id}-{k}",
                out=out,
                force=force,
                title=shown if len(parts) == 1 else f"{shown}, on {group.machine.described()}",
                benchmark=benchmark,
                setup=_knobs(setup or []),
                citation=citation,
                url=url,
                date=_day(date),
                keep_paths=keep_paths,
            )
            written.append((write_run(imported, group.items, options, say=typer.echo), imported, group))
    for path, imported, group in written:
        typer.echo(f"Wrote {path} ({len(imported.rows)} rows, {len(imported.conditions)} conditions)")
        if len(written) > 1:
            typer.echo(f"Machine: {group.machine.described()} ({', '.join(group.where)})")
        for note in imported.notes:
            typer.echo(f"Note: {note}")
    typer.echo("Run benchledger check, then commit the folder" + ("s." if len(written) > 1 else "."))


def _check(tool: str, repetitions: int | None, split_by: str | None) -> None:
    """The tool, --repetitions and --split-by, refused before a file is read."""
    if tool not in FORMATS:
        fail(f"unknown tool {tool!r}; this benchledger imports: {', '.join(FORMATS)}")
    if repetitions is not None and not 2 <= repetitions <= 100_000:
        fail("--repetitions: give the number of repetitions behind each mean, 2 or more")
    if split_by not in (None, "machine"):
        fail(f"--split-by {split_by!r}: the one way to split an import is --split-by machine")


def _parse(tool: str, inputs: list[tuple[str, bytes]], repetitions: int | None) -> Parts:
    """The files read by the tool's importer, one run per machine they record (llama-bench's
    summaries need the repetitions; its tests each record their machine)."""
    from ..importers import guidellm, hyperfine, llama_bench, pytest_benchmark, vllm_bench
    from ..importers.machines import per_machine

    if tool == "llama-bench":
        return llama_bench.parse(inputs, repetitions)
    if tool == "guidellm":  # the server its target names, not the client's platform alone
        return per_machine(inputs, guidellm.parse, guidellm.machine)
    parsers = {"vllm-bench": vllm_bench, "hyperfine": hyperfine}
    return per_machine(inputs, parsers.get(tool, pytest_benchmark).parse)


def _knobs(items: list[str]) -> dict[str, object]:
    from ..format.keys import parse_assignment

    knobs = {}
    for item in items:
        parsed = parse_assignment(item)
        if parsed is None:
            fail(f"--setup {item!r}: write KEY=VALUE, e.g. --setup quant=Q4_K_M")
        knobs[parsed[0]] = parsed[1]
    return knobs


def _day(text: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if text else None
    except ValueError:
        fail(f"--date {text!r}: write YYYY-MM-DD")
