"""``ikigai ask`` on a pipe, one answer from the local fake server: as it runs, against the
same run with httpx's command line imported first, as ``import httpx`` did before
(``ikigai_core.transport.HTTPX_CLI``: rich, click and pygments come with it when installed).

Run on demand: ``python benchmarks/bench_ask_pipe.py [ROUNDS]``. Each case is a whole
process started through the console script's ``main``; wall-clock and CPU medians of
interleaved runs, and what the blocked import saves.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _timing import measured, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from tests.support.fakeserver import FakeServer  # noqa: E402
from tests.support.replies import REPLIES  # noqa: E402

RUN = "import sys\n{before}from ikigai_core.cli import main\nsys.argv[0] = 'ikigai'\nmain()\n"


def ask(server: FakeServer, env: dict[str, str], before: str) -> None:
    """One ``ask`` on a pipe; the benchmark stops if the answer is not the one pushed."""
    server.push(REPLIES["openai"].reply("Hi."))
    done = subprocess.run([sys.executable, "-c", RUN.format(before=before), "ask", "--provider",
                           "openai", "--no-stream", "--no-log", "hi"], env=env,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    if done.stdout != b"Hi.\n":
        raise SystemExit(f"benchmark stopped: ask printed {done.stdout!r}: {done.stderr!r}")


def main(rounds: int) -> None:
    with FakeServer() as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": server.url}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cases = {"ask": lambda: ask(server, env, ""),
                 "ask, httpx CLI imported": lambda: ask(server, env, "import httpx._main\n")}
        measured(cases, 2)  # warm-up
        medians = measured(cases, rounds)
    for name, (wall, cpu) in medians.items():
        print(f"{name:24} wall {ms(wall):>9}  CPU {ms(cpu):>9}")
    (wall, cpu), (old_wall, old_cpu) = medians.values()
    print(f"saved per ask: wall {ms(old_wall - wall)} ({1 - wall / old_wall:.0%}), "
          f"CPU {ms(old_cpu - cpu)} ({1 - cpu / old_cpu:.0%})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
