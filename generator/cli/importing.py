"""`benchledger import`: a foreign tool's output as a run folder."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import fail, reported

if TYPE_CHECKING:
    from ..importers.common import Imported

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
) -> None:
    """Import results from a tool you already run into a run folder that benchledger check accepts.

    llama-bench: each test becomes a condition (n_prompt, n_gen, n_depth when recorded, and
    every field or column that varies between tests); every other field, a fork's included, is
    kept in the manifest; JSON and JSONL repetitions become trials (trial_unit: repetition);
    CSV and Markdown means and SDs become a reported run with published summaries (give
    --repetitions).
    vllm-bench: each saved result is one pass (a trial, trial_unit: session) at its traffic
    (request_rate, max_concurrency, and whatever else differs between files); throughputs and
    latency percentiles are its metrics; --save-detailed requests go to requests.csv; a pass in
    which no request completed, or passes reporting different metrics, are refused.
    guidellm: each benchmark of the report is one pass at its load (concurrency, rate, or
    strategy); several reports of the same sweep are trials; sampled requests go to requests.csv.
    hyperfine: each command's times become trials (trial_unit: process), its parameters (or
    the command) the conditions; failed runs are excluded with their exit code.
    pytest-benchmark: rounds (--benchmark-save-data) become trials, parameters the conditions;
    a summary export is a reported run (trial_unit: repetition), several summary exports one
    trial per pytest process; machine_info and commit_info the manifest. Local paths become file
    names (unless --keep-paths). The original files are kept in raw/ with their sha256 in run.yaml.
    """
    from ..importers.common import Options, read_inputs, write_run

    _check(tool, repetitions)
    with reported():
        inputs = read_inputs(files)
        imported = _parse(tool, inputs, repetitions)
        options = Options(
            run_id=run_id,
            out=out,
            force=force,
            title=title,
            benchmark=benchmark,
            setup=_knobs(setup or []),
            citation=citation,
            url=url,
            date=_day(date),
            keep_paths=keep_paths,
        )
        path = write_run(imported, inputs, options)
    typer.echo(f"Wrote {path} ({len(imported.rows)} rows, {len(imported.conditions)} conditions)")
    for note in imported.notes:
        typer.echo(f"Note: {note}")
    typer.echo("Run benchledger check, then commit the folder.")


def _check(tool: str, repetitions: int | None) -> None:
    """The tool and --repetitions, refused before a file is read."""
    if tool not in FORMATS:
        fail(f"unknown tool {tool!r}; this benchledger imports: {', '.join(FORMATS)}")
    if repetitions is not None and not 2 <= repetitions <= 100_000:
        fail("--repetitions: give the number of repetitions behind each mean, 2 or more")


def _parse(tool: str, inputs: list[tuple[str, bytes]], repetitions: int | None) -> Imported:
    """The files read by the tool's importer (llama-bench's summaries need the repetitions)."""
    from ..importers import guidellm, hyperfine, llama_bench, pytest_benchmark, vllm_bench

    if tool == "llama-bench":
        return llama_bench.parse(inputs, repetitions)
    parsers = {"vllm-bench": vllm_bench, "guidellm": guidellm, "hyperfine": hyperfine}
    found: Imported = parsers.get(tool, pytest_benchmark).parse(inputs)
    return found


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
