"""Every action a workflow of this repository runs is pinned to a full commit SHA, with its tag in a
comment: a moved tag or branch (release/v1) cannot change what publishes to PyPI."""

import re
from pathlib import Path

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
USES = re.compile(r"^\s*(?:-\s*)?uses:\s*(\S+)(.*)$")


def _uses() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            match = USES.match(line)
            if match:
                found.append((path.name, match.group(1), match.group(2)))
    return found


def test_every_uses_is_pinned_to_a_commit_sha_with_its_tag() -> None:
    uses = _uses()
    assert any(name == "release.yml" and ref.startswith("pypa/gh-action-pypi-publish@") for name, ref, _ in uses)
    for name, ref, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), (name, ref)
        assert re.search(r"#\s*v\d", comment), (name, ref, comment)
