"""A measured run's `runner.invocation` (what `benchledger rerun` executes) must say what its
`runner` fields show a reader (`runner.command`, `runner.base_url`, ...): an invocation edited
behind a harmless display is refused, so a rerun never executes a command nobody was shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import Problem
from ..format.commands import hidden_problems, shell_line
from ..format.models import RunFile, Runner
from .yamlio import Lines

RERUNNABLE = ("openai", "command")
# runner field shown to a reader -> the `run openai` option that sets it, and its value when the
# option is absent (None: no default to compare with, e.g. the model the server listed first)
OPENAI_FIELDS = {
    "base_url": ("--base-url", "http://127.0.0.1:8080/v1"),
    "endpoint": ("--endpoint", "chat"),
    "model": ("--model", None),
    "prompts": ("--prompts", "built-in"),
}


# the options of `benchledger run openai` and `run command` that take no value (tests/test_rerun.py
# holds this to the CLI's own); every other option takes one, as `--opt value` or `--opt=value`
FLAGS = frozenset({"--force", "--no-force", "--keep-paths", "--no-keep-paths"})
# options a run page shows (or a rerun must not inherit): given once at most
ONCE = ("--base-url", "--endpoint", "--model", "--prompts", "--ray")


def runner_argv(runner: Runner) -> list[str]:
    """The recorded invocation without a leading `benchledger`."""
    argv = list(runner.invocation)
    return argv[1:] if argv[:1] == ["benchledger"] else argv


def option_value(argv: Sequence[str], option: str) -> str | None:
    """The value of `--opt value` or `--opt=value` among the runner's own options (before `--`)."""
    own = list(argv[: list(argv).index("--")] if "--" in argv else argv)
    for i, arg in enumerate(own):
        if arg == option and i + 1 < len(own):
            return own[i + 1]
        if arg.startswith(option + "="):
            return arg.split("=", 1)[1]
    return None


def stray_words(argv: Sequence[str]) -> list[str]:
    """Words among the runner's own options (after `run KIND`, before `--`) that no option takes:
    the parser hands them to the command as its program, whatever follows `--`."""
    own = list(argv[: list(argv).index("--")] if "--" in argv else argv)[2:]
    stray, i = [], 0
    while i < len(own):
        word = own[i]
        if not word.startswith("-"):
            stray.append(word)
        elif "=" not in word and word not in FLAGS:
            i += 1  # its value
        i += 1
    return stray


def repeated(argv: Sequence[str]) -> list[str]:
    """Options of ONCE given more than once (the parser keeps the last; a reader sees the first)."""
    own = list(argv[: list(argv).index("--")] if "--" in argv else argv)
    names = [word.split("=", 1)[0] for word in own if word.startswith("--")]
    return [option for option in ONCE if names.count(option) > 1]


def program(argv: Sequence[str]) -> list[str]:
    """What a `run command` invocation times: everything after its `--`."""
    return list(argv[list(argv).index("--") + 1 :]) if "--" in argv else []


def invocation_problems(meta: RunFile, rel: str, lines: Lines) -> list[Problem]:
    """Problems of a recorded command a person cannot read whole (`command_problems`), and of a
    measured run whose recorded invocation disagrees with its runner fields."""
    runner = meta.runner
    unreadable = command_problems(runner, f"{rel}/run.yaml", lines)
    if unreadable:
        return unreadable
    if runner is None or not runner.invocation or meta.source.kind != "measured" or meta.imported is not None:
        return []
    where, line = f"{rel}/run.yaml", lines.get(("runner", "invocation"))
    argv = runner_argv(runner)
    if argv[:1] != ["run"] or len(argv) < 2 or argv[1] not in RERUNNABLE:
        shown = " ".join(argv[:3])
        return [
            Problem(
                file=where, line=line, field="runner.invocation", message=f"{shown!r} is not a `benchledger run` line"
            )
        ]
    fix = (
        "benchledger rerun executes the invocation, so it must say what the run page shows; "
        "make the two equal, or measure the run again with benchledger run"
    )
    if argv[1] != runner.kind:
        message = f"runs `run {argv[1]}` but runner.kind says {runner.kind!r}; {fix}"
        return [Problem(file=where, line=line, field="runner.invocation", message=message)]
    twice = "more than once (the last one counts, the page shows one)"
    shape = [f"gives {option} {twice}; {fix}" for option in repeated(argv)]
    if stray_words(argv):
        words = shell_line(stray_words(argv))
        shape.append(f"gives `{words}` where no option takes it, so it would run as the program; {fix}")
    if shape:
        return [Problem(file=where, line=line, field="runner.invocation", message=m) for m in shape]
    if argv[1] == "command":
        return _command_problems(runner, argv, where, line, fix)
    out = []
    for name, (option, default) in OPENAI_FIELDS.items():
        shown_value = getattr(runner, name)
        given = option_value(argv, option)
        actual = given if given is not None else default
        if shown_value is None or actual is None or str(shown_value) == actual:
            continue
        message = f"sets {option} {actual!r} but runner.{name} shows {shown_value!r}; {fix}"
        out.append(Problem(file=where, line=line, field="runner.invocation", message=message))
    if program(argv):
        message = f"passes a program to `run openai` ({shell_line(program(argv))}); {fix}"
        out.append(Problem(file=where, line=line, field="runner.invocation", message=message))
    return out


def command_problems(runner: Runner | None, where: str, lines: Lines) -> list[Problem]:
    """A word of `runner.invocation` or `runner.command` holding a character a terminal does not
    show as itself (an escape sequence, a carriage return, a bidirectional mark: what a person
    consents to must be what runs), or longer than one argument of a program may be. Tabs and
    line breaks are allowed: everything that prints a command writes them \\t and \\n."""
    if runner is None:
        return []
    out = []
    for field in ("invocation", "command"):
        words = runner.invocation if field == "invocation" else runner.extras.get("command")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            continue
        for i, message in hidden_problems(words):
            line = lines.get(("runner", field, i)) or lines.get(("runner", field))
            out.append(Problem(file=where, line=line, field=f"runner.{field}", message=message))
    return out


def _command_problems(runner: Runner, argv: list[str], where: str, line: int | None, fix: str) -> list[Problem]:
    shown = runner.extras.get("command")
    executed = program(argv)
    if not isinstance(shown, list) or not all(isinstance(a, str) for a in shown):
        message = "is missing or not a list of strings; a `run command` run records the command it timed"
        return [Problem(file=where, line=line, field="runner.command", message=message)]
    if executed != shown:
        message = (
            f"runs `{shell_line(executed)}` but runner.command shows `{shell_line(shown)}`; {fix}"
            if executed
            else f"runs no program after `--` but runner.command shows `{shell_line(shown)}`; {fix}"
        )
        return [Problem(file=where, line=line, field="runner.invocation", message=message)]
    return []
