"""`benchledger serve` end to end, with the real server: saving a results.csv rebuilds the
site once (the pages benchledger writes into docs_dir do not wake the watcher again), and
the page shows the new value."""

from __future__ import annotations

import html
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import RESULTS, measured_run, publication, write_tree

RUN = "2026-09-01-measured"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def charts(url: str, page: str) -> dict[str, str]:
    """Each chart spec the page draws, fetched from the server."""
    specs = [html.unescape(m) for m in re.findall(r'data-bl-spec="([^"]+)"', page)]
    assert specs, page[:500]
    return {spec: urllib.request.urlopen(url + spec, timeout=5).read().decode() for spec in specs}


@pytest.mark.parametrize("dirty", [False, True], ids=["clean", "dirty"])
def test_one_save_is_one_rebuild_and_the_page_and_its_charts_show_it(tmp_path: Path, dirty: bool) -> None:
    root = write_tree(tmp_path / "pub", publication(measured_run(RUN)))
    built = subprocess.run([sys.executable, "-m", "generator.cli", "build", "--repo", str(root)], capture_output=True)
    assert built.returncode == 0, built.stderr  # docs_dir holds the generated files: serve's first build writes none
    port = free_port()
    command = [sys.executable, "-m", "generator.cli", "serve", "--repo", str(root), "--dev-addr", f"127.0.0.1:{port}"]
    command += ["--dirty"] if dirty else []
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(server.stdout.readline, "")), daemon=True).start()  # type: ignore[union-attr]
    try:
        deadline = time.monotonic() + 60
        while not any("Serving on" in line for line in lines):
            assert time.monotonic() < deadline and server.poll() is None, "".join(lines)
            time.sleep(0.2)
        time.sleep(2)  # let the first build's writes settle
        url = f"http://127.0.0.1:{port}/runs/{RUN}/"
        drawn = charts(url, urllib.request.urlopen(url, timeout=5).read().decode())  # every spec is served
        assert not any("77.7" in spec for spec in drawn.values())
        before = sum("Documentation built" in line for line in lines)
        saved = time.monotonic()
        (root / "runs" / RUN / "results.csv").write_text(RESULTS.replace("31.2", "77.7"))
        shown, page = None, ""
        while time.monotonic() < saved + 30:
            page = urllib.request.urlopen(url, timeout=5).read().decode()
            if "77.7" in page:
                shown = time.monotonic() - saved
                break
            time.sleep(0.2)
        assert shown is not None, "".join(lines)
        redrawn = charts(url, page)
        assert redrawn.keys() == drawn.keys()
        assert any("77.7" in spec for spec in redrawn.values())  # the trials chart holds the new value
        time.sleep(4)  # a second, useless rebuild would start within this
        rebuilds = sum("Documentation built" in line for line in lines) - before
        assert rebuilds == 1, "".join(lines)
        assert shown < 15, shown
    finally:
        server.terminate()
        server.wait(timeout=20)
        if server.stdout is not None:
            server.stdout.close()
