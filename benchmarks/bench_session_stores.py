"""Many ``ikigai ask`` processes at once, each recording its turn in one session store:
SQLite's figures and PostgreSQL's side by side (issue 28).

Run on demand: ``python benchmarks/bench_session_stores.py [PROCESSES]`` (default 100).
Each round starts PROCESSES asks at once against the local fake provider server, all
writing to one new store, and waits for the last; it prints the wall time, asks per
second, how many failed, and whether every turn was recorded. The PostgreSQL server is the
tests' own (tests/support/postgres.py), started for the run. A bare round with ``--no-log``
is the baseline: what the processes cost without recording.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from ikigai_core.notices import Notices  # noqa: E402
from ikigai_core.plugins import get_plugin_manager  # noqa: E402
from ikigai_core.sessions import open_store  # noqa: E402
from tests.support.asks import asks_at_once  # noqa: E402
from tests.support.fakeserver import FakeServer  # noqa: E402
from tests.support.postgres import PostgresServer, skip_reason  # noqa: E402


def round_of(server: FakeServer, home: Path, url: str | None, count: int) -> str:
    """One round: PROCESSES asks at once into ``url`` (``None``: nothing recorded)."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": server.url,
           "IKIGAI_HOME": str(home), "IKIGAI_HTTP_TIMEOUT": "600"}
    if url is None:
        env["IKIGAI_LOG"] = "false"
    else:
        env["IKIGAI_SESSIONS_URL"] = url
    seconds, ended = asks_at_once(server, env, count, timeout=900)
    failed = [r for r in ended if r.returncode != 0 or r.stderr]
    recorded = "-"
    if url is not None:
        store = open_store(get_plugin_manager(), url, home, Notices())
        recorded = f"{sum(s.turns for s in store.sessions())}/{count}"
    note = f"  first failure: {failed[0].stderr.strip()[:100]}" if failed else ""
    return (f"{seconds:8.2f} s  {count / seconds:7.1f} asks/s  failed {len(failed):3}  "
            f"recorded {recorded}{note}")


def main(count: int) -> None:
    reason = skip_reason()
    postgres = None if reason else PostgresServer()
    with tempfile.TemporaryDirectory() as tmp, FakeServer() as server:
        home = Path(tmp)
        stores: dict[str, str | None] = {"no log (baseline)": None,
                                         "sqlite": f"sqlite:///{home / 'bench.db'}"}
        try:
            if postgres is not None:
                postgres.start()
                stores["postgresql"] = postgres.database()
            print(f"{count} concurrent `ikigai ask` processes, one store each round")
            for name, url in stores.items():
                print(f"{name:18} {round_of(server, home, url, count)}", flush=True)
            if postgres is None:
                print(f"postgresql: not measured ({reason})")
        finally:
            if postgres is not None:
                postgres.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
