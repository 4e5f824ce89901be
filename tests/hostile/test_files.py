"""Hostile and careless files: every one is a located error (file, line or field, fix), exit 1,
no traceback, and nothing outside the publication changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tree_digest
from typer.testing import CliRunner

from generator.cli import app
from helpers import MANIFEST, RESULTS, measured_run, publication, run_yaml, write_tree

RUN = "2026-09-01-measured"
BOMB = "\n".join(
    ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    + [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
)
DEEP = "deep: " + "[" * 200 + "1" + "]" * 200 + "\n"
DEEP_MAP = "deep:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 60)) + "  " * 60 + "v: 1\n"


def check(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["check", "--repo", str(root)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


CASES = {
    # YAML values the parsers choke on
    "alias bomb in a manifest": (
        "manifest.yaml",
        MANIFEST + BOMB,
        "manifest.yaml:",
        "expands to more than 100,000 values",
    ),
    "alias bomb in run.yaml": ("run.yaml", run_yaml(RUN) + BOMB, "run.yaml:", "expands to more than 100,000 values"),
    "self-referencing alias": ("manifest.yaml", MANIFEST + "loop: &l [*l]\n", "manifest.yaml:", "nested more than 32"),
    "deeply nested lists": ("manifest.yaml", MANIFEST + DEEP, "manifest.yaml:", "nested more than 32 levels deep"),
    "deeply nested mappings": ("manifest.yaml", MANIFEST + DEEP_MAP, "manifest.yaml:", "nested more than 32 levels"),
    "integer with 5,000 digits": (
        "manifest.yaml",
        MANIFEST + "cores: " + "9" * 5000 + "\n",
        "manifest.yaml:8:",
        "a value cannot be read",
    ),
    "impossible date, quoted": (
        "run.yaml",
        run_yaml(RUN).replace("2026-09-01", "2026-02-30"),
        "run.yaml:4: date:",
        "day value is outside expected range",
    ),
    "impossible date, unquoted": (
        "run.yaml",
        run_yaml(RUN).replace("date: '2026-09-01'", "date: 2026-02-30"),
        "run.yaml:4:",
        "a value cannot be read (day is out of range for month)",
    ),
    "year 9999 (overflows 32-bit timestamps)": (
        "run.yaml",
        run_yaml(RUN).replace("date: '2026-09-01'", "date: 9999-12-31"),
        "run.yaml:4: date:",
        "the year 9999 is out of range",
    ),
    "warmup of a billion trials": (
        "run.yaml",
        run_yaml(RUN, warmup_trials=10**12),
        "run.yaml:23: warmup_trials:",
        "less than or equal to 1000000",
    ),
    "a key that is a mapping": ("manifest.yaml", MANIFEST + "? {a: 1}\n: x\n", "manifest.yaml:", "a key must be plain"),
    "a 2,000,000-character value": (  # a value may hold 1,048,576: a recorded command's arguments fit
        "manifest.yaml",
        MANIFEST + "x: " + "a" * 2_000_000 + "\n",
        "manifest.yaml:8:",
        "2,000,000 characters",
    ),
    "python tag": (
        "manifest.yaml",
        MANIFEST + "x: !!python/object:os.system ls\n",
        "manifest.yaml:8:",
        "remove the tag",
    ),
    # CSV values
    "superscript digit as a trial": (
        "results.csv",
        RESULTS.replace("\n1,1,", "\n²,1,", 1),
        "results.csv:2: trial:",
        "not a trial number",
    ),
    "Arabic-Indic digit as a trial": (
        "results.csv",
        RESULTS.replace("\n1,1,", "\n١,1,", 1),
        "results.csv:2: trial:",
        "not a trial number",
    ),
    "a trial number with 40 digits": (
        "results.csv",
        RESULTS.replace("\n1,1,", "\n" + "9" * 40 + ",1,", 1),
        "results.csv:2: trial:",
        "not a trial number",
    ),
    "a metric with 400 digits": (
        "results.csv",
        RESULTS.replace("31.2", "9" * 400, 1),
        "results.csv:2: tokens_per_second:",
        "is not finite",
    ),
    "a metric of 1e300 (its square overflows)": (
        "results.csv",
        RESULTS.replace("31.2", "1e300", 1),
        "results.csv:2: tokens_per_second:",
        "is out of range; write 0 or a magnitude from 1e-100 to 1e100",
    ),
    "NaN metric": (
        "results.csv",
        RESULTS.replace("31.2", "nan", 1),
        "results.csv:2: tokens_per_second:",
        "is not finite",
    ),
    "non-UTF-8 results": (
        "results.csv",
        RESULTS.encode().replace(b"31.2", b"\xff\xfe", 1),
        "results.csv:",
        "is not UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_file_is_a_located_error(tmp_path: Path, sentinel: Path, case: str) -> None:
    name, content, where, message = CASES[case]
    files: dict[str, str | bytes] = dict(publication(measured_run()))
    files[f"runs/{RUN}/{name}"] = content
    root = write_tree(tmp_path / "pub", files)
    before = tree_digest(sentinel)
    code, out = check(root)
    assert code == 1, out
    line = next(line for line in out.splitlines() if line.startswith("Error:"))
    assert line.startswith(f"Error: runs/{RUN}/") and where in line and message in line, line
    assert tree_digest(sentinel) == before


def test_a_results_folder_is_not_called_missing(tmp_path: Path) -> None:
    files = dict(publication(measured_run()))
    del files[f"runs/{RUN}/results.csv"]
    root = write_tree(tmp_path / "pub", files)
    (root / "runs" / RUN / "results.csv").mkdir()
    (root / "runs" / RUN / "results.csv" / "x").write_text("x")
    code, out = check(root)
    assert code == 1 and f"runs/{RUN}/results.csv: is a folder, not a regular file" in out and "is missing" not in out


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("zak", "Invalid line"),
        ("zak ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBAAAA", "the key cannot be read"),
        ('zak valid-before="2026" ssh-ed25519 AAAA', "time '2026' is not YYYYMMDD[HHMM[SS]][Z]"),
        ("a" * 5000, "Invalid line"),
    ],
)
def test_allowed_signers_errors_always_carry_a_reason(tmp_path: Path, line: str, reason: str) -> None:
    root = write_tree(tmp_path / "pub", publication(measured_run(), extra={"allowed_signers": line + "\n"}))
    code, out = check(root)
    error = next(x for x in out.splitlines() if x.startswith("Error:"))
    assert code == 1 and error.startswith("Error: allowed_signers:1: malformed allowed_signers line: ")
    assert reason in error and len(error) < 400


def test_names_from_the_repository_reach_the_terminal_with_control_characters_escaped(tmp_path: Path) -> None:
    run = run_yaml(RUN).replace("    better: higher\n", '    better: higher\n    "\\e[2J\\e]0;pwned\\a": 1\n', 1)
    files = dict(publication(measured_run()))
    files[f"runs/{RUN}/run.yaml"] = run
    root = write_tree(tmp_path / "pub", files)
    code, out = check(root)
    assert code == 1 and "\x1b" not in out and "\x07" not in out
    assert "metrics.tokens_per_second.\\x1b[2J\\x1b]0;pwned\\x07: unknown key" in out
