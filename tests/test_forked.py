"""Work spread over forked workers (generator/forked.py) gives exactly what one process gives:
the same results in the same order, each log record handled once by the build, an error raised
as it would be without workers, and a site byte for byte the same, first build and rebuild.

Each check runs in a new process: a fork is refused while other threads run, and the test
process may hold some (a fake server of another test)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from build_scale import MKDOCS, make_publication  # noqa: E402  # the bench's synthetic publication

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=600,
    )


MAP = """
    import logging, os, sys
    from generator.forked import forked_map
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
    log = logging.getLogger("mkdocs.x")
    parent = os.getpid()

    def square(k):
        if k % 25 == 0:
            log.warning("item %d", k)
        if k == int(os.environ.get("FAIL_AT", "-1")):
            raise ValueError(f"item {k} is bad")
        return k * k, os.getpid() != parent

    try:
        done = forked_map(square, list(range(100)), least=10)
    except ValueError as err:
        print("raised", err)
    else:
        print("squares", [v for v, _ in done] == [k * k for k in range(100)])
        print("workers", all(w for _, w in done))
"""


def test_results_keep_their_order_and_each_record_is_logged_once_by_the_build() -> None:
    done = python(MAP, BENCHLEDGER_JOBS="2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "mkdocs.x WARNING item 0",
        "mkdocs.x WARNING item 25",
        "mkdocs.x WARNING item 50",
        "mkdocs.x WARNING item 75",
        "squares True",
        "workers True",  # every item was computed in a worker, none here
    ]


def test_one_worker_computes_everything_in_this_process() -> None:
    done = python(MAP, BENCHLEDGER_JOBS="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["squares True", "workers False"]


def test_an_error_in_a_worker_is_raised_as_one_process_raises_it_with_no_record_twice() -> None:
    done = python(MAP, BENCHLEDGER_JOBS="2", FAIL_AT="60")
    assert done.returncode == 0, done.stderr
    # the workers' results and records are dropped; the map runs again here, up to the error
    assert done.stdout.splitlines() == [
        "mkdocs.x WARNING item 0",
        "mkdocs.x WARNING item 25",
        "mkdocs.x WARNING item 50",
        "raised item 60 is bad",
    ]


def test_a_read_only_mapping_comes_back_from_a_worker_read_only() -> None:
    """A claim's evaluation holds its report, whose lines are a read-only mapping: such a result
    is computed by the workers (before, it could not be pickled, so 100 claims were judged a
    second time in one process), and arrives read-only, equal to what one process computes."""
    done = python(
        """
        import os
        from types import MappingProxyType
        from generator.forked import forked_map
        parent = os.getpid()
        done = forked_map(lambda k: (MappingProxyType({"line": k}), os.getpid() != parent), list(range(40)), least=8)
        print(all(type(m) is MappingProxyType and m["line"] == k for k, (m, _) in enumerate(done)))
        print(all(worker for _, worker in done))
        """,
        BENCHLEDGER_JOBS="2",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "True"]


LOAD = """
    import logging, os, sys
    from pathlib import Path
    from generator.ledger.load import load
    logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format="%(message)s")
    root = Path(sys.argv[1])
    cache = {}
    first = load(root, "site_src", cache)
    again = load(root, "site_src", cache)  # every run known: put together from the cache's entries
    print([str(p) for p in first.problems])
    print(sorted(first.failed_runs), len(first.runs), len(cache))
    print(first.runs == again.runs)
    print(all(run.meta is cache[(run.id, run.digest)][0] for run in again.runs.values()))
"""


def test_run_folders_read_by_workers_give_the_ledger_one_process_reads(tmp_path: Path) -> None:
    """The runs, their problems in folder order (a broken run, a symlink, a scratch folder, a
    stray file among them) and the parse cache's entries are those one process finds; a run
    the cache knows shares the cache's parsed parts, in a worker's load as in one process's."""
    root = tmp_path / "pub"
    make_publication(root, 80)
    runs = sorted((root / "runs").iterdir())
    (runs[10] / "run.yaml").write_text("id: [unclosed\n")
    (runs[40] / "manifest.yaml").write_text("schema: benchledger.manifest/1\nhost: {name: b, cores: 2}\ngpu_ms: 3\n")
    (root / "runs" / "2026-09-15-zz-link").symlink_to(runs[0])
    (root / "runs" / "2026-09-15-zz-run.partial-ab12").mkdir()
    (root / "runs" / "2026-09-15-zz-run.partial-ab12" / "PARTIAL-RUN.txt").write_text("")
    (root / "runs" / "notes.txt").write_text("a stray file\n")
    script = textwrap.dedent(LOAD)
    outputs = []
    for jobs in ("2", "1"):
        done = subprocess.run(
            [sys.executable, "-c", script, str(root)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "BENCHLEDGER_JOBS": jobs},
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.splitlines())
    forked, alone = outputs
    assert forked[0] == "benchledger: 80 run folders read by 2 forked workers"  # twice: known runs too
    assert forked.pop(0) == forked.pop(0) and not alone[0].startswith("benchledger:")
    assert forked == alone
    problems = forked[0]
    assert runs[10].name in problems and "runs/2026-09-15-zz-link" in problems and "gpu_ms" in problems
    assert "runs/notes.txt" in problems and "zz-run.partial-ab12" in problems
    assert forked[1:4] == [f"['{runs[10].name}'] 79 79", "True", "True"]


def _build(root: Path, jobs: str, *extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", "build", "--verbose", "--repo", str(root), *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "BENCHLEDGER_JOBS": jobs, "BENCHLEDGER_BUILD_CACHE": str(root.parent / "cache")},
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def _tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_a_forked_build_and_its_rebuild_equal_one_process_builds_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    make_publication(root, 70)  # 70 runs, 7 claims, history: enough for every map to fork
    (root / "mkdocs.yml").write_text(MKDOCS.format(plugin=", benchledger"))
    log = _build(root, "2")
    for what in ("runs rendered", "files written", "pages read and converted", "pages in the theme", "pages crawled"):
        assert f" {what} by 2 forked workers" in log, what
    forked = _tree(root / "site")
    _build(root, "1", "--no-cache")
    alone = _tree(root / "site")
    assert forked.keys() == alone.keys()
    assert [p for p in forked if forked[p] != alone[p]] == []
    assert len(forked) > 900  # 70 run pages, their charts and files, claims, history

    results = sorted((root / "runs").iterdir())[35] / "results.csv"
    results.write_text(results.read_text().replace("\n1,1,", "\n1,1,9", 1))
    _build(root, "2")  # with the build cache: one run rendered, the rest reused
    rebuilt = _tree(root / "site")
    _build(root, "1", "--no-cache")
    fresh = _tree(root / "site")
    assert rebuilt.keys() == fresh.keys()
    assert [p for p in rebuilt if rebuilt[p] != fresh[p]] == []
    assert rebuilt != forked  # the change shows
