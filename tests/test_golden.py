"""Golden snapshots of one generated run page and one claim page: any change to what a
reader sees shows up as a diff of tests/golden/ in review.

Update after an intended change: python -m pytest tests/test_golden.py --update-golden
"""

from __future__ import annotations

from pathlib import Path

import pytest

from builders import SLOWER, A, B, claim, report
from helpers import MANIFEST, generate, measured_run, publication, write_tree

GOLDEN = Path(__file__).parent / "golden"


def _publication(root: Path) -> Path:
    candidate = measured_run(B, setup={"draft_vocab": 16000, "head_kernel": "stock"})
    candidate[f"runs/{B}/results.csv"] = SLOWER
    candidate[f"runs/{B}/manifest.yaml"] = MANIFEST.replace("stock", "lowm")
    correction = claim(id="shortlist-c8-matched", corrects="shortlist-c8", statement="Within noise.", claimed="0%")
    files = publication(
        measured_run(A, setup={"draft_vocab": 248320, "head_kernel": "stock"}),
        candidate,
        extra={"site_src/reports/seed.md": report([claim(claimed="+20%"), correction], ["One machine."])},
    )
    return write_tree(root, files)


@pytest.mark.parametrize(
    ("name", "path"),
    [("run_page.md", f"runs/{A}/index.md"), ("claim_page.md", "claims/shortlist-c8/index.md")],
)
def test_generated_page_matches_its_golden_snapshot(tmp_path: Path, update_golden: bool, name: str, path: str) -> None:
    page = generate(_publication(tmp_path / "pub"))[path].decode()
    golden = GOLDEN / name
    if update_golden:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(page)
    assert page == golden.read_text(), f"{path} changed; review, then --update-golden"
