"""`benchledger run openai` and `benchledger run command`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from .common import fail, reported

Number = TypeVar("Number", int, float)

run_app = typer.Typer(
    help="Measure a server or a command and write a run folder that benchledger check accepts.",
    no_args_is_help=True,
)

Setup = Annotated[
    list[str] | None,
    typer.Option(
        "--setup",
        help="KEY=VALUE knob recorded in run.yaml; repeatable. VALUE is read as YAML (a number, true or false, "
        "else text); a whole number of more than 4,300 digits is kept as text.",
    ),
]
ManifestExtra = Annotated[
    Path | None, typer.Option(help="YAML merged into manifest.yaml (e.g. kernel paths the server cannot report).")
]
Title = Annotated[str | None, typer.Option(help="One line saying what this run is.")]
RunId = Annotated[str | None, typer.Option("--id", help="Run id (folder name).", show_default="DATE-slug of title")]
Out = Annotated[Path, typer.Option(help="Folder the run folder is written into.")]
Force = Annotated[
    bool,
    typer.Option(
        help="Replace an existing run folder of the same id: only while it holds the files it held at the "
        "start, which are named then and when they are replaced."
    ),
]
Benchmark = Annotated[str | None, typer.Option(help="Workload name; only runs of one benchmark are compared.")]
KeepPaths = Annotated[
    bool,
    typer.Option(
        help="Keep local absolute paths (a model file, the prompts, --out) as written in run.yaml and "
        "manifest.yaml; by default they become file names, and the run's notes say which."
    ),
]

Prompts = Annotated[
    str | None, typer.Option(help="JSONL: a prompt or message list per line.", show_default="built-in set")
]
Concurrency = Annotated[
    str | None,
    typer.Option(help="Concurrent requests (closed loop); a list sweeps, e.g. 1,8.", show_default="1"),
]
RequestRate = Annotated[
    str | None,
    typer.Option(
        help="Open loop: requests per second, arriving on their own schedule; a list sweeps, e.g. 2,4,8. "
        "Latency is measured from each scheduled arrival."
    ),
]
Burstiness = Annotated[
    float, typer.Option(help="Open loop: gamma shape of the inter-arrival times (1: Poisson; as vLLM).")
]
MaxConcurrency = Annotated[
    int | None, typer.Option(help="Open loop: at most this many requests in flight.", show_default="no cap")
]
Workers = Annotated[
    int | None,
    typer.Option(
        help="Processes sharing the streams, each its own event loop (a client-bound trial needs more).",
        show_default="one per 64 streams, at most the cores",
    ),
]
Ray = Annotated[
    str | None,
    typer.Option(
        help="Run the --workers as Ray actors on this cluster (an address, or local), so load can come from "
        "several machines; needs pip install 'benchledger[ray]'.",
        show_default="no Ray",
    ),
]
Slo = Annotated[
    str | None,
    typer.Option(help="SLOs for goodput, e.g. ttft=200ms,itl=50ms (ttft, itl, tpot, e2el).", show_default="none"),
]


def _invocation(command: str, params: dict[str, Any], rest: list[str] | None = None) -> list[str]:
    """The runner's own command line, rebuilt from its parameters so the run can be repeated."""
    args = ["benchledger", "run", command]
    for name, value in params.items():
        flag = "--" + ("id" if name == "run_id" else name.replace("_", "-"))
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, list):
            for item in value:
                args += [flag, str(item)]
        else:
            args += [flag, str(value)]
    return args + (["--", *rest] if rest else [])


def _common(params: dict[str, Any], command: str, rest: list[str] | None = None) -> Any:
    from ..runner.asked import Common

    return Common(
        title=params["title"],
        run_id=params["run_id"],
        out=params["out"],
        force=params["force"],
        setup=params["setup"] or [],
        manifest_extra=params["manifest_extra"],
        benchmark=params["benchmark"],
        invocation=_invocation(command, params, rest),
        keep_paths=params["keep_paths"],
    )


@run_app.command("openai")
def run_openai(
    *,
    base_url: Annotated[str, typer.Option(help="The server's OpenAI-compatible root.")] = "http://127.0.0.1:8080/v1",
    model: Annotated[str | None, typer.Option(help="Model id.", show_default="first of /v1/models")] = None,
    endpoint: Annotated[str, typer.Option(help="chat or completions.")] = "chat",
    prompts: Prompts = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens to generate per request.")] = 256,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    concurrency: Concurrency = None,
    request_rate: RequestRate = None,
    burstiness: Burstiness = 1.0,
    max_concurrency: MaxConcurrency = None,
    seed: Annotated[int, typer.Option(help="Open loop: seed of the arrival times.")] = 0,
    workers: Workers = None,
    ray: Ray = None,
    slo: Slo = None,
    trials: Annotated[int, typer.Option(help="Measured trials per concurrency.")] = 5,
    warmup: Annotated[int, typer.Option(help="Trials run and discarded first, per concurrency.")] = 1,
    requests: Annotated[int | None, typer.Option(help="Requests per trial.", show_default="4 x concurrency")] = None,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds allowed per request, for its whole answer; a streamed answer is also cut past "
            "1 MiB + 4 KiB per --max-tokens token. The server's /v1/models, /props, /slots, /version and "
            "/metrics answers each get --timeout (at most 30 s) and 4 MiB."
        ),
    ] = 600.0,
    setup: Setup = None,
    manifest_extra: ManifestExtra = None,
    title: Title = None,
    run_id: RunId = None,
    out: Out = Path("runs"),
    force: Force = False,
    benchmark: Benchmark = None,
    keep_paths: KeepPaths = False,
) -> None:
    """Measure an OpenAI-compatible server (llama.cpp, vLLM, SGLang, Ollama) with streaming requests.

    Per trial: tokens/s (output tokens / trial wall time), requests/s, TTFT, ITL, TPOT and
    end-to-end latency at p50/p90/p99, errors, goodput under --slo, drafted/accepted tokens
    when the server reports them (llama.cpp timings, vLLM /metrics), and the client's own
    event-loop lag, CPU and send delay, with trials past the limits flagged client_bound.
    """
    params = dict(locals())
    from rich.console import Console

    from ..runner.main import run_openai as run

    asked = _openai_options(params)
    common = _common(params, "openai")
    with reported():
        run(common, asked, Console(stderr=True))


