"""The `benchledger` command. The only module that prints or exits.

Heavy libraries (pandas, altair, scipy, mkdocs) are imported inside the
commands so that `benchledger --help` stays fast.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from .errors import BenchledgerError, Problem

app = typer.Typer(
    help="Publish benchmark runs beside their corrections, limits and variance.\n\n"
    "A publication is a git repository with runs/<id>/ folders (run.yaml, manifest.yaml, "
    "results.csv) and reports under site_src/reports/. See FORMAT.md.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

Repo = Annotated[
    Path,
    typer.Option(
        "--repo",
        help="The publication repository (holds mkdocs.yml and runs/).",
        file_okay=False,
        show_default="current folder",
    ),
]


def fail(problems: list[Problem] | str) -> NoReturn:
    """Print every problem as `Error: ...` on stderr and exit 1."""
    if isinstance(problems, str):
        problems = [Problem("", None, None, problems)]
    for problem in problems:
        shown = str(problem).removeprefix(": ").lstrip()
        typer.echo(f"Error: {shown}", err=True)
    raise typer.Exit(1)


def _config_file(repo: Path) -> Path:
    path = repo / "mkdocs.yml"
    if not path.is_file():
        fail(f"{path}: not found; run benchledger in a publication repository or pass --repo DIR")
    return path


def _check(repo: Path, quiet: bool = False, allow_stale: bool = False) -> None:
    from .load import load
    from .receipts import ledger_receipts, receipt_problems

    ledger = load(repo)
    problems = list(ledger.problems)
    states, signer_problems = ledger_receipts(ledger)
    problems += signer_problems + receipt_problems(ledger, states, stale_is_error=not allow_stale)
    for problem in problems:
        if problem.severity == "warning":
            typer.echo(f"Warning: {problem}", err=True)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        typer.echo(f"{ledger.summary()}: {len(errors)} problem(s)", err=True)
        fail(sorted(errors, key=lambda p: (p.file, p.line or 0)))
    if not quiet:
        typer.echo(f"{ledger.summary()}: no problems")


@app.command()
def check(
    repo: Repo = Path("."),
    allow_stale: Annotated[bool, typer.Option(help="Report stale receipts as warnings instead of failing.")] = False,
) -> None:
    """Validate every run, manifest, results table, receipt and report.

    Prints one line per problem naming the file (and line), the field, what was
    found and how to fix it; exits 1 if there is any problem. A receipt whose
    files changed since it was written (stale) or whose signature fails is a problem.
    """
    _check(repo, allow_stale=allow_stale)


def _mkdocs_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False


BUILDERS = ("mkdocs", "properdocs", "zensical")
ZENSICAL_LIMITS = (
    "zensical runs no MkDocs plugins, so benchledger generated the pages first. Missing under zensical: "
    "the claims panel on report pages (the claims ledger and claim pages have it all), escaping of report "
    "front-matter titles (keep them plain text), and the plugin's theme.font override (keep font: false in "
    "mkdocs.yml)."
)


def _docs_dir(repo: Path) -> Path:
    """docs_dir from mkdocs.yml (default site_src), confined to the repository."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    data = yaml.load((repo / "mkdocs.yml").read_text(), Loader=Loader) or {}
    docs = (repo / str(data.get("docs_dir") or "site_src")).resolve()
    if not docs.is_relative_to(repo.resolve()):
        fail(f"{repo / 'mkdocs.yml'}: docs_dir: {docs} is outside the repository; use a folder inside it")
    return docs


def _generate(repo: Path) -> Any:
    from .sitefiles import generate_into

    try:
        return generate_into(repo.resolve(), _docs_dir(repo), _settings(repo, None, None))
    except BenchledgerError as err:
        fail(err.problems)


@app.command()
def generate(repo: Repo = Path(".")) -> None:
    """Write the generated pages, charts and assets into docs_dir, and nothing else.

    For builders that run no MkDocs plugins (zensical) or to inspect the pages;
    `build` and `serve` do this by themselves.
    """
    _config_file(repo)
    _check(repo, quiet=True, allow_stale=True)
    ledger, _, report = _generate(repo)
    typer.echo(
        f"{ledger.summary()}: {len(report.written)} files written, {report.unchanged} unchanged, "
        f"{len(report.removed)} removed"
    )


