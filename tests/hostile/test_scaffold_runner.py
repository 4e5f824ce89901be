"""The scaffold's run-on-request workflow puts a self-hosted runner next to a GPU, in what is
usually a public repository. It starts nothing on a pull request, in a fork, or for anyone
the API does not report with write access; the decision is taken on a GitHub-hosted machine
before any job reaches the self-hosted one. The scaffold and the guide say what GitHub
advises for self-hosted runners in public repositories."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import cli

ROOT = Path(__file__).resolve().parents[2]
NEEDS = "run on request starts only for people with write or admin access"
ALLOWED_IF = "github.event_name == 'workflow_dispatch' && github.event.repository.fork == false"


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("init") / "pub"
    code, out = cli("init", str(folder))
    assert code == 0, out
    return folder


def _workflow(folder: Path) -> dict[Any, Any]:
    loaded = yaml.safe_load((folder / ".github" / "workflows" / "run-on-request.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def evaluate(expression: str, github: dict[str, Any]) -> bool:
    """The `if:` expression, evaluated the way GitHub does for the operators it uses here
    (`==` on strings and booleans, `&&`); a property missing from the context is null."""
    clauses = expression.split(" && ")
    results = []
    for clause in clauses:
        left, right = clause.split(" == ")
        assert left.startswith("github."), clause
        value: Any = github
        for part in left.removeprefix("github.").split("."):
            value = value.get(part) if isinstance(value, dict) else None
        expected: Any = {"false": False, "true": True}.get(right, right.strip("'"))
        results.append(value == expected)
    return all(results)


DISPATCH = {"event_name": "workflow_dispatch", "event": {"repository": {"fork": False}}}


@pytest.mark.parametrize(
    ("github", "runs"),
    [
        (DISPATCH, True),
        ({"event_name": "pull_request", "event": {"repository": {"fork": False}}}, False),
        ({"event_name": "pull_request_target", "event": {"repository": {"fork": False}}}, False),
        ({"event_name": "push", "event": {"repository": {"fork": False}}}, False),
        ({"event_name": "workflow_dispatch", "event": {"repository": {"fork": True}}}, False),
        ({"event_name": "workflow_dispatch", "event": {}}, False),  # no repository: not known to be no fork
    ],
)
def test_the_workflow_starts_only_on_a_manual_start_in_the_repository_itself(
    scaffolded: Path, github: dict[str, Any], runs: bool
) -> None:
    workflow = _workflow(scaffolded)
    assert list(workflow[True]) == ["workflow_dispatch"]  # YAML 1.1 reads `on` as True
    jobs = workflow["jobs"]
    assert list(jobs) == ["allowed", "run"]
    assert jobs["allowed"]["if"] == ALLOWED_IF and jobs["run"]["if"] == ALLOWED_IF
    assert jobs["allowed"]["runs-on"] == "ubuntu-latest"  # decided before the self-hosted runner is reached
    assert jobs["allowed"]["permissions"] == {"contents": "read"}
    assert jobs["run"]["needs"] == "allowed" and jobs["run"]["runs-on"] == ["self-hosted", "benchledger"]
    assert evaluate(jobs["allowed"]["if"], github) is runs


def _gate_script(folder: Path) -> tuple[str, dict[str, str]]:
    (step,) = _workflow(folder)["jobs"]["allowed"]["steps"]
    assert step["name"] == "refuse anyone without write access"
    return step["run"], step["env"]


@pytest.mark.parametrize(
    ("permissions", "code", "last"),
    [
        ({"alice": "admin"}, 0, "alice: access to owner/pub is admin"),
        ({"alice": "write"}, 0, "alice: access to owner/pub is write"),  # the API reports maintain as write
        ({"alice": "read"}, 1, f"::error::alice: access to owner/pub is read; {NEEDS}"),  # triage reads as read
        ({"alice": "none"}, 1, f"::error::alice: access to owner/pub is none; {NEEDS}"),
        ({}, 1, f"::error::alice: access to owner/pub is unknown (the permission API did not answer); {NEEDS}"),
        ({"alice": "write", "mallory": "read"}, 1, f"::error::mallory: access to owner/pub is read; {NEEDS}"),
    ],
)
def test_the_gate_admits_only_write_or_admin_access(
    scaffolded: Path, tmp_path: Path, permissions: dict[str, str], code: int, last: str
) -> None:
    script, env = _gate_script(scaffolded)
    assert env == {
        "GH_TOKEN": "${{ github.token }}",
        "ACTOR": "${{ github.actor }}",
        "TRIGGERING_ACTOR": "${{ github.triggering_actor }}",
    }
    assert "${{" not in script  # names arrive through the environment only
    fake = tmp_path / "bin"
    fake.mkdir()
    gh = fake / "gh"
    table = " ".join(f"{who}={level}" for who, level in permissions.items())
    gh.write_text(
        "#!/bin/bash\n"  # gh api repos/OWNER/REPO/collaborators/NAME/permission --jq .permission
        f'for pair in {table}; do [ "$1 $2 $3 $4" = "api repos/owner/pub/collaborators/${{pair%%=*}}/permission --jq .permission" ] '
        '&& { echo "${pair#*=}"; exit 0; }; done\n'
        'echo "gh: Not Found (HTTP 404)" >&2; exit 1\n'
    )
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    bash = shutil.which("bash")
    assert bash is not None
    environ = {
        "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_REPOSITORY": "owner/pub",
        "ACTOR": "alice",
        "TRIGGERING_ACTOR": "mallory" if "mallory" in permissions else "alice",
    }
    done = subprocess.run([bash, "-e", "-c", script], env=environ, capture_output=True, text=True)
    assert done.returncode == code, done
    assert done.stdout.splitlines()[-1] == last  # a re-run started by someone else is judged too


SCAFFOLD_ADVICE = (
    "# Self-hosted runners in a public repository: GitHub recommends them only for private\n"
    "# repositories, because a pull request from a fork can add a workflow of its own that runs on\n"
    "# this runner (no `if:` here can stop that). Keep the runner in a private repository, or at least\n"
    '# set Settings -> Actions -> General -> "Approval for running fork pull request workflows from\n'
    '# contributors" to "Require approval for all external contributors", and approve a fork\'s\n'
    "# workflow run only after reading its workflow files.\n"
)


def test_the_scaffold_and_the_guide_give_github_s_advice(scaffolded: Path) -> None:
    text = (scaffolded / ".github" / "workflows" / "run-on-request.yml").read_text()
    assert SCAFFOLD_ADVICE in text
    readme = (scaffolded / "README.md").read_text()
    assert "Require approval for all external contributors" in readme and "private repository" in readme
    guide = (ROOT / "site_src" / "guide" / "publishing.md").read_text()
    section = guide.split("## Runs on request")[1].split("\n## ")[0]
    flat = re.sub(r"\s+", " ", section)
    assert "Require approval for all external contributors" in flat
    assert "prefer a private repository for the runner" in flat
    assert "a pull request from a fork can add a workflow of its own" in flat


def test_init_says_where_the_runner_advice_is(tmp_path: Path) -> None:
    code, out = cli("init", str(tmp_path / "pub"))
    assert code == 0
    assert (
        "run-on-request.yml uses a self-hosted runner: keep it in a private repository, or require approval "
        "for fork pull request workflows (README.md, 'Pull requests and runs on request').\n"
    ) in out