def _openai_options(params: dict[str, Any]) -> Any:
    """`run openai`'s command line as the runner reads it: what is sent, and how the load is offered."""
    from ..runner.asked import OpenAIOptions
    from ..runner.options import LoadOptions

    given = params["concurrency"]
    levels = _listed("--concurrency", given or "1", int, "integers separated by commas, e.g. 1,8")
    rate = params["request_rate"]
    rates = _listed("--request-rate", rate, float, "requests per second separated by commas, e.g. 2,4.5")
    load = LoadOptions(
        request_rate=rates,
        burstiness=params["burstiness"],
        seed=params["seed"],
        max_concurrency=params["max_concurrency"],
        slo=params["slo"],
        concurrency_given=given is not None,
        workers=params["workers"],
        ray=params["ray"],
    )
    return OpenAIOptions(
        base_url=params["base_url"],
        model=params["model"],
        endpoint=params["endpoint"],
        prompts=params["prompts"],
        max_tokens=params["max_tokens"],
        temperature=params["temperature"],
        concurrency=levels,
        trials=params["trials"],
        warmup=params["warmup"],
        requests=params["requests"],
        timeout=params["timeout"],
        load=load,
    )


def _listed(flag: str, text: str | None, kind: Callable[[str], Number], example: str) -> list[Number]:
    """A comma-separated option as its values (none when not given)."""
    try:
        return [kind(item) for item in (text or "").split(",") if item.strip()]
    except ValueError:
        fail(f"{flag} {text!r}: give {example}")


@run_app.command("command")
def run_command(
    *,
    command: Annotated[list[str], typer.Argument(help="The command to measure, after --.")],
    trials: Annotated[int, typer.Option(help="Measured executions.")] = 5,
    warmup: Annotated[int, typer.Option(help="Executions run and discarded first.")] = 1,
    metric: Annotated[list[str] | None, typer.Option(help="NAME=REGEX read from stdout (first group).")] = None,
    json_metric: Annotated[list[str] | None, typer.Option(help="NAME=dotted.path into JSON on stdout.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds allowed per execution.")] = None,
    unit: Annotated[list[str] | None, typer.Option(help="NAME=UNIT of a parsed metric, e.g. tps=tok/s.")] = None,
    better: Annotated[
        list[str] | None, typer.Option(help="NAME=higher|lower: which way a parsed metric improves.")
    ] = None,
    setup: Setup = None,
    manifest_extra: ManifestExtra = None,
    title: Title = None,
    run_id: RunId = None,
    out: Out = Path("runs"),
    force: Force = False,
    benchmark: Benchmark = None,
    keep_paths: KeepPaths = False,
) -> None:
    """Run any command repeatedly: wall time per execution as wall_seconds, plus parsed figures.

    A failed execution is recorded and retried; the run stops after 3 failures in a row.
    Example: benchledger run command --trials 10 --metric tokens_per_second='([0-9.]+) tok/s'
    --unit tokens_per_second=tok/s --better tokens_per_second=higher -- ./bench

    A metric without --better is shown but never judged: claims need to know which way is better.
    """
    params = {k: v for k, v in locals().items() if k != "command"}
    from rich.console import Console

    from ..runner.asked import CommandOptions
    from ..runner.main import run_command as run

    common = _common(params, "command", command)
    with reported():
        asked = CommandOptions(
            command=command,
            trials=trials,
            warmup=warmup,
            regexes=metric or [],
            json_paths=json_metric or [],
            timeout=timeout,
            declared=_declared(unit or [], better or []),
        )
        run(common, asked, Console(stderr=True))


def _declared(units: list[str], directions: list[str]) -> dict[str, dict[str, str]]:
    """--unit NAME=UNIT and --better NAME=higher|lower as each metric's declaration."""
    out: dict[str, dict[str, str]] = {}
    for flag, items, key in (("--unit", units, "unit"), ("--better", directions, "better")):
        for item in items:
            name, sep, value = (part.strip() for part in item.partition("="))
            if not sep or not name or not value or len(value) > 40 or not value.isprintable():
                example = (
                    "UNIT (printable, at most 40 characters), e.g. tps=tok/s" if key == "unit" else "higher or lower"
                )
                fail(f"{flag} {item[:80]!r}: write NAME={example}")
            if key == "better" and value not in ("higher", "lower"):
                fail(f"{flag} {item!r}: the direction is higher or lower, e.g. {name}=higher")
            out.setdefault(name, {})[key] = value
    return out
