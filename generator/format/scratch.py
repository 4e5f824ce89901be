"""The scratch folder a run is assembled in (`runs/<id>.partial-<token>/`), as the runner's
writer makes it and as `check` recognises one left behind: never hidden, so a leftover is seen."""

from __future__ import annotations

import re

# The file that marks a run folder still being assembled; the writer removes it last.
MARK = "PARTIAL-RUN.txt"
# Scratch folders of earlier versions: hidden, named by the process id alone.
OLD_SCRATCH = re.compile(r"^\.(?P<id>.+)\.partial-\d+$")


def mark_text(run_id: str, started: str, pid: int) -> str:
    """What a person who opens a scratch folder reads."""
    return (
        f"This folder holds the completed trials of a run of {run_id} (benchledger run, process {pid}, "
        f"started {started}).\nIt becomes runs/{run_id} when the run finishes. If no benchledger run is "
        "running, it was killed before it could write the run: it is not a run and nothing reads it; "
        "move its results.csv somewhere else if you want it, then delete this folder.\n"
    )


def leftover(run_id: str) -> str:
    """`check`'s words for a scratch folder left behind."""
    return (
        f"holds the trials of a run of {run_id} that never finished (benchledger run was killed, or is still "
        "running); it is not a run and nothing reads it: move its results.csv somewhere else if you want it, "
        "then delete the folder"
    )
