"""What a change does to how the publication is built, besides its runs and claims: hooks,
plugins and verdict settings in mkdocs.yml, the folders whose code the build runs, who may sign
(allowed_signers) and when and where a GitHub workflow runs. Pure over text already read."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from .comparison import Settings
from .history_settings import HistorySettings


def settings_changes(before: Mapping[str, object], after: Mapping[str, object]) -> tuple[tuple[str, str, str], ...]:
    """What a change of mkdocs.yml (both read safely, as dicts) changes that decides what the
    publish build runs or how verdicts read: (what, before, after) for each hook added or removed
    (code the build runs), each plugin added or removed, and each verdict setting of the
    benchledger plugin whose value changed (`confidence`, `min_effect`, `noise`)."""
    out: list[tuple[str, str, str]] = []
    for key, what in (("hooks", "hook"), ("plugins", "plugin")):
        was, now = _names(before.get(key)), _names(after.get(key))
        out += [(f"{what} added", "", name) for name in now if name not in was]
        out += [(f"{what} removed", name, "") for name in was if name not in now]
    was_from, now_from = before.get("INHERIT"), after.get("INHERIT")
    if was_from != now_from:  # a file MkDocs merges in: its hooks and plugins are the build's too
        old_file, new_file = (
            v if isinstance(v, str) else "(not a file name)" if v is not None else "" for v in (was_from, now_from)
        )
        out.append(("inherits", old_file, new_file) if now_from is not None else ("no longer inherits", old_file, ""))
    was_set, now_set = _verdict_config(before), _verdict_config(after)
    for key in ("confidence", "min_effect", "noise"):
        if was_set.get(key) != now_set.get(key):
            out.append((key, _value(key, was_set.get(key)), _value(key, now_set.get(key))))
    return tuple(out)


def hook_paths(*configs: Mapping[str, object]) -> tuple[str, ...]:
    """The hook files that any of these mkdocs.yml configurations names, as relative paths
    inside the publication (one outside it, or absolute, is named by `settings_changes`)."""
    found = [h for config in configs for h in _names(config.get("hooks"))]
    return tuple(dict.fromkeys(h for h in found if _inside(h)))


def code_folders(*configs: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """Folders whose files the publish build runs as code though mkdocs.yml names none of them:
    (folder, "hook") for each hook's folder (MkDocs puts it first on sys.path while it loads the
    hook, so the hook imports what lies beside it; "" for the publication's own top), and
    (folder, "theme") for theme.custom_dir (MkDocs renders its templates with Jinja, unsandboxed),
    and (file, "inherit") for the file INHERIT names (MkDocs merges its hooks, plugins and settings
    into mkdocs.yml's). Relative paths inside the publication only, as hook_paths keeps them."""
    found = [(posixpath.dirname(h.replace("\\", "/")), "hook") for h in hook_paths(*configs)]
    for config in configs:
        inherit = config.get("INHERIT")
        if isinstance(inherit, str) and _inside(inherit):
            found.append((posixpath.normpath(inherit), "inherit"))
        theme = config.get("theme")
        custom = theme.get("custom_dir") if isinstance(theme, Mapping) else None
        if isinstance(custom, str) and _inside(custom.rstrip("/")):
            found.append((posixpath.normpath(custom), "theme"))
    return tuple(dict.fromkeys(found))


def _inside(path: str) -> bool:
    """A relative path that stays inside the publication, printable and of sane length."""
    return (
        bool(path)
        and path.isprintable()
        and len(path) <= 4096
        and not path.startswith(("/", "\\"))
        and ".." not in path.replace("\\", "/").split("/")
    )


def _names(entries: object) -> list[str]:
    """Hook paths, or plugin names (a plugin with options is a one-key mapping)."""
    if isinstance(entries, Mapping):
        entries = list(entries)
    if not isinstance(entries, list):
        return []
    names = [next(iter(e), "") if isinstance(e, Mapping) else e for e in entries]
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))  # never str() of a structure: aliases


def history_settings(config: Mapping[str, object]) -> HistorySettings:
    """The benchledger plugin's `history` and `history_along` in a side's mkdocs.yml (a
    BenchledgerError naming the field when they are not a boolean and a list of dotted keys)."""
    return HistorySettings.parse(_verdict_config(config), "mkdocs.yml")


def _verdict_config(config: Mapping[str, object]) -> Mapping[str, object]:
    plugins = config.get("plugins")
    entries = list(plugins.items()) if isinstance(plugins, Mapping) else []
    if isinstance(plugins, list):
        entries = [next(iter(e.items())) for e in plugins if isinstance(e, Mapping) and len(e) == 1]
    found = [options for name, options in entries if name == "benchledger" and isinstance(options, Mapping)]
    return found[-1] if found else {}


def _value(key: str, value: object) -> str:
    """A verdict setting as written, or the default the rule uses when it is left out."""
    if value is None:
        default = getattr(Settings(), key)
        return "the larger per-trial CV" if default is None else f"{default:g}"
    return f"{value:g}" if isinstance(value, int | float) else "(not a number)"


def signer_changes(before: str | None, after: str | None) -> tuple[tuple[str, str], ...]:
    """("adds"/"removes", principal) for each allowed_signers line a change adds or removes (a
    line whose options or key changed is both)."""

    def lines(text: str | None) -> list[str]:
        found = [line.strip() for line in (text or "").splitlines()]
        return [line for line in found if line and not line.startswith("#")]

    was, now = lines(before), lines(after)
    out = [("adds", _principal(line)) for line in now if line not in was]
    return tuple(out + [("removes", _principal(line)) for line in was if line not in now])


def _principal(line: str) -> str:
    if line.startswith('"'):
        return line[1:].split('"', 1)[0]
    return line.split()[0]


def workflow_summary(text: bytes) -> tuple[tuple[str, ...], bool]:
    """What a GitHub workflow file says of when it runs and where: its triggers (`on:`), and
    whether any job's `runs-on` (a label, a list of them, or `labels:` of a group) names
    `self-hosted`. YAML that cannot be read: no triggers, not known to be self-hosted."""
    import yaml

    try:
        data = yaml.safe_load(text.decode("utf-8", "replace"))
    except yaml.YAMLError:
        return (), False
    if not isinstance(data, Mapping):
        return (), False
    on = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` key as true
    triggers = [on] if isinstance(on, str) else list(on) if isinstance(on, list | Mapping) else []
    jobs = data.get("jobs")
    hosted = False
    for job in jobs.values() if isinstance(jobs, Mapping) else ():
        runs_on = job.get("runs-on") if isinstance(job, Mapping) else None
        labels = runs_on.get("labels") if isinstance(runs_on, Mapping) else runs_on
        labels = [labels] if isinstance(labels, str) else labels if isinstance(labels, list) else []
        hosted = hosted or "self-hosted" in labels
    return tuple(t for t in triggers if isinstance(t, str)), hosted  # never str() of a structure: aliases
