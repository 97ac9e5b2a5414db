"""Many ``ikigai ask`` processes at once against one fake provider server, each writing
its turn to the session store ``IKIGAI_SESSIONS_URL`` names: the concurrency test and
benchmarks/bench_session_stores.py."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from tests.support.fakeserver import FakeServer
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def asks_at_once(server: FakeServer, env: Mapping[str, str], count: int,
                 timeout: float = 300) -> tuple[float, list[subprocess.CompletedProcess[str]]]:
    """Start ``count`` asks (prompts ``q0``, ``q1``, ...) at once; the seconds until the
    last ended, and each one's result. The tools' schemas are cached first, as on any machine
    that has run ikigai before: the burst measures the store, not a hundred cold discoveries
    racing the 1 s ``--schema`` limit."""
    server.push(REPLIES["openai"].reply("A."))
    subprocess.run([IKIGAI, "ask", "--provider", "openai", "--no-stream", "--no-log", "warm"],
                   env=dict(env), stdin=subprocess.DEVNULL, capture_output=True,
                   timeout=timeout, check=True)
    server.push(*(REPLIES["openai"].reply("A.") for _ in range(count)))
    start = time.perf_counter()
    running = [subprocess.Popen([IKIGAI, "ask", "--provider", "openai", "--no-stream",
                                     f"q{i}"], env=dict(env), text=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE) for i in range(count)]
    deadline = time.monotonic() + timeout
    done = []
    for process in running:
        try:
            out, err = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in running:
                other.kill()
                other.communicate()
            raise
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return time.perf_counter() - start, done
