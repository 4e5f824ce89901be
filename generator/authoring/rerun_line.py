"""The line a rerun executes: the run's recorded `benchledger run` invocation with the rerun's
own settings (`recorded_line`, `with_option`), and the check that the run parser reads it as the
run page shows (`check_reading`), made before anything is shown or run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import BenchledgerError, Problem
from ..format.commands import hidden_problems, shell_line
from ..ledger.invocation import invocation_problems, option_value, runner_argv
from ..ledger.records import RUNS_DIR, Run

# runner fields a run page shows, each set by the `run openai` parameter of the same name
SHOWN = ("base_url", "endpoint", "model", "prompts")


def recorded_line(run: Run, *, base_url: str | None, trials: int | None) -> list[str]:
    """The recorded argv, measuring into a temporary folder, with --base-url and --trials set."""
    where = f"{RUNS_DIR}/{run.id}/run.yaml"
    if run.meta.source.kind != "measured":
        kind = run.meta.source.kind
        message = f"is a {kind} run: its figures were measured elsewhere, so there is no invocation here to repeat"
        raise BenchledgerError(Problem(file=where, field="source.kind", message=message))
    if run.meta.imported is not None:
        tool = run.meta.imported.tool
        message = f"was imported from {tool}: run {tool} again and import its output, then compare the two runs"
        raise BenchledgerError(Problem(file=where, field="imported", message=message))
    runner = run.meta.runner
    if runner is None or not runner.invocation:
        message = "records no runner invocation (runner.invocation); only runs made by `benchledger run` can be rerun"
        raise BenchledgerError(Problem(file=where, field="runner", message=message))
    problems = invocation_problems(run.meta, f"{RUNS_DIR}/{run.id}", {})
    if problems:
        raise BenchledgerError(problems)
    argv = runner_argv(runner)
    cut = argv.index("--") if "--" in argv else len(argv)
    argv = [a for a in argv[:cut] if a != "--force"] + argv[cut:]  # the program's own --force stays
    if base_url is not None:
        if argv[1] != "openai":
            raise BenchledgerError(Problem(file="--base-url", message="only a `run openai` run measured a server"))
        argv = with_option(argv, "--base-url", base_url)
    if trials is not None:
        argv = with_option(argv, "--trials", str(trials))
    return with_option(argv, "--ray", None)  # a rerun measures from this machine, never through a cluster the run names


def with_option(argv: Sequence[str], option: str, value: str | None) -> list[str]:
    """argv without `option` (as `--opt value` or `--opt=value`), then with it set to value,
    before a `--` that ends the runner's own options (`run command ... -- PROGRAM ARGS`)."""
    if "--" in argv:
        cut = list(argv).index("--")
        return [*with_option(argv[:cut], option, value), *argv[cut:]]
    out, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == option:
            skip = i + 1 < len(argv)
            continue
        if arg.startswith(option + "="):
            continue
        out.append(arg)
    return out if value is None else [*out, option, value]


def check_reading(original: Run, given: Mapping[str, Any], argv: list[str]) -> None:
    """Refuse a line that, as the parser reads it, runs another program or measures another
    server than the run page shows: `check` compares the recorded words, this compares what
    they mean (a program given before `--`, an option given twice of which the parser keeps
    the last)."""
    runner = original.meta.runner
    assert runner is not None  # _invocation refused a run without one
    where = f"{RUNS_DIR}/{original.id}/run.yaml"
    # check refuses these too (ledger.invocation.command_problems); a rerun refuses them whether
    # or not check ran: in the recorded words, else in the line it would execute
    unreadable = hidden_problems(runner.invocation) or hidden_problems(argv)
    if unreadable:
        raise BenchledgerError(
            [Problem(file=where, field="runner.invocation", message=f"{m}; nothing was run") for _, m in unreadable]
        )
    fix = "the rerun would measure something else than the run page shows; nothing was run"
    if runner.kind == "command":
        shown = runner.extras.get("command")
        if list(given.get("command") or []) != shown:
            ran = shell_line(list(given.get("command") or []))
            message = f"benchledger run reads it as running `{ran}`, not `{shell_line(shown or [])}`; {fix}"
            raise BenchledgerError(Problem(file=where, field="runner.invocation", message=message))
        return
    for name in SHOWN:
        option = "--" + name.replace("_", "-")
        shown = option_value(argv, option) if name == "base_url" else getattr(runner, name)  # as the rerun set it
        got = given.get(name)
        if name == "prompts" and got is None:
            got = "built-in"  # what the page shows for the runner's own prompts
        if got is not None and shown is not None and str(got) != str(shown):
            message = f"benchledger run reads {option} as {str(got)!r}, the run page shows {str(shown)!r}; {fix}"
            raise BenchledgerError(Problem(file=where, field="runner.invocation", message=message))
