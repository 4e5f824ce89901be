"""What MkDocs would publish from the docs folder must come from the repository: a symlink
leading outside it (`env.txt -> /proc/self/environ`, `passwd.txt -> /etc/passwd`) would put
that file on the site, so it is refused, as are dangling links, link loops and entries that
are not regular files or folders (a FIFO would hang the build)."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import Problem
from ..format.published import published_name
from .records import RUNS_DIR, Report
from .yamlio import line_for

FIX = "replace the link with a copy of the file you mean to publish, or remove it"


def docs_problems(root: Path, docs: Path) -> list[Problem]:
    """Every entry under `docs` (links to folders inside the repository are walked too) that
    is not a regular file or folder of the repository."""
    root = root.resolve()
    problems: list[Problem] = []
    seen: set[str] = set()
    # (folder, its real path): paths as strings, since a Path for each of a site's 10,000 files cost
    # a third of a second; a folder reached through no link is its parent's real path and its name
    stack = [(str(docs), os.path.realpath(docs))] if docs.is_dir() and not docs.is_symlink() else []
    while stack:
        folder, real = stack.pop()
        if real in seen:
            continue
        seen.add(real)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as err:
            problems.append(Problem(file=_rel(Path(folder), root), message=f"cannot be read ({err.strerror}); fix it"))
            continue
        for entry in entries:
            problem = _link_problem(Path(entry.path), root, docs) if entry.is_symlink() else _entry_problem(entry)
            if problem is not None:
                problems.append(Problem(file=_rel(Path(entry.path), root), message=problem))
            elif entry.is_dir():
                link = entry.is_symlink()
                stack.append((entry.path, os.path.realpath(entry.path) if link else f"{real}/{entry.name}"))
    return sorted(problems)


def _link_problem(path: Path, root: Path, docs: Path) -> str | None:
    shown = os.readlink(path)
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return f"is a symlink to {shown!r}, which does not exist; {FIX}"
    except (OSError, RuntimeError):
        return f"is a symlink loop ({shown!r}); remove it"
    if not target.is_relative_to(root):
        return f"is a symlink to {shown!r}, outside the repository: the site would publish that file; {FIX}"
    if ".git" in target.relative_to(root).parts:
        return (
            f"is a symlink to {shown!r}, inside .git: the site would publish git's own files (a CI checkout "
            f"keeps its token in .git/config), which are no file of the repository; {FIX}"
        )
    if not (target.is_file() or target.is_dir()):
        return f"is a symlink to {shown!r}, which is not a regular file or folder; remove it"
    if target.is_dir() and (path.parent.resolve().is_relative_to(target) or docs.resolve().is_relative_to(target)):
        return (
            f"is a symlink to {shown!r}, a folder that holds the link or the docs folder: MkDocs would follow it "
            "without end (and publish everything beside it); remove it"
        )
    return None


def _entry_problem(entry: os.DirEntry[str]) -> str | None:
    if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
        return None
    return "is not a regular file or folder (a FIFO, socket or device); remove it"


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def layout_problems(root: Path, docs: Path, site: Path | None = None, site_field: str = "site_dir") -> list[Problem]:
    """The docs folder may not hold runs/ (generation would write into committed run folders);
    the site folder, which MkDocs empties before building, may not be or hold the repository,
    runs/ or the docs folder. `site_field` names where the site folder was given."""
    root = root.resolve()
    runs, docs = (root / RUNS_DIR).resolve(), docs.resolve()
    out = []
    if not docs.is_relative_to(root):
        message = f"{docs} is outside the repository; use a folder inside it, e.g. docs_dir: site_src"
        return [Problem(file="mkdocs.yml", field="docs_dir", message=message)]
    if ".git" in docs.relative_to(root).parts:
        message = (
            f"{_rel(docs, root)} is or lies inside .git: pages would be written among git's own files and .git/config "
            "(with the token a CI checkout keeps there) published; use a folder of its own, e.g. docs_dir: site_src"
        )
        return [Problem(file="mkdocs.yml", field="docs_dir", message=message)]
    if runs.is_relative_to(docs) or docs.is_relative_to(runs):
        message = (
            f"{_rel(docs, root) if docs != root else '.'} holds runs/ or lies inside it: pages and copies "
            "would be written into the committed run folders; use a folder of its own, e.g. docs_dir: site_src"
        )
        out.append(Problem(file="mkdocs.yml", field="docs_dir", message=message))
    if site is None:
        return out
    site = site.resolve()
    fix = "MkDocs empties the site folder before it builds; use a folder of its own, e.g. site"
    where = "" if site_field.startswith("--") else "mkdocs.yml"
    if root.is_relative_to(site):
        out.append(
            Problem(file=where, field=site_field, message=f"{site} is the repository or a folder above it; {fix}")
        )
    elif site.is_relative_to(runs) or runs.is_relative_to(site):
        out.append(Problem(file=where, field=site_field, message=f"{site} is, holds or lies inside runs/; {fix}"))
    elif site.is_relative_to(docs) or docs.is_relative_to(site):
        out.append(Problem(file=where, field=site_field, message=f"{site} is, holds or lies inside docs_dir; {fix}"))
    elif site.is_relative_to(root) and (hidden := [p for p in site.relative_to(root).parts if p.startswith(".")]):
        # .git (the repository's history: MkDocs keeps only its dot-entries, and git's own have none),
        # .github (the workflows), .venv: a site_dir a pull request sets there would empty it
        message = f"{site} is or lies inside {hidden[0]}, a hidden folder of the repository; {fix}"
        out.append(Problem(file=where, field=site_field, message=message))
    return out


SITE_MARKER = ".benchledger-site"  # written into every site benchledger builds
SITE_MARKER_TEXT = (
    "benchledger built this site. `benchledger build --site-dir` empties this folder and builds it again "
    "without asking while this file is here.\n"
)
SHOWN_ENTRIES = 5
SITE_CHECKED_ENV = "BENCHLEDGER_SITE_DIR_CHECKED"  # set by `benchledger build` for a builder it runs as a process


def site_folder_problems(site: Path, site_field: str = "--site-dir") -> list[Problem]:
    """A site folder MkDocs may empty without asking: missing, holding only entries MkDocs keeps
    (names starting with a dot, such as a worktree's .git), or a site benchledger built (it holds
    SITE_MARKER). Anything else would delete what someone put there; it takes --force."""
    site = site.resolve()
    if site.exists() and not site.is_dir():
        return [Problem(file="", field=site_field, message=f"{site} is a file; give a folder for the site")]
    try:
        names = sorted(os.listdir(site)) if site.is_dir() else []
    except OSError as err:
        return [Problem(file="", field=site_field, message=f"{site} cannot be read ({err.strerror}); fix it")]
    if SITE_MARKER in names:
        return []
    deleted = [n + "/" if (site / n).is_dir() and not (site / n).is_symlink() else n for n in names if n[:1] != "."]
    if not deleted:
        return []
    shown = ", ".join(deleted[:SHOWN_ENTRIES])
    if len(deleted) > SHOWN_ENTRIES:
        shown += f" and {len(deleted) - SHOWN_ENTRIES} more"
    message = (
        f"{site} holds {shown} and no {SITE_MARKER} (the mark of a site benchledger built); MkDocs deletes "
        "them before it builds. Pass --force to empty it, or choose an empty or new folder"
    )
    return [Problem(file="", field=site_field, message=message)]


EVERY_FS = "one name on every file system; rename one of them"
CASELESS_FS = "one name on a case-insensitive file system (macOS, Windows); rename one of them"


def _caseless(name: str) -> str:
    """A name as a case-insensitive file system compares it: case folded, and a composed letter
    (é, U+00E9) equal to its decomposed spelling (e + U+0301), as macOS compares them."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def published_file_problems(rel: str, files: Sequence[str]) -> list[Problem]:
    """A run's files are published under files/ (`published_name`): two of them whose published
    paths are one name on a case-insensitive file system (`raw/Log.txt`, `raw/log.txt`; folders
    `Raw/`, `raw/`), or on every one (`notes.md` is published as `notes.md.txt`), and a file
    published where another's folder is, would overwrite each other or fail the build. One
    problem per file, naming the file it meets."""
    seen: dict[str, tuple[str, bool, str]] = {}  # casefolded published path -> (path, is a folder, source)
    problems = []
    for src in sorted(files):
        parts = published_name(src).split("/")
        for depth in range(1, len(parts) + 1):
            path, folder = "/".join(parts[:depth]), depth < len(parts)
            other = seen.setdefault(_caseless(path), (path, folder, src))
            if other[1] == folder and ((folder and other[0] == path) or other[2] == src):
                continue
            mine = f"is published in the folder files/{path}/" if folder else f"is published as files/{path}"
            message = f"{mine}, and {rel}/{other[2]} {_theirs(other[0], other[1], folder)}: "
            message += EVERY_FS if other[0] == path else CASELESS_FS
            problems.append(Problem(file=f"{rel}/{src}", message=message))
            break
    return problems


