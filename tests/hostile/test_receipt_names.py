"""Round three's receipt leftovers: a second receipt by the same verifier on the same day gets its
own name (nothing a user wrote is replaced), and `verify --date` before the run was measured is
refused before anything is written, not left for check to refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import cli, measured_run, publication, write_tree

RUN = "2026-09-01-measured"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "pub", publication(measured_run()))


def verify(repo: Path, date: str, statement: str) -> tuple[int, str]:
    return cli(
        "verify", RUN, "--by", "Zak Example", "--method", "review", "--date", date,
        "--statement", statement, "--repo", str(repo),
    )  # fmt: skip


def test_a_second_receipt_the_same_day_gets_its_own_name(repo: Path) -> None:
    folder = repo / "runs" / RUN / "receipts"
    assert verify(repo, "2026-09-25", "first look")[0] == 0
    first = (folder / "2026-09-25-zak-example.yaml").read_bytes()
    code, out = verify(repo, "2026-09-25", "second look")
    assert code == 0, out
    assert f"wrote {folder / '2026-09-25-zak-example-2.yaml'}" in out
    assert (folder / "2026-09-25-zak-example.yaml").read_bytes() == first
    assert "second look" in (folder / "2026-09-25-zak-example-2.yaml").read_text()
    assert sorted(p.name for p in folder.iterdir()) == ["2026-09-25-zak-example-2.yaml", "2026-09-25-zak-example.yaml"]
    assert cli("check", "--repo", str(repo))[0] == 0


def test_verify_refuses_a_date_before_the_run(repo: Path) -> None:
    code, out = verify(repo, "2026-08-01", "backdated")
    assert code == 1
    assert out == (
        f"Error: --date: 2026-08-01 is before {RUN} was measured (2026-09-01); "
        "a receipt cannot predate its run: give the day you verified it\n"
    )
    assert not (repo / "runs" / RUN / "receipts").exists()
