"""`benchledger init DIR`: scaffold a publication that checks and builds at once, and
whose Pages workflow installs exactly this benchledger and a pinned site toolchain."""

from __future__ import annotations

import os
import re
from importlib import metadata, resources
from importlib.abc import Traversable
from pathlib import Path

from .. import __version__
from ..errors import BenchledgerError, Problem

# What the site build needs, pinned at the versions installed here (requirements-site.txt),
# so two pushes of the same commit build the same bytes.
TOOLCHAIN = (
    "mkdocs",
    "mkdocs-material",
    "mkdocs-material-extensions",
    "pymdown-extensions",
    "markdown",
    "altair",
    "vl-convert-python",
    "jinja2",
    "pyyaml",
    "pydantic",
    "scipy",
    "numpy",
    "statsmodels",
    "patsy",
    "pandas",
    "markdown-it-py",
    "sshsig",
    "cryptography",
    "typer",
    "rich",
    "httpx",
)
INSTALL_SPEC = re.compile(r"^[A-Za-z0-9_.+\-=<>!~\[\]@:/#,%]+$")

# scaffold file -> where it goes in the new publication
LAYOUT = {
    "mkdocs.yml": "mkdocs.yml",
    "index.md": "site_src/index.md",
    "example.md": "site_src/reports/example.md",
    "publish.yml": ".github/workflows/publish.yml",
    "review.yml": ".github/workflows/review.yml",
    "run-on-request.yml": ".github/workflows/run-on-request.yml",
    "gitignore": ".gitignore",
    "gitattributes": ".gitattributes",
    "allowed_signers": "allowed_signers",
    "README.md": "README.md",
}


def default_install() -> str:
    """The requirement that installs this very benchledger."""
    return f"benchledger=={__version__}"


def toolchain_lock() -> str:
    """requirements-site.txt: every site-building package pinned at its installed version."""
    lines = [f"# The site toolchain of benchledger {__version__}, pinned by `benchledger init`."]
    for name in TOOLCHAIN:
        try:
            lines.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return "\n".join(lines) + "\n"


def _files(install: str) -> dict[str, bytes]:
    root = resources.files("generator.authoring") / "new_publication"
    out = {target: (root / name).read_bytes() for name, target in LAYOUT.items()}

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            else:
                out[f"{prefix}{entry.name}"] = entry.read_bytes()

    walk(root / "runs", "runs/")
    for workflow in (target for target in LAYOUT.values() if target.startswith(".github/workflows/")):
        out[workflow] = out[workflow].replace(b"__INSTALL__", f'"{install}"'.encode())
    out["requirements-site.txt"] = toolchain_lock().encode()
    return out


def scaffold(folder: Path, force: bool = False, install: str | None = None) -> list[str]:
    """Write a new publication into `folder`; refuse a non-empty folder unless forced.
    `install` is the pip requirement the Pages workflow installs benchledger with (default:
    this version from the package index; e.g. git+https://github.com/OWNER/benchledger@v0.1.0)."""
    install = install or default_install()
    if not INSTALL_SPEC.match(install):
        raise BenchledgerError(
            Problem(
                file="--install",
                message=f"{install!r} is not a pip requirement; write e.g. benchledger==0.1.0 or "
                "git+https://github.com/OWNER/benchledger@v0.1.0 (no spaces or quotes)",
            )
        )
    _check_path(folder)
    if folder.exists() and not folder.is_dir():
        raise BenchledgerError(Problem(file=str(folder), message="is a file; give a folder"))
    try:
        holds = folder.is_dir() and any(folder.iterdir())
    except OSError as err:
        raise BenchledgerError(Problem(file=str(folder), message=f"cannot be read ({err.strerror}); fix it")) from None
    if holds and not force:
        raise BenchledgerError(
            Problem(
                file=str(folder),
                message="is not empty; choose an empty folder, or pass "
                "--force to add the scaffold's files (existing files with the same "
                "names are replaced)",
            )
        )
    written = []
    for rel, data in sorted(_files(install).items()):
        path = folder / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)  # a link of that name is replaced, never written through
        except OSError as err:
            where = err.filename if isinstance(err.filename, str) else str(path)
            raise BenchledgerError(
                Problem(file=where, message=f"cannot be written ({err.strerror}); give a folder you can write to")
            ) from None
        written.append(rel)
    return written


def _check_path(folder: Path) -> None:
    """Each folder above `folder` that exists is a folder: a link to nowhere or a file there
    would only fail later, half-way through writing."""
    for above in reversed(folder.parents):
        if above.is_symlink() and not above.exists():
            message = f"is a symlink to {os.readlink(above)!r}, which does not exist; give a path through real folders"
            raise BenchledgerError(Problem(file=str(above), message=message))
        if above.exists() and not above.is_dir():
            message = f"is a file, so {folder} cannot be made in it; give a path through folders"
            raise BenchledgerError(Problem(file=str(above), message=message))