def _external_build(tool: str, config_file: Path, strict: bool, site_dir: Path | None) -> None:
    import shutil
    import subprocess

    exe = shutil.which(tool)
    if exe is None:
        fail(f"{tool} is not installed; pip install {tool}, or use --builder mkdocs")
    command = [exe, "build", "-f", str(config_file)] + (["--strict"] if strict else [])
    if site_dir is not None:
        if tool == "zensical":
            fail("--site-dir is not supported with zensical; set site_dir in mkdocs.yml")
        command += ["-d", str(site_dir.resolve())]
    done = subprocess.run(command, cwd=config_file.parent)
    if done.returncode != 0:
        fail(f"{tool} build failed (exit code {done.returncode}); see its output above")


@app.command()
def build(
    repo: Repo = Path("."),
    strict: Annotated[bool, typer.Option(help="Fail on any warning (broken links, stale receipts...).")] = False,
    site_dir: Annotated[
        Path | None, typer.Option(help="Where to write the site.", show_default="site/ in the repository")
    ] = None,
    builder: Annotated[str, typer.Option(help="mkdocs, properdocs (a maintained MkDocs fork) or zensical.")] = "mkdocs",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show MkDocs debug output.")] = False,
) -> None:
    """Check the publication, generate its pages, and build the site into site/."""
    if builder not in BUILDERS:
        fail(f"--builder {builder!r}: expected one of {', '.join(BUILDERS)}")
    config_file = _config_file(repo)
    _check(repo, quiet=True, allow_stale=not strict)
    if builder == "properdocs":
        _external_build("properdocs", config_file, strict, site_dir)
        typer.echo("Site built with properdocs (the benchledger plugin ran inside it).")
        return
    if builder == "zensical":
        _generate(repo)
        _external_build("zensical", config_file, strict, site_dir)
        typer.echo(ZENSICAL_LIMITS, err=True)
        typer.echo("Site built with zensical.")
        return
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    _mkdocs_logging(verbose)
    try:
        config = load_config(
            config_file=str(config_file), strict=strict, site_dir=str(site_dir.resolve()) if site_dir else None
        )
        mkdocs_build(config)
    except BenchledgerError as err:
        fail(err.problems)
    except MkDocsException as err:
        fail(str(err))
    typer.echo(f"Site written to {config.site_dir}")


@app.command()
def serve(
    repo: Repo = Path("."),
    dev_addr: Annotated[str, typer.Option(help="Address to serve on.")] = "127.0.0.1:8000",
    open_browser: Annotated[bool, typer.Option("--open", help="Open the site in a browser.")] = False,
) -> None:
    """Preview the publication with live reload; edits under runs/ and site_src/ rebuild it."""
    from mkdocs.commands.serve import serve as mkdocs_serve
    from mkdocs.exceptions import MkDocsException

    config_file = _config_file(repo)
    _check(repo, quiet=True, allow_stale=True)
    _mkdocs_logging(False)
    try:
        mkdocs_serve(config_file=str(config_file), dev_addr=dev_addr, livereload=True, open_in_browser=open_browser)
    except MkDocsException as err:
        fail(str(err))


@app.command()
def verify(
    run: Annotated[str, typer.Argument(help="The run: its folder (runs/<id>) or its id.")],
    by: Annotated[str, typer.Option("--by", help="Your name, as allowed_signers lists it when you sign.")],
    method: Annotated[str, typer.Option(help="rerun, review or recompute.")],
    statement: Annotated[str | None, typer.Option(help="What you did and what you found.")] = None,
    sign: Annotated[
        Path | None, typer.Option(help="SSH private key to sign the receipt with (runs ssh-keygen -Y sign).")
    ] = None,
    date: Annotated[str | None, typer.Option(help="Day of verification, YYYY-MM-DD.", show_default="today")] = None,
    repo: Repo = Path("."),
) -> None:
    """Write a receipt vouching for the run's files as they are now, optionally SSH-signed.

    The receipt lists the sha256 of every file in the run folder except receipts/;
    commit it. An existing receipt is never overwritten.
    """
    from .verify import write_receipt

    try:
        written = write_receipt(repo, run, by, method, statement, sign, date)
    except BenchledgerError as err:
        fail(err.problems)
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo("Commit the receipt; benchledger check now compares the run's files with it.")


