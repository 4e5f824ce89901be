"""A `--workers` process that is killed outright (SIGKILL) as soon as it starts: what an
out-of-memory killer or a person's `kill -9` does to a worker mid-run."""

from __future__ import annotations

import os
import signal
from typing import Any


def die(*_: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)
