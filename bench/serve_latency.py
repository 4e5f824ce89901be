"""From saving a results.csv to the page showing it, with the real `benchledger serve`.

Builds a synthetic publication (bench/build_scale.py's), starts `benchledger serve --dirty`
on a free port, changes one run's results.csv, and prints the seconds until that run's page
serves the new value, and how many rebuilds the save caused (target: under 1 s at 1,000
runs, one rebuild per save); then a second save, of another run, likewise.

    python bench/serve_latency.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from build_scale import MKDOCS, make_publication


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pub"
        make_publication(root, args.runs)
        (root / "mkdocs.yml").write_text(MKDOCS.format(plugin=", benchledger"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        command = [sys.executable, "-m", "generator.cli", "serve", "--dirty", "--repo", str(root)]
        server = subprocess.Popen(
            [*command, "--dev-addr", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        lines: list[str] = []
        assert server.stdout is not None
        threading.Thread(target=lambda: lines.extend(iter(server.stdout.readline, "")), daemon=True).start()
        try:
            start = time.monotonic()
            while not any("Serving on" in line for line in lines):
                if server.poll() is not None:
                    raise SystemExit("".join(lines))
                time.sleep(0.2)
            print(f"first build and serve: {time.monotonic() - start:.1f} s ({args.runs} runs)")
            time.sleep(3)
            names = sorted(p.name for p in (root / "runs").iterdir())
            # the first save reads every run again (their files changed within 3 s of the first
            # build's read: `ledger.seen_runs.RACY_NS`); the second, as in a session of edits, one
            for which, run in (("first", names[args.runs // 2]), ("second", names[args.runs // 3])):
                shown, rebuilds = _save(root, run, port, lines)
                print(f"{which} save to served page: {shown:.2f} s; rebuilds caused by the save: {rebuilds}")
        finally:
            server.terminate()
            server.wait(timeout=30)
            server.stdout.close()


def _save(root: Path, run: str, port: int, lines: list[str]) -> tuple[float, int]:
    """Change trial 1 of `run` to 4242.42 tok/s; the seconds until its page shows it, and the
    rebuilds the save caused."""
    results = root / "runs" / run / "results.csv"
    before = sum("Documentation built" in line for line in lines)
    saved = time.monotonic()
    header, first, *rest = results.read_text().splitlines()
    cells = first.split(",")
    cells[2] = "4242.42"  # trial 1's tokens_per_second at the first condition
    results.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")
    while time.monotonic() < saved + 120:
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/runs/{run}/", timeout=30).read().decode()
        if "4,242" in page:
            break
        time.sleep(0.02)  # the page is asked for every 20 ms: at most that much is added
    else:
        raise SystemExit("the page never showed the new value:\n" + "".join(lines[-20:]))
    shown = time.monotonic() - saved
    time.sleep(max(5.0, 2 * shown))  # a second rebuild would have started by now
    return shown, sum("Documentation built" in line for line in lines) - before


if __name__ == "__main__":
    main()
