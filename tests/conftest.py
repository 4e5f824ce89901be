from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import measured_run, publication, write_tree

# Build caches of the suite's publications go to a folder of this session, not the user's.
os.environ["BENCHLEDGER_BUILD_CACHE"] = tempfile.mkdtemp(prefix="benchledger-build-cache-")


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
