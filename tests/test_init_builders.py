"""`benchledger init`, `generate`, and builds with MkDocs, ProperDocs and Zensical."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from generator.cli import app

REPO = Path(__file__).parents[1]


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_init_creates_a_publication_that_checks_and_builds_strictly(tmp_path: Path) -> None:
    folder = tmp_path / "pub"
    code, out = cli("init", str(folder))
    assert code == 0, out
    assert "cd " in out and "benchledger serve" in out and "git init" in out
    for rel in (
        "mkdocs.yml",
        "site_src/index.md",
        "site_src/reports/example.md",
        ".github/workflows/publish.yml",
        ".gitattributes",
        ".gitignore",
        "allowed_signers",
        "runs/2026-01-10-example-baseline/run.yaml",
        "runs/2026-01-10-example-candidate/results.csv",
    ):
        assert (folder / rel).is_file(), rel
    assert (folder / ".gitattributes").read_text() == "runs/** -text\n"
    assert cli("check", "--repo", str(folder))[0] == 0
    code, out = cli("build", "--repo", str(folder), "--strict")
    assert code == 0, out
    claim = (folder / "site" / "claims" / "example-draft-speedup" / "index.html").read_text()
    assert "Correction of example&#45;draft&#45;speedup" in claim and "engine.threads" in claim


def test_init_workflow_installs_this_benchledger_and_a_pinned_toolchain(tmp_path: Path) -> None:
    from importlib import metadata

    from generator import __version__

    folder = tmp_path / "pub"
    assert cli("init", str(folder))[0] == 0
    workflow = (folder / ".github" / "workflows" / "publish.yml").read_text()
    assert f'run: pip install "benchledger=={__version__}" -r requirements-site.txt\n' in workflow
    lock = (folder / "requirements-site.txt").read_text().splitlines()
    assert f"mkdocs=={metadata.version('mkdocs')}" in lock
    assert f"mkdocs-material=={metadata.version('mkdocs-material')}" in lock
    assert all("==" in line for line in lock if not line.startswith("#"))


def test_init_install_names_a_tagged_repository(tmp_path: Path) -> None:
    folder = tmp_path / "pub"
    spec = "git+https://github.com/example/benchledger@v0.1.0"
    assert cli("init", str(folder), "--install", spec)[0] == 0
    workflow = (folder / ".github" / "workflows" / "publish.yml").read_text()
    assert f'run: pip install "{spec}" -r requirements-site.txt\n' in workflow
    code, out = cli("init", str(tmp_path / "other"), "--install", 'x"; curl evil')
    assert code == 1 and "is not a pip requirement" in out
    assert not (tmp_path / "other").exists()


def test_init_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code, out = cli("init", str(tmp_path))
    assert code == 1 and "is not empty" in out and "--force" in out
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert cli("init", str(tmp_path), "--force")[0] == 0
    assert (tmp_path / "notes.txt").read_text() == "mine"


def example(tmp_path: Path) -> Path:
    root = tmp_path / "example"
    for name in ("mkdocs.yml", "runs", "site_src"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(
                source,
                root / name,
                ignore=shutil.ignore_patterns(
                    "runs", "claims", "assets", "ledger", "compare", "methods.md", ".benchledger-generated.json"
                )
                if name == "site_src"
                else None,
            )
        else:
            root.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, root / name)
    return root


def test_generate_writes_pages_only(tmp_path: Path) -> None:
    root = example(tmp_path)
    code, out = cli("generate", "--repo", str(root))
    assert code == 0, out
    assert (root / "site_src" / "runs" / "index.md").is_file()
    assert (root / "site_src" / "claims" / "shortlist-c8" / "index.md").is_file()
    assert not (root / "site").exists()


@pytest.mark.parametrize("builder", ["properdocs", "zensical"])
def test_example_publication_builds_with_other_builders(tmp_path: Path, builder: str) -> None:
    if shutil.which(builder) is None:
        pytest.skip(f"{builder} is not installed (pip install {builder}); CI installs it")
    root = example(tmp_path)
    code, out = cli("build", "--repo", str(root), "--builder", builder)
    assert code == 0, out
    page = (root / "site" / "runs" / "2026-09-28-play1-nmax3" / "index.html").read_text()
    assert 'class="bl-chart"' in page and "assets/benchledger/vega.js" in page
    assert (root / "site" / "runs" / "2026-09-28-play1-nmax3" / "charts" / "tokens_per_second-reported.json").is_file()
    assert (root / "site" / "claims" / "shortlist-c8" / "charts" / "forest.json").is_file()
    if builder == "zensical":
        assert "zensical runs no MkDocs plugins" in out


def test_unknown_builder_is_refused(tmp_path: Path) -> None:
    code, out = cli("build", "--repo", str(example(tmp_path)), "--builder", "hugo")
    assert code == 1 and "expected one of mkdocs, properdocs, zensical" in out


def test_example_publication_builds_byte_identical_in_two_folders(tmp_path: Path) -> None:
    import hashlib

    sites = []
    for name in ("first", "second/nested"):
        root = example(tmp_path / name)
        assert cli("build", "--repo", str(root))[0] == 0
        sites.append(
            {
                p.relative_to(root / "site").as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted((root / "site").rglob("*"))
                if p.is_file()
            }
        )
    assert sites[0] == sites[1]
    assert "search/search_index.json" in sites[0]
    assert any(name.endswith("forest.json") for name in sites[0])


def test_reenacted_seed_claim_flags_the_build_by_itself(tmp_path: Path) -> None:
    root = example(tmp_path)
    assert cli("generate", "--repo", str(root))[0] == 0
    page = (root / "site_src" / "claims" / "testbed-drafting-native" / "index.md").read_text()
    assert (
        '<tr><td data-label="Key">build.GGML&#95;NATIVE</td>'
        '<td data-label="Baseline (2026&#45;11&#45;29&#45;testbed&#45;nodraft)">OFF</td>'
        '<td data-label="Candidate (2026&#45;11&#45;29&#45;testbed&#45;nmax2&#45;native)">ON</td></tr>'
    ) in page
    assert "unmatched conditions" in page and "Correction of testbed&#45;drafting&#45;native" in page
    matched = page.split("## Unmatched conditions in testbed&#45;drafting&#45;matched")[1]
    assert matched.lstrip().startswith("No key that both record differs:")


def test_init_ships_a_review_workflow_and_a_run_on_request_workflow(tmp_path: Path) -> None:
    import yaml

    from generator import __version__

    folder = tmp_path / "pub"
    assert cli("init", str(folder))[0] == 0
    workflows = folder / ".github" / "workflows"
    review = yaml.safe_load((workflows / "review.yml").read_text())
    assert list(review[True]) == ["pull_request_target"]  # YAML 1.1 reads `on` as True; the base's workflow
    steps = review["jobs"]["review"]["steps"]
    assert steps[0]["with"] == {"fetch-depth": 0, "persist-credentials": False}  # the base branch, not the PR's
    assert steps[2]["run"] == f'pip install "benchledger=={__version__}" -r requirements-site.txt'
    assert steps[3]["run"] == 'git fetch --no-tags origin "pull/$PR/head:refs/benchledger/pr-head"'
    assert all("ref" not in step.get("with", {}) for step in steps)  # the pull request is never checked out
    script = steps[4]["run"]
    assert 'benchledger review --base "origin/$BASE_REF" --head refs/benchledger/pr-head > review.md' in script
    assert script.startswith("set +e") and '>> "$GITHUB_STEP_SUMMARY"' in script  # written even when failing
    assert steps[4]["env"] == {"BASE_REF": "${{ github.base_ref }}"}  # never pasted into the script
    assert "--edit-last" in steps[5]["run"] and steps[6]["run"] == 'exit "$REVIEW_STATUS"'

    request = yaml.safe_load((workflows / "run-on-request.yml").read_text())
    assert set(request[True]["workflow_dispatch"]["inputs"]) == {"base_url", "model", "concurrency", "trials", "title"}
    job = request["jobs"]["run"]
    assert job["runs-on"] == ["self-hosted", "benchledger"]
    measure = next(s for s in job["steps"] if s.get("name") == "measure")
    assert "${{" not in measure["run"]  # inputs arrive through the environment only
    assert 'benchledger run openai --base-url "$BASE_URL"' in measure["run"]
    assert "benchledger check" in measure["run"]
    assert "benchledger verify" not in measure["run"]  # a tool's word verifies nothing: a person writes the receipt
    assert "gh pr create" in job["steps"][-1]["run"]
    for name in ("publish.yml", "review.yml", "run-on-request.yml"):  # actions pinned by commit, tag in a comment
        uses = re.findall(r"uses: (\S+)(.*)", (workflows / name).read_text())
        assert uses and all(re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", ref) and "# v" in note for ref, note in uses), name
    lock = (folder / "requirements-site.txt").read_text()
    assert all(f"\n{name}==" in lock for name in ("statsmodels", "patsy", "pandas"))


def test_a_new_report_joins_the_navigation_newest_first(tmp_path: Path) -> None:
    folder = tmp_path / "pub"
    code, out = cli("init", str(folder))
    assert code == 0 and "README.md walks through runs, claims, reports" in out
    assert "## Add a claim and a report" in (folder / "README.md").read_text()
    (folder / "site_src" / "reports" / "newer.md").write_text(
        "---\ntitle: A newer report\ndate: 2026-02-01\n---\n\n# A newer report\n"
    )
    code, out = cli("build", "--repo", str(folder), "--strict")
    assert code == 0, out
    page = (folder / "site" / "index.html").read_text()
    nav = re.findall(r'<a href="([^"]+)" class="md-nav__link">\s*<span class="md-ellipsis">\s*([^<]+?)\s*</span>', page)
    titles = [title for _, title in nav]
    assert titles.index("A newer report") < titles.index("Example: a speedup and its correction")
    assert titles[titles.index("Example: a speedup and its correction") + 1 :][:6] == [
        "Claims",
        "Runs",
        "Compare",
        "Series",  # the History section: its index of series, then its Changes page
        "Changes",
        "Methods",
    ]
    assert 'data-md-color-scheme="slate"' in page or "Dark mode" in page  # the palette toggle


def test_the_automatic_navigation_prints_folder_names_as_text_and_skips_hidden_pages(tmp_path: Path) -> None:
    folder = tmp_path / "pub"
    assert cli("init", str(folder))[0] == 0
    hostile = folder / "site_src" / "<svg onload=alert(1)>"
    hostile.mkdir()
    (hostile / "a.md").write_text("# a\n")
    (folder / "site_src" / ".hidden.md").write_text("# hidden\n")
    code, out = cli("build", "--repo", str(folder), "--strict")
    assert code == 0, out
    page = (folder / "site" / "index.html").read_text()
    assert "<svg onload" not in page and "&lt;svg onload=alert(1)&gt;" in page
    assert ".hidden" not in page