@app.command()
def init(
    folder: Annotated[Path, typer.Argument(help="Where to create the publication.", file_okay=False)],
    force: Annotated[bool, typer.Option(help="Write into a non-empty folder.")] = False,
) -> None:
    """Create a new publication: mkdocs.yml, a home page, an example report with a claim and
    its correction, two example runs, a GitHub Pages workflow, .gitignore, .gitattributes
    and an allowed_signers stub."""
    from .init import scaffold

    try:
        written = scaffold(folder, force)
    except BenchledgerError as err:
        fail(err.problems)
    typer.echo(f"Created a publication in {folder} ({len(written)} files). Next:")
    typer.echo(f"  cd {folder}")
    typer.echo("  benchledger serve              # preview at http://127.0.0.1:8000 with live reload")
    typer.echo("  git init && git add . && git commit -m 'benchledger publication' && git push")


@app.command()
def schema(
    kind: Annotated[str, typer.Argument(help="run, manifest or receipt.")],
) -> None:
    """Print the JSON Schema of a file kind, for editors (see the format reference)."""
    import json

    from .model import json_schemas

    schemas = json_schemas()
    if kind not in schemas:
        fail(f"unknown kind {kind!r}; use one of: {', '.join(schemas)}")
    typer.echo(json.dumps(schemas[kind], indent=2))


run_app = typer.Typer(
    help="Measure a server or a command and write a run folder that benchledger check accepts.",
    no_args_is_help=True,
)
app.add_typer(run_app, name="run")

Setup = Annotated[list[str] | None, typer.Option("--setup", help="KEY=VALUE knob recorded in run.yaml; repeatable.")]
ManifestExtra = Annotated[
    Path | None, typer.Option(help="YAML merged into manifest.yaml (e.g. kernel paths the server cannot report).")
]
Title = Annotated[str | None, typer.Option(help="One line saying what this run is.")]
RunId = Annotated[str | None, typer.Option("--id", help="Run id (folder name).", show_default="DATE-slug of title")]
Out = Annotated[Path, typer.Option(help="Folder the run folder is written into.")]
Force = Annotated[bool, typer.Option(help="Replace an existing run folder of the same id.")]
Benchmark = Annotated[str | None, typer.Option(help="Workload name; only runs of one benchmark are compared.")]


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
    from .runner.main import Common

    return Common(
        params["title"],
        params["run_id"],
        params["out"],
        params["force"],
        params["setup"] or [],
        params["manifest_extra"],
        params["benchmark"],
        _invocation(command, params, rest),
    )


