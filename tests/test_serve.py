"""`benchledger serve` end to end, with the real server: saving a results.csv rebuilds the
site once (the pages benchledger writes into docs_dir do not wake the watcher again), and
the page shows the new value."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from helpers import RESULTS, measured_run, publication, write_tree

RUN = "2026-09-01-measured"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_one_save_is_one_rebuild_and_the_page_shows_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "pub", publication(measured_run(RUN)))
    port = free_port()
    command = [sys.executable, "-m", "generator.cli", "serve", "--repo", str(root), "--dev-addr", f"127.0.0.1:{port}"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(server.stdout.readline, "")), daemon=True).start()  # type: ignore[union-attr]
    try:
        deadline = time.monotonic() + 60
        while not any("Serving on" in line for line in lines):
            assert time.monotonic() < deadline and server.poll() is None, "".join(lines)
            time.sleep(0.2)
        time.sleep(2)  # let the first build's writes settle
        before = sum("Documentation built" in line for line in lines)
        saved = time.monotonic()
        (root / "runs" / RUN / "results.csv").write_text(RESULTS.replace("31.2", "77.7"))
        url = f"http://127.0.0.1:{port}/runs/{RUN}/"
        shown = None
        while time.monotonic() < saved + 30:
            page = urllib.request.urlopen(url, timeout=5).read().decode()
            if "77.7" in page:
                shown = time.monotonic() - saved
                break
            time.sleep(0.2)
        assert shown is not None, "".join(lines)
        time.sleep(4)  # a second, useless rebuild would start within this
        rebuilds = sum("Documentation built" in line for line in lines) - before
        assert rebuilds == 1, "".join(lines)
        assert shown < 15, shown
    finally:
        server.terminate()
        server.wait(timeout=20)
        if server.stdout is not None:
            server.stdout.close()
