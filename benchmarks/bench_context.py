"""Tokens a long tool loop sends, with pruning and compaction against the full history
(issue 26 section 3).

Run: ``python benchmarks/bench_context.py`` (or ``python benchmarks/run.py context``);
``IKIGAI_BENCH_TURNS`` (default 30) sets the model turns. ``ikigai ask`` runs a loop of
that many tool calls, each result 3 kB (a real shell tool), against the fake server the
tests use (``tests/support/window.py``: it counts each request's tokens as its bytes / 4).
The baseline is the same loop with pruning and compaction out of reach (``prune_after``
past the loop, a window too big to fill). Target: the loop sends at most 85% of the
baseline's input tokens with the defaults (prune_after 10, compact_at 0.8) and a
32,000-token window (measured 0.80 at 30 turns, 0.52 at 60: pruning alone kept both under
the window; the full history passes it at turn 38).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from click.testing import CliRunner  # noqa: E402

from ikigai_core.cli import cli  # noqa: E402
from tests.support.window import WindowModel  # noqa: E402

TURNS = int(os.environ.get("IKIGAI_BENCH_TURNS", "30"))
WINDOW = 32_000
TARGET = 0.85
TOOL = """\
#!/bin/sh
if [ "$1" = --schema ]; then
  echo '{"name": "big", "description": "prints 3 kB", "parameters": {"type": "object"}}'
  exit 0
fi
cat >/dev/null
printf '{"out": "'; head -c 3000 /dev/zero | tr '\\0' a; printf '"}\\n'
"""


def loop(settings: dict[str, object]) -> tuple[int, int]:
    """The input tokens a ``TURNS``-turn loop sends under ``settings``, and its requests."""
    home = Path(tempfile.mkdtemp(prefix="ikigai-bench-"))
    (home / "tools").mkdir()
    tool = home / "tools" / "big-tool"
    tool.write_text(textwrap.dedent(TOOL))
    tool.chmod(0o755)
    (home / "config.json").write_text(json.dumps(settings))
    model = WindowModel("openai", 10**9, [[("big", {})]] * TURNS + ["Done."])
    environ = {"IKIGAI_HOME": str(home), "OPENAI_API_KEY": "sk-bench",
               "OPENAI_BASE_URL": model.url}
    try:
        result = CliRunner().invoke(cli, ["ask", "--yes", "--no-stream", "--provider", "openai",
                                          "--max-turns", str(TURNS + 5), "go"], env=environ)
    finally:
        model.close()
    if result.exit_code != 0:
        raise SystemExit(f"the loop failed: {result.stderr}")
    return sum(model.sizes), len(model.sizes)


def main() -> None:
    """Run the loop both ways and print the tokens and the ratio."""
    kept, requests = loop({"context_window": WINDOW})
    full, baseline_requests = loop({"context_window": 10**9, "prune_after": 10**6})
    ratio = kept / full
    print(f"{TURNS}-turn tool loop, 3 kB results, {WINDOW:,}-token window: pruning and "
          f"compaction send {kept:,} input tokens in {requests} requests vs the full history's "
          f"{full:,} in {baseline_requests} -> {ratio:.2f} "
          f"(target <= {TARGET}, {'ok' if ratio <= TARGET else 'OVER TARGET'})", flush=True)


if __name__ == "__main__":
    main()
