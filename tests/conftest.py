from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

from helpers import measured_run, publication, write_tree

# Hypothesis draws the same examples on every machine and every run: derandomized, with no example
# database, so a newcomer's laptop and CI give the same answer. HYPOTHESIS_PROFILE=explore draws
# fresh examples (a failure it finds is kept as an @example in the test).
settings.register_profile("fixed", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

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
