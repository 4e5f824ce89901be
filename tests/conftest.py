from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import measured_run, publication, write_tree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A valid publication with one measured run."""
    return write_tree(tmp_path / "pub", publication(measured_run()))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite tests/golden/ from the current output (then review the diff before committing).",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


EPOCH = os.environ.get("SOURCE_DATE_EPOCH")  # as the session started


def _restore_epoch() -> None:
    if EPOCH is None:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
    else:
        os.environ["SOURCE_DATE_EPOCH"] = EPOCH


@pytest.fixture(autouse=True)
def _source_date_epoch_as_the_session_started() -> Iterator[None]:
    """An in-process build (in a test or a module fixture) sets SOURCE_DATE_EPOCH for MkDocs'
    sitemap in os.environ; a later test's subprocess would take it for the user's and date
    receipts against it. Every test starts and ends with the session's own value."""
    _restore_epoch()
    yield
    _restore_epoch()
