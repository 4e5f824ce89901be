"""The reference pages and schemas are generated from the code; these tests fail when they drift."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_pages", ROOT / "scripts" / "reference_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_pages"] = module
    spec.loader.exec_module(module)
    return module


pages = _script()


@pytest.mark.parametrize("rel", sorted(pages.PAGES))
def test_generated_file_matches_the_code(rel: str) -> None:
    assert (ROOT / rel).read_text() == pages.PAGES[rel](), (
        f"{rel} is out of date: run python scripts/reference_pages.py"
    )


def test_cli_reference_has_a_section_for_every_registered_command() -> None:
    import typer

    from generator.cli import app

    group = typer.main.get_command(app)
    context = group.context_class(group)
    registered = set(group.list_commands(context))  # type: ignore[attr-defined]
    run = group.get_command(context, "run")  # type: ignore[attr-defined]
    registered |= {f"run {name}" for name in run.list_commands(run.context_class(run))}
    assert {"check", "build", "compare", "run openai"} <= registered
    text = (ROOT / "site_src/guide/cli.md").read_text()
    documented = set(re.findall(r"^## benchledger (.+)$", text, re.M))
    assert documented == registered
