"""Run, claim and grid pages reach the site's search from their records: the search plugin
skips their HTML, and the plugin adds one entry per page (tests/test_browser.py searches it)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from generator.cli import app
from helpers import MANIFEST, measured_run, write_tree
from helpers import publication as pub

RUN = "2026-09-01-measured"
HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def built_index(root: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(app, ["build", "--repo", str(root)])
    assert result.exit_code == 0, result.output
    docs = json.loads((root / "site" / "search" / "search_index.json").read_text())["docs"]
    assert isinstance(docs, list)
    return docs


def test_a_run_page_is_one_entry_from_its_records_with_its_id_as_tag(tmp_path: Path) -> None:
    files = measured_run(RUN, title="Draft head, GEMM kernel swapped", setup={"draft_vocab": 16000})
    files[f"runs/{RUN}/manifest.yaml"] = MANIFEST + "gpu: {name: Radeon 8060S}\n"
    docs = built_index(write_tree(tmp_path, pub(files)))
    mine = [d for d in docs if str(d["location"]).startswith(f"runs/{RUN}/")]
    assert len(mine) == 1, mine  # no section of its HTML: the search plugin skipped the page
    entry = mine[0]
    assert entry["location"] == f"runs/{RUN}/" and entry["tags"] == [RUN]
    assert entry["title"] == "Draft head, GEMM kernel swapped"
    text = str(entry["text"])
    for words in (f"Run {RUN}", "setup.draft_vocab 16000", "gpu.name Radeon 8060S", "metrics tokens_per_second"):
        assert words in text, words
    assert any(d["location"] == "runs/" for d in docs)  # the runs index is still searched as a page


def test_untrusted_text_in_a_search_entry_stays_text(tmp_path: Path) -> None:
    files = measured_run(RUN, title=f"Title {HOSTILE}", setup={"k": HOSTILE})
    files[f"runs/{RUN}/manifest.yaml"] = MANIFEST + f"extra: {json.dumps(HOSTILE)}\n"
    docs = built_index(write_tree(tmp_path, pub(files)))
    entry = next(d for d in docs if d["location"] == f"runs/{RUN}/")
    for field in ("title", "text"):
        value = str(entry[field])
        assert "<script" not in value and "<img" not in value, field
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in value, field
