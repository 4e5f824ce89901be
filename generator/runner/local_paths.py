"""What the runner writes names files, not the measuring machine's disk: a value that is a local
absolute path (a model under /root/.cache, a prompts file, the --out folder of the invocation)
becomes its file name in run.yaml and manifest.yaml alike, unless --keep-paths. An import does
the same (importers/common.py); `check` refuses such a path in an imported run.

Reducing every occurrence the same way keeps a run's recorded invocation agreeing with what its
page shows (`ledger/invocation.py`): `--prompts /data/p.jsonl` and `runner.prompts` both become
`p.jsonl`, and `benchledger rerun` then looks for p.jsonl where it runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..format.paths import file_name, is_local_path


def reduced(data: Any) -> Any:
    """`data` with every local path replaced by its file name. An argument written `NAME=PATH`
    (`--setup model=/models/m.gguf`, `--prompts=/data/p.jsonl`) keeps its name."""
    if isinstance(data, dict):
        return {key: reduced(value) for key, value in data.items()}
    if isinstance(data, list):
        return [reduced(value) for value in data]
    if isinstance(data, str) and (path := _path_in(data)) is not None:
        return file_name(path) if path == data else data.partition("=")[0] + "=" + file_name(path)
    return data


def local_paths(data: Any) -> Iterator[str]:
    """Every local path in `data`, as `reduced` finds it."""
    if isinstance(data, dict):
        for value in data.values():
            yield from local_paths(value)
    elif isinstance(data, list):
        for value in data:
            yield from local_paths(value)
    elif isinstance(data, str) and (path := _path_in(data)) is not None:
        yield path


def _path_in(text: str) -> str | None:
    if is_local_path(text):
        return text
    name, sep, value = text.partition("=")
    return value if sep and name and "/" not in name and is_local_path(value) else None


def without_local_paths(run: dict[str, Any], manifest: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """run.yaml and manifest.yaml with every local path reduced to its file name, and a note that
    says which (the measuring machine's folders are nobody's business; --keep-paths keeps them)."""
    measured = _measured_command(run)
    kept = set(local_paths(measured[1])) if measured else set()
    found = sorted((set(local_paths(run)) | set(local_paths(manifest))) - kept)
    if not found:
        return run, manifest
    shown = ", ".join(f"`{file_name(path)}`" for path in found[:5])
    note = f"Local paths were reduced to their file names ({shown}); `benchledger run --keep-paths` keeps them."
    run = reduced(run)
    run["notes"] = (run["notes"] + "\n" if run.get("notes") else "") + note + "\n"
    return _with_command(run, measured), reduced(manifest)


def _measured_command(run: dict[str, Any]) -> tuple[list[str], list[str]] | None:
    """The program `run command` measured, as written after `--` and as `runner.command`: never
    reduced, since a rerun runs it, and `/home/me/bench` reduced to `bench` would run whatever
    `bench` is on the rerunner's PATH."""
    runner = run.get("runner", {})
    invocation = runner.get("invocation", [])
    if runner.get("kind") != "command" or "--" not in invocation:
        return None
    return list(runner["command"]), invocation[invocation.index("--") + 1 :]


def _with_command(run: dict[str, Any], measured: tuple[list[str], list[str]] | None) -> dict[str, Any]:
    if measured is None:
        return run
    command, tail = measured
    invocation = run["runner"]["invocation"]
    run["runner"] = run["runner"] | {"command": command, "invocation": invocation[: invocation.index("--") + 1] + tail}
    return run
