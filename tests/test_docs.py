"""The reference pages are generated from the code; these tests fail when they drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import docs

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize("rel", sorted(docs.PAGES))
def test_reference_page_matches_the_code(rel: str) -> None:
    assert (ROOT / rel).read_text() == docs.PAGES[rel](), f"{rel} is out of date: run python -m generator.docs"


def test_cli_reference_documents_every_command() -> None:
    text = (ROOT / "site_src/guide/cli.md").read_text()
    for command in ("check", "build", "serve", "generate", "compare", "verify", "init", "run openai", "run command"):
        assert f"## benchledger {command}\n" in text
