"""Executor overhead: one call of a small tool vs a bare ``subprocess.run`` of the same tool.

Run on demand: ``python benchmarks/bench_executor.py [CALLS]``. Runs are interleaved so
that machine noise hits every variant alike; prints the per-call median of each and the
difference (target: under 2 ms per call beyond the bare spawn).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import interleaved

from ikigai_core.config import Settings
from ikigai_core.execution import ToolExecutor, execute
from ikigai_core.lifecycle import CallContext
from ikigai_core.notices import Notices
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.tools import Tool

TOOL_SCRIPT = """#!/bin/sh
IFS= read -r args
printf '{"ok": true}\\n'
"""
ARGUMENTS = {"text": "hello", "count": 3}


def main(calls: int = 300) -> None:
    """Time ``calls`` interleaved rounds and print the medians."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small-tool"
        path.write_text(TOOL_SCRIPT)
        path.chmod(0o755)
        parameters = {
            "type": "object",
            "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
        }
        tool = Tool("small", "a small tool", parameters, (str(path),), "bench", path)
        registry = {"small": tool}
        pm = get_plugin_manager(load_entry_points=False)
        settings = Settings()
        context = CallContext(cwd=Path.cwd(), home=Path(tmp), environ={}, settings=settings,
                              project=None)
        executor = ToolExecutor(pm, context, Notices())
        payload = json.dumps(ARGUMENTS).encode()

        cases = {
            # no timeout: with one, subprocess polls with sleeps and looks slower than it is
            "subprocess.run": lambda: subprocess.run(
                [str(path)], input=payload, capture_output=True
            ),
            "execute": lambda: execute(tool, ARGUMENTS, settings=settings),
            "executor.call": lambda: executor.call(registry, "small", ARGUMENTS),
        }
        interleaved(cases, 5)  # warm up: imports, the validator, the page cache
        medians = interleaved(cases, calls)

    bare = medians["subprocess.run"]
    print(f"{calls} interleaved calls of a /bin/sh tool, median per call:")
    for name, median in medians.items():
        extra = "" if name == "subprocess.run" else f"  (overhead {(median - bare) * 1000:+.3f} ms)"
        print(f"  {name:15} {median * 1000:7.3f} ms{extra}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
