"""Two files a run publishes under names that are one name on a case-insensitive file system
(macOS, Windows: `raw/Log.txt` and `raw/log.txt`), or a file published under the name of
another's folder (`notes.md` is published as `notes.md.txt`, beside a folder `notes.md.txt/`),
or two metrics whose chart files differ only in case: `check` refuses them naming both, where
the build used to end in a traceback (FileExistsError) or keep one file of two."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import RESULTS, cli, measured_run, publication, run_yaml, write_tree

RUN = "2026-09-01-measured"
REL = f"runs/{RUN}"
EVERY = "one name on every file system; rename one of them"
FS = "one name on a case-insensitive file system (macOS, Windows); rename one of them"


def _check(tmp_path: Path, extra: dict[str, str], **fields: object) -> tuple[int, str]:
    files = {**measured_run(RUN, **fields), **{f"{REL}/{k}": v for k, v in extra.items()}}
    root = write_tree(tmp_path / "pub", publication(files))
    return cli("check", "--repo", str(root))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"raw/Log.txt": "a\n", "raw/log.txt": "b\n"},
            f"Error: {REL}/raw/log.txt: is published as files/raw/log.txt, and {REL}/raw/Log.txt as "
            f"files/raw/Log.txt: {FS}\n",
        ),
        (
            {"notes.md": "a\n", "notes.md.txt": "b\n"},  # .md is published with .txt appended
            f"Error: {REL}/notes.md.txt: is published as files/notes.md.txt, and {REL}/notes.md as "
            f"files/notes.md.txt: {EVERY}\n",
        ),
        (
            {"Raw/a.csv": "a\n", "raw/b.csv": "b\n"},
            f"Error: {REL}/raw/b.csv: is published in the folder files/raw/, and {REL}/Raw/a.csv in files/Raw/: {FS}\n",
        ),
        (
            {"notes.md": "a\n", "notes.md.txt/x.csv": "b\n"},
            f"Error: {REL}/notes.md.txt/x.csv: is published in the folder files/notes.md.txt/, and {REL}/notes.md "
            f"as the file files/notes.md.txt: {EVERY}\n",
        ),
    ],
)
def test_run_files_published_under_one_name_are_refused(tmp_path: Path, extra: dict[str, str], message: str) -> None:
    code, out = _check(tmp_path, extra)
    assert code == 1
    assert message in out, out


def test_metrics_whose_charts_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    metrics = {"tokens_per_second": {"unit": "tok/s", "better": "higher"}, "TOKENS_per_second": {"unit": "tok/s"}}
    fields = {"metrics": metrics, "rates": {}}
    files = measured_run(RUN, **fields)
    rows = [line.split(",")[:3] for line in RESULTS.splitlines()[1:]]
    files[f"{REL}/results.csv"] = "trial,concurrency,tokens_per_second,TOKENS_per_second\n" + "".join(
        f"{t},{c},{v},{v}\n" for t, c, v in rows
    )
    root = write_tree(tmp_path / "pub", publication(files))
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    assert (
        f"Error: {REL}/run.yaml: metrics.tokens_per_second: and metrics.TOKENS_per_second name chart files "
        f"(charts/TOKENS_per_second-trials.json, charts/tokens_per_second-trials.json) that are {FS}\n"
    ) in out, out


def test_names_that_differ_otherwise_pass(tmp_path: Path) -> None:
    code, out = _check(tmp_path, {"raw/log-1.txt": "a\n", "raw/log-2.txt": "b\n", "notes.md": "c\n"})
    assert code == 0, out
    assert run_yaml(RUN)  # the fixture run itself is unchanged


def test_reports_whose_pages_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    report = "---\ntitle: {t}\ndate: 2026-09-02\n---\n\n# {t}\n"
    extra = {
        "site_src/reports/Play-1.md": report.format(t="Upper"),
        "site_src/reports/play-1.md": report.format(t="Lower"),
    }
    root = write_tree(tmp_path / "pub", publication(measured_run(RUN), extra=extra))
    code, out = cli("check", "--repo", str(root))
    assert code == 1
    assert out.endswith(
        "Error: site_src/reports/play-1.md: is published as the page reports/play-1/, and "
        f"site_src/reports/Play-1.md as reports/Play-1/: {FS}\n"
    ), out


def test_a_composed_and_a_decomposed_name_are_one_name(tmp_path: Path) -> None:
    """macOS compares `café` written with U+00E9 and with e + U+0301 as one name."""
    composed, decomposed = "raw/caf\u00e9.txt", "raw/cafe\u0301.txt"
    code, out = _check(tmp_path, {composed: "a\n", decomposed: "b\n"})
    assert code == 1
    first, second = sorted([composed, decomposed])
    assert (
        f"Error: {REL}/{second}: is published as files/{second}, and {REL}/{first} as files/{first}: {FS}\n"
    ) in out, out
