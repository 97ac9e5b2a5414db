"""Sandbox overhead: one ``bash-tool`` call (``true``) under bubblewrap vs without.

Run on demand: ``python benchmarks/bench_sandbox.py [CALLS]``. Both variants go through
the executor with the default plugins (approvals do not judge these calls: no call id);
only ``sandbox`` differs. Runs are interleaved; prints the per-call medians and the
difference. Skips (exit 0, one line) when ``bwrap`` cannot run here.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _timing import interleaved, ms

from ikigai_core.app import App
from ikigai_core.errors import IkigaiError
from ikigai_core.registry import Registry


def main(calls: int = 100) -> None:
    """Time ``calls`` interleaved rounds of each mode and print the medians."""
    from ikigai_core.defaults.sandbox import usable_bwrap

    try:
        usable_bwrap()
    except IkigaiError as exc:
        print(f"skipped: {exc}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for mode in ("off", "workspace-write"):
            app = App(environ={**os.environ, "IKIGAI_HOME": str(Path(tmp) / "home")},
                      cwd=Path(tmp))
            app.settings = app.settings.replace(sandbox=mode)
            registry = app.registry()
            runs[mode] = _caller(app, registry)
        medians = interleaved(runs, calls)
    off, boxed = medians["off"], medians["workspace-write"]
    print(f"bash-tool `true`, {calls} calls each (median per call):")
    print(f"  sandbox off              {ms(off)}")
    print(f"  sandbox workspace-write  {ms(boxed)}  (x{boxed / off:.2f})")
    print(f"  overhead per call        {ms(boxed - off)}")


def _caller(app: App, registry: Registry) -> Callable[[], None]:
    def call() -> None:
        result = app.executor.call(registry, "bash", {"command": "true"})
        if not result.outcome.success:
            raise SystemExit(f"benchmark stopped: {result.outcome.error}")

    return call


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
