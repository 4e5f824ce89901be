"""`benchledger init DIR`: scaffold a publication that checks and builds at once."""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from .errors import BenchledgerError, Problem

# scaffold file -> where it goes in the new publication
LAYOUT = {
    "mkdocs.yml": "mkdocs.yml",
    "index.md": "site_src/index.md",
    "example.md": "site_src/reports/example.md",
    "publish.yml": ".github/workflows/publish.yml",
    "gitignore": ".gitignore",
    "gitattributes": ".gitattributes",
    "allowed_signers": "allowed_signers",
}


def _files() -> dict[str, bytes]:
    root = resources.files("generator") / "scaffold"
    out = {target: (root / name).read_bytes() for name, target in LAYOUT.items()}

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            else:
                out[f"{prefix}{entry.name}"] = entry.read_bytes()

    walk(root / "runs", "runs/")
    return out


def scaffold(folder: Path, force: bool = False) -> list[str]:
    """Write a new publication into `folder`; refuse a non-empty folder unless forced."""
    if folder.exists() and not folder.is_dir():
        raise BenchledgerError(Problem(str(folder), None, None, "is a file; give a folder"))
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise BenchledgerError(
            Problem(
                str(folder),
                None,
                None,
                "is not empty; choose an empty folder, or pass "
                "--force to add the scaffold's files (existing files with the same "
                "names are replaced)",
            )
        )
    written = []
    for rel, data in sorted(_files().items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(rel)
    return written
