"""web_fetch: peak RSS of the tool on a 200 MB response, and the time of a cache hit.

Run: ``python benchmarks/bench_web_fetch.py`` (or ``python benchmarks/run.py web_fetch``).
A server on 127.0.0.1 streams 200 MB (text, then HTML) to the installed ``web_fetch-tool``;
the tool keeps ``web.max_bytes`` (2 MiB by default) and stops reading. Target (issue 24):
peak RSS <= 64 MiB. Then one page is fetched into the cache and asked for again:
the tool's own time on a hit is the process's CPU time less a bare interpreter's
(medians; CPU time, since wall-clock on a busy machine is mostly waiting); target <= 5 ms.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from _timing import instructions, ms

BIN = Path(sys.executable).parent
TOOL = str(BIN / "web_fetch-tool")
SIZE = 200 * 1024 * 1024
RSS_TARGET = 64 * 1024 * 1024
HIT_TARGET = 0.005
ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "20"))
LINE = b"<p>" + b"All work and no play makes a benchmark. " * 2 + b"</p>\n"


def stream(size: int) -> Iterator[bytes]:
    """``size`` bytes of paragraphs, 64 KiB at a time."""
    block = LINE * (65536 // len(LINE))
    for _ in range(size // len(block)):
        yield block


class Handler(BaseHTTPRequestHandler):
    """``/big.txt`` and ``/big.html``: 200 MB each, streamed; ``/page``: a small page."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        kinds = {"/big.txt": "text/plain", "/big.html": "text/html", "/page": "text/html"}
        if self.path not in kinds:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kinds[self.path])
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for block in stream(SIZE if self.path.startswith("/big") else 65536):
                self.wfile.write(block)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the tool stopped at its cap

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Quiet."""


def run_tool(arguments: dict[str, object], env: dict[str, str],
             argv: list[str] | None = None) -> tuple[dict[str, object], int, float]:
    """The tool's answer, its own peak RSS in bytes and its CPU seconds (``wait4``: this
    child only, and CPU time, which a busy machine changes less than wall-clock)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv or [TOOL], stdin=subprocess.PIPE, stdout=out, env=env)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(arguments).encode())
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        answer = json.loads(out.read() or b"null")
        return answer, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def cached_copy(path: Path, url: str, env: dict[str, str]) -> None:
    """Put a public page in the cache as a fetch would (the benchmark is offline)."""
    import time

    from ikigai_tools_web.fetch.cache import Cache, Entry

    page = {"final_url": url, "status": 200, "content_type": "text/html", "title": "Docs",
            "retrieved_at": "2026-01-01T00:00:00+00:00", "raw": "<p>x</p>" * 4000,
            "markdown": "x\n\n" * 4000}
    Cache(str(path), 100 * 2**20).put(url, Entry(page, time.time(), "93.184.215.14",
                                                  "docs.example.org", False, None, None))


def hit_time(label: str, page: dict[str, object], env: dict[str, str]) -> None:
    """Print the tool's own CPU time on a cache hit of ``page``, and its instructions."""
    hits, bares = [], []
    for _ in range(ROUNDS):
        answer, _, cpu = run_tool(page, env)
        assert answer["cached"] is True, answer
        hits.append(cpu)
        bares.append(run_tool({}, env, [sys.executable, "-c", "print('null')"])[2])
    own = statistics.median(hits) - statistics.median(bares)
    print(f"web_fetch cache hit, {label}: {ms(statistics.median(hits))} CPU, a bare "
          f"interpreter {ms(statistics.median(bares))}: the tool's own time {ms(own)}, "
          f"medians of {ROUNDS} (target <= {ms(HIT_TARGET)}: "
          f"{'PASS' if own <= HIT_TARGET else 'FAIL'})", flush=True)
    counted = (instructions([TOOL], env, stdin=json.dumps(page).encode()),
               instructions([sys.executable, "-c", "pass"], env))
    if counted[0] and counted[1]:
        print(f"  instructions (callgrind): the hit {counted[0] / 1e6:.1f} M, a bare "
              f"interpreter {counted[1] / 1e6:.1f} M: the tool's own "
              f"{(counted[0] - counted[1]) / 1e6:.1f} M", flush=True)


def main() -> None:
    """Measure and print."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="ikigai-bench-") as home:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("IKIGAI_") and k != "PYTHONDONTWRITEBYTECODE"}
        env.update(IKIGAI_HOME=home, IKIGAI_WEB_SETTINGS=json.dumps(
            {"allow_private": ["127.0.0.1"], "robots_ignore": ["127.0.0.1"]}))
        for path in ("/big.txt", "/big.html"):
            result, rss, _ = run_tool({"url": url + path, "max_chars": 100, "no_cache": True},
                                      env)
            print(f"web_fetch {path} (200 MB served): peak RSS {rss / 2**20:.1f} MiB, "
                  f"kept {result.get('total_chars')} characters "
                  f"(target <= 64 MiB: {'PASS' if rss <= RSS_TARGET else 'FAIL'})", flush=True)
        run_tool({"url": url + "/page"}, env)
        hit_time("an allow-listed private page", {"url": url + "/page", "max_chars": 1000}, env)
        public = "https://docs.example.org/page"
        cached_copy(Path(home) / "web-cache.db", public, env)
        hit_time("a public page", {"url": public, "max_chars": 1000}, env)
    server.shutdown()


if __name__ == "__main__":
    main()