def _theirs(path: str, folder: bool, mine_is_folder: bool) -> str:
    """Where the other file is published, as the problem names it."""
    if folder:
        return f"in files/{path}/"
    return f"as the file files/{path}" if mine_is_folder else f"as files/{path}"


def report_name_problems(reports: Sequence[Report]) -> list[Problem]:
    """Two reports whose pages (and sweep charts) are published under paths that differ only in
    case (site_src/reports/Play-1.md and play-1.md) are one page on a case-insensitive file system."""
    first: dict[str, Report] = {}
    problems = []
    for report in sorted(reports, key=lambda r: r.path):
        known = first.setdefault(_caseless(report.slug), report)
        if known is not report:
            message = (
                f"is published as the page reports/{report.slug}/, and {known.path} as reports/{known.slug}/: "
                f"{CASELESS_FS}"
            )
            problems.append(Problem(file=report.path, message=message))
    return problems


def chart_name_problems(rel: str, metrics: Iterable[str], rates: Iterable[str]) -> list[Problem]:
    """Each metric's charts are published as charts/NAME-KIND.json and each rate's as
    charts/rate-NAME.json: two metrics (or two rates) whose names differ only in case name one
    chart file on a case-insensitive file system."""
    problems = []
    for section, names, chart in (("metrics", metrics, "{}-trials.json"), ("rates", rates, "rate-{}.json")):
        first: dict[str, str] = {}
        for name in names:
            known = first.setdefault(name.casefold(), name)
            if known != name:
                charts = ", ".join(sorted(f"charts/{chart.format(n)}" for n in (known, name)))
                message = f"and {section}.{name} name chart files ({charts}) that are {CASELESS_FS}"
                problems.append(Problem(file=f"{rel}/run.yaml", field=f"{section}.{known}", message=message))
    return problems