@run_app.command("openai")
def run_openai(
    base_url: Annotated[str, typer.Option(help="The server's OpenAI-compatible root.")] = "http://127.0.0.1:8080/v1",
    model: Annotated[str | None, typer.Option(help="Model id.", show_default="first of /v1/models")] = None,
    endpoint: Annotated[str, typer.Option(help="chat or completions.")] = "chat",
    prompts: Annotated[
        str | None, typer.Option(help="JSONL: a prompt or message list per line.", show_default="built-in set")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens to generate per request.")] = 256,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    concurrency: Annotated[str, typer.Option(help="Concurrent requests; a list sweeps, e.g. 1,8.")] = "1",
    trials: Annotated[int, typer.Option(help="Measured trials per concurrency.")] = 5,
    warmup: Annotated[int, typer.Option(help="Trials run and discarded first, per concurrency.")] = 1,
    requests: Annotated[int | None, typer.Option(help="Requests per trial.", show_default="4 x concurrency")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds allowed per request.")] = 600.0,
    setup: Setup = None,
    manifest_extra: ManifestExtra = None,
    title: Title = None,
    run_id: RunId = None,
    out: Out = Path("runs"),
    force: Force = False,
    benchmark: Benchmark = None,
) -> None:
    """Measure an OpenAI-compatible server (llama.cpp, vLLM, SGLang, Ollama) with streaming requests.

    Per trial: tokens/s (output tokens / trial wall time), requests/s, TTFT p50/p99,
    mean time per output token, errors, and drafted/accepted tokens when the server
    reports them (llama.cpp timings, vLLM /metrics).
    """
    params = dict(locals())
    from rich.console import Console

    from .runner.main import run_openai as run

    try:
        levels = [int(c) for c in concurrency.split(",") if c.strip()]
    except ValueError:
        fail(f"--concurrency {concurrency!r}: give integers separated by commas, e.g. 1,8")
    common = _common(params, "openai")
    try:
        run(
            common,
            base_url,
            model,
            endpoint,
            prompts,
            max_tokens,
            temperature,
            levels,
            trials,
            warmup,
            requests,
            timeout,
            Console(stderr=True),
        )
    except BenchledgerError as err:
        fail(err.problems)


@run_app.command("command")
def run_command(
    command: Annotated[list[str], typer.Argument(help="The command to measure, after --.")],
    trials: Annotated[int, typer.Option(help="Measured executions.")] = 5,
    warmup: Annotated[int, typer.Option(help="Executions run and discarded first.")] = 1,
    metric: Annotated[list[str] | None, typer.Option(help="NAME=REGEX read from stdout (first group).")] = None,
    json_metric: Annotated[list[str] | None, typer.Option(help="NAME=dotted.path into JSON on stdout.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds allowed per execution.")] = None,
    setup: Setup = None,
    manifest_extra: ManifestExtra = None,
    title: Title = None,
    run_id: RunId = None,
    out: Out = Path("runs"),
    force: Force = False,
    benchmark: Benchmark = None,
) -> None:
    """Run any command repeatedly: wall time per execution as wall_seconds, plus parsed figures.

    A failed execution is recorded and retried; the run stops after 3 failures in a row.
    Example: benchledger run command --trials 10 --metric tokens_per_second='([0-9.]+) tok/s' -- ./bench
    """
    params = {k: v for k, v in locals().items() if k != "command"}
    from rich.console import Console

    from .runner.main import run_command as run

    common = _common(params, "command", command)
    try:
        run(common, command, trials, warmup, metric or [], json_metric or [], timeout, Console(stderr=True))
    except BenchledgerError as err:
        fail(err.problems)


def _settings(repo: Path, min_effect: float | None, noise: float | None) -> Any:
    """The verdict parameters: command-line options, else the plugin configuration in mkdocs.yml."""
    import yaml

    from .claims import Settings

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # ignore !!python/name tags
    configured: dict[str, Any] = {}
    path = repo / "mkdocs.yml"
    if path.is_file():
        try:
            data = yaml.load(path.read_text(), Loader=Loader) or {}
        except yaml.YAMLError as err:
            fail(f"{path}: YAML syntax error: {err}")
        for entry in data.get("plugins") or []:
            if isinstance(entry, dict) and isinstance(entry.get("benchledger"), dict):
                configured = entry["benchledger"]
    return Settings(
        confidence=float(configured.get("confidence", 0.95)),
        min_effect=min_effect if min_effect is not None else float(configured.get("min_effect", 0.01)),
        noise=noise if noise is not None else configured.get("noise"),
    )


def _parse_at(items: list[str]) -> dict[str, Any]:
    import yaml

    at: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(f"--at {item!r}: write KEY=VALUE, e.g. --at concurrency=8")
        try:
            parsed = yaml.safe_load(value.strip())
        except yaml.YAMLError:
            parsed = value.strip()
        at[key.strip()] = parsed if isinstance(parsed, str | int | float | bool) else value.strip()
    return at


@app.command()
def compare(
    baseline: Annotated[str, typer.Argument(help="Run id of the baseline.")],
    candidate: Annotated[str, typer.Argument(help="Run id of the candidate.")],
    metric: Annotated[str, typer.Option(help="A metric or rate of both runs.")],
    at: Annotated[list[str] | None, typer.Option(help="Condition as KEY=VALUE; repeat for several.")] = None,
    varies: Annotated[
        list[str] | None, typer.Option(help="Dotted key the comparison varies on purpose; repeatable.")
    ] = None,
    repo: Repo = Path("."),
    min_effect: Annotated[float | None, typer.Option(help="Smallest change worth calling (0.01 = 1%).")] = None,
    noise: Annotated[float | None, typer.Option(help="Fixed noise band (0.06 = 6%); default: larger CV.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare two runs the way a claim is judged: ratio, interval, verdict, confounds.

    Exits 0 whatever the verdict, 1 on bad input.
    """
    import json

    from .claimcheck import validate_claims
    from .claims import compare as compare_runs
    from .load import Report, load
    from .model import Claim, ReportMeta

    ledger = load(repo)
    settings = _settings(repo, min_effect, noise)
    conditions = _parse_at(at or [])
    claim = Claim.model_validate(
        {
            "id": "compare",
            "statement": "compare",
            "metric": metric,
            "baseline": baseline,
            "candidate": candidate,
            "at": conditions,
            "varies": varies or [],
        }
    )
    meta = ReportMeta.model_validate({"title": "compare", "claims": [claim]})
    report = Report("compare", "command line", meta, "", "")
    failed = {p.file.split("/")[1] for p in ledger.errors if p.file.startswith("runs/") and "/" in p.file}
    problems = validate_claims(ledger.runs, [report], failed)
    for ref in (baseline, candidate):
        if ref in failed:
            problems.append(Problem(f"runs/{ref}", None, None, "has problems; run benchledger check"))
    if problems:
        fail([Problem(p.file, None, p.field.split(".")[-1] if p.field else None, p.message) for p in problems])
    result = compare_runs(ledger.runs[baseline], ledger.runs[candidate], metric, conditions, varies or [], settings)
    if as_json:
        typer.echo(json.dumps(_compare_json(baseline, candidate, metric, conditions, result), indent=2))
    else:
        _print_comparison(baseline, candidate, metric, result)


def _compare_json(baseline: str, candidate: str, metric: str, at: dict[str, Any], r: dict[str, Any]) -> dict:
    return {
        "baseline": baseline,
        "candidate": candidate,
        "metric": metric,
        "at": at,
        "n_baseline": r["baseline"].n,
        "n_candidate": r["candidate"].n,
        "ratio": r.get("ratio"),
        "ci_low": r.get("ci_low"),
        "ci_high": r.get("ci_high"),
        "noise": r.get("noise"),
        "min_effect": r["min_effect"],
        "verdict": r["verdict"],
        "trials_needed": r.get("trials_needed") if r["verdict"] == "inconclusive" else None,
        "confounds": [c.key for c in r["confounds"]],
    }


def _print_comparison(baseline: str, candidate: str, metric: str, r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from . import text as t

    console = Console(highlight=False)
    table = Table(title=f"{metric} at {r['baseline'].label}")
    for column in ("", "run", "n", "median", "mean [95% CI]"):
        table.add_column(column)
    for name, side in (("baseline", r["baseline"]), ("candidate", r["candidate"])):
        s = side.summary
        if s is None:
            shown = t.number(side.values[0]) if side.values else "–"
            table.add_row(name, side.run, "not reported", shown, "trials not reported")
        else:
            ci = f" [{t.number(s.ci_low)}, {t.number(s.ci_high)}]" if s.ci_low is not None else ""
            table.add_row(name, side.run, str(s.n), t.number(s.median), f"{t.number(s.mean)}{ci}")
    console.print(table)
    if r.get("ratio") is not None:
        interval = ""
        if r.get("ci_low") is not None:
            interval = f" [{t.number(r['ci_low'])}, {t.number(r['ci_high'])}]"
        console.print(f"ratio candidate/baseline: {t.number(r['ratio'])}{interval}")
    if r.get("noise") is not None:
        console.print(f"noise band: ±{r['noise']:.1%}   smallest change worth calling: ±{r['min_effect']:.1%}")
    console.print(f"verdict: [bold]{r['verdict']}[/bold]")
    console.print(r["reason"])
    if r.get("trials_needed"):
        console.print(f"trials needed per side: {r['trials_needed']}")
    if r["confounds"]:
        console.print("unmatched conditions (differ, not in --varies):")
        for c in r["confounds"]:
            console.print(f"  {c.key}: {c.baseline} -> {c.candidate}")


def main() -> None:
    try:
        app()
    except BenchledgerError as err:  # a library error that escaped a command
        for problem in err.problems:
            typer.echo(f"Error: {problem}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
