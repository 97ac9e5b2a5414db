"""web_search: the tool's own time for the setup message and for one search.

Run: ``python benchmarks/bench_web_search.py`` (or ``python benchmarks/run.py web_search``).
The installed ``web_search-tool`` answers, each round in turn: with no backend set up (the
setup message: the plugin manager, no httpx), and a search of a SearXNG-shaped server on
127.0.0.1 (20 results, five kept). Each is printed as the median wall and CPU time of the
process, and its CPU time less a bare interpreter's: the tool's own cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from _timing import measured, ms

TOOL = str(Path(sys.executable).parent / "web_search-tool")
ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "15"))
RESULTS = json.dumps({"results": [
    {"url": f"https://example.org/{i}", "title": f"Result {i}", "content": "Text " * 40}
    for i in range(20)]}).encode()


class SearXNG(BaseHTTPRequestHandler):
    """``/search?format=json``: the same 20 results every time."""

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(RESULTS)))
        self.end_headers()
        self.wfile.write(RESULTS)

    def log_message(self, *args: object) -> None:
        """Quiet."""


def run(argv: list[str], env: dict[str, str], stdin: bytes = b"", expect: bytes = b"") -> None:
    """Run once; stop the benchmark if the answer lacks ``expect``."""
    done = subprocess.run(argv, input=stdin, env=env, capture_output=True, check=True)
    if expect not in done.stdout:
        raise SystemExit(f"benchmark stopped: expected {expect!r}, got {done.stdout[:200]!r}")


def main() -> None:
    """Measure and print."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), SearXNG)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IKIGAI_", "BRAVE_",
                                                                    "TAVILY_", "GOOGLE_CSE"))}
    env["IKIGAI_HOME"] = home
    searx = {**env, "IKIGAI_SEARCH_SEARXNG_URL": f"http://127.0.0.1:{server.server_address[1]}"}
    query = b'{"query": "benchmark"}'
    medians = measured({
        "bare interpreter": lambda: run([sys.executable, "-c", "pass"], env),
        "setup message": lambda: run([TOOL], env, query, b'"no_search_backend"'),
        "searxng search": lambda: run([TOOL], searx, query, b'"backend": "searxng"'),
    }, ROUNDS)
    base_cpu = medians["bare interpreter"][1]
    for name, (wall, cpu) in medians.items():
        own = "" if name == "bare interpreter" else f"; own CPU {ms(cpu - base_cpu)}"
        print(f"{name}: wall {ms(wall)}, CPU {ms(cpu)}{own}", flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