RESERVED_IDS = frozenset({"index.md", "index.html"})  # runs/index.md and claims/index.md are generated


def reserved_id(value: str, kind: str) -> str | None:
    """Why a run, claim or attribution id cannot be used: its pages would collide with the
    index page benchledger generates for runs/ or claims/."""
    if value not in RESERVED_IDS:
        return None
    return (
        f"{value!r} is the name of the {kind} index page benchledger generates; "
        f"choose another id, e.g. {value.partition('.')[0]}-1"
    )


def reserved_id_problems(reports: Sequence[Report]) -> list[Problem]:
    """Claims and attributions whose id collides with a generated page."""
    out = []
    for report in reports:
        claims, grids = [c.id for c in report.meta.claims], [a.id for a in report.meta.attributions]
        for key, ids in (("claims", claims), ("attributions", grids)):
            for i, value in enumerate(ids):
                why = reserved_id(value, "claims")
                if why is not None:
                    out.append(
                        Problem(
                            file=report.path,
                            line=line_for((key, i, "id"), report.lines),
                            field=f"{key}.{i}.id",
                            message=why,
                        )
                    )
    return out


def theme_problems(root: Path, custom_dir: Path | None) -> list[Problem]:
    """MkDocs publishes every file of `theme.custom_dir` that is not a template: it must lie in
    the repository, and hold no link leading out of it."""
    if custom_dir is None:
        return []
    root, folder = root.resolve(), custom_dir.resolve()
    if not folder.is_relative_to(root):
        message = f"{folder} is outside the repository, and MkDocs publishes the files in it; use a folder inside it"
        return [Problem(file="mkdocs.yml", field="theme.custom_dir", message=message)]
    if ".git" in folder.relative_to(root).parts:
        message = (
            f"{folder} is or lies inside .git, and MkDocs publishes the files in it (a CI checkout keeps its token "
            "in .git/config); use a folder of the repository's own files, e.g. overrides"
        )
        return [Problem(file="mkdocs.yml", field="theme.custom_dir", message=message)]
    return docs_problems(root, folder)
