"""The wheel a release would publish installs into a clean virtual environment, and the
steps of the Pages workflow `benchledger init` writes, read from that YAML, publish the
scaffold with it. A scaffold that cannot publish fails here, not on a user's first push."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[1]


@pytest.mark.skipif(os.environ.get("BENCHLEDGER_SKIP_WHEEL") == "1", reason="BENCHLEDGER_SKIP_WHEEL=1")
def test_the_wheel_installs_cleanly_and_the_scaffold_publishes_with_it(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = dist.glob("benchledger-*.whl")
    with zipfile.ZipFile(wheel) as packed:
        names = packed.namelist()
    assert all(n.startswith(("generator/", "benchledger-")) for n in names), names  # no scripts/, tests/, runs/
    assert "generator/authoring/new_publication/review.yml" in names  # the scaffold's data files ship
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    clean["PATH"] = f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}"
    pub = tmp_path / "pub"
    init = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)], env=clean, timeout=900, check=False
    )
    assert init.returncode == 0
    made = subprocess.run(
        ["benchledger", "init", str(pub), "--install", str(wheel)],
        env=clean,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    workflow = yaml.safe_load((pub / ".github/workflows/publish.yml").read_text())
    runs = [step["run"] for step in workflow["jobs"]["build"]["steps"] if "run" in step]
    assert runs == [f'pip install "{wheel}" -r requirements-site.txt', "benchledger build --strict"]
    for command in runs:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command], env=clean, cwd=pub, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    located = subprocess.run(
        [str(bin_dir / "python"), "-c", "import generator; print(generator.__file__)"],
        env=clean,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(env_dir) in located.stdout  # the wheel, not the checkout
    assert (pub / "site" / "claims" / "example-draft-speedup" / "index.html").is_file()
