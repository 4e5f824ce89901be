"""Command-line values that check would refuse later, or that used to end in a traceback, are
refused at once with the option, the value and the fix: --by, --date, SOURCE_DATE_EPOCH, and
init into a dangling symlink."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import cli

RUN = "2026-09-01-measured"


@pytest.mark.parametrize(
    ("by", "date", "message"),
    [
        ("a" * 3000, None, "--by: give a name of at most 200 characters, without control characters"),
        ("Zak\x1b[31m", None, "--by: give a name of at most 200 characters, without control characters"),
        ("Zak", "2026-02-30", "--date: '2026-02-30' is not a day, YYYY-MM-DD"),
        ("Zak", "0001-01-01", "--date: '0001-01-01' is out of range; give a day between 1970 and 2105"),
        ("Zak", "2105-12-31", "--date: '2105-12-31' is after today; give the day you verified the run"),
    ],
)
@pytest.mark.parametrize("command", ["verify", "rerun"])
def test_names_and_days_check_would_refuse_are_refused_at_once(
    repo: Path, command: str, by: str, date: str | None, message: str
) -> None:
    extra = ["--method", "review"] if command == "verify" else []
    code, out = cli(command, RUN, "--by", by, *extra, *(["--date", date] if date else []), "--repo", str(repo))
    assert (code, out) == (1, f"Error: {message}\n")
    assert not (repo / "runs" / RUN / "receipts").exists()


@pytest.mark.parametrize("epoch", ["", "abc", "-1", "99999999999", "1e9"])
def test_a_source_date_epoch_mkdocs_cannot_read_is_a_clear_error(repo: Path, epoch: str) -> None:
    command = [sys.executable, "-m", "generator.cli", "build", "--repo", str(repo)]
    done = subprocess.run(command, env={**os.environ, "SOURCE_DATE_EPOCH": epoch}, capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        f"Error: SOURCE_DATE_EPOCH: {epoch!r} is not a whole number of seconds since 1970 up to 4294967295 "
        "(e.g. 1767225600); fix it or unset it\n"
    ) in done.stderr


def test_init_into_a_dangling_symlink_is_a_clear_error(tmp_path: Path) -> None:
    link = tmp_path / "pub"
    link.symlink_to(tmp_path / "nowhere")
    code, out = cli("init", str(link))
    assert (code, out) == (1, f"Error: {link}: is a symlink; give a real folder, or a path that does not exist yet\n")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("value", ["9" * 5000, "2026-02-30"])
def test_a_setup_value_yaml_cannot_convert_is_kept_as_text(tmp_path: Path, value: str) -> None:
    from helpers import import_into

    fixture = Path(__file__).parents[1] / "fixtures" / "hyperfine" / "gzip-sizes.json"
    code, out, root = import_into(tmp_path, "hyperfine", str(fixture), "--id", RUN, "--setup", f"knob={value}")
    assert code == 0, out
    assert f"knob: '{value}'" in (root / "runs" / RUN / "run.yaml").read_text()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--citation", "x", "--url", "javascript:alert(1)"],
            "run.yaml:16: source.url: url 'javascript:alert(1)' must be an http:// or https:// address",
        ),
        (["--date", "0001-01-01"], "run.yaml:4: date: the year 1 is out of range; give a date between 1970 and 2105"),
    ],
)
def test_import_refuses_dates_and_urls_check_refuses(tmp_path: Path, options: list[str], message: str) -> None:
    from helpers import import_into

    fixture = Path(__file__).parents[1] / "fixtures" / "hyperfine" / "gzip-sizes.json"
    code, out, root = import_into(tmp_path, "hyperfine", str(fixture), "--id", RUN, *options)
    assert code == 1 and f"Error: runs/{RUN}/{message}" in out, out
    assert "check would refuse the imported run, so nothing was written\n" in out
    assert not (root / "runs" / RUN).exists()
