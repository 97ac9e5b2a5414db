"""What judging one model-made call costs in the project it runs in.

Run on demand: ``python benchmarks/bench_project.py``. In a trusted project whose
``permissions.json`` holds one rule, with the working directory 8 levels below its root
(and outside every project, where the walk goes up to the filesystem's root), times the
per-call work of the approvals plugin's project lookup: the project found once per
invocation (``CallContext.project``) with its trust read at each call
(``trust.project_trust``), against the baseline of the same run, finding it again at each
call (``trust.find_project_trust``); and a whole ``ikigai_before_tool_call`` for scale.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from _timing import interleaved

from ikigai_core.app import App
from ikigai_core.lifecycle import ToolCallRequest
from ikigai_core.tools import Tool
from ikigai_core.trust import TrustStore, find_project_trust, project_trust

CALLS = 200
"""Calls a sample times (a few microseconds each would drown in the timer)."""


def per_call(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` :data:`CALLS` times over."""
    return lambda: [fn() for _ in range(CALLS)]


def measure(label: str, cwd: Path, home: Path) -> None:
    """Print the per-call times in ``cwd`` and their ratio to the baseline."""
    app = App(environ={**os.environ, "IKIGAI_HOME": str(home)}, cwd=cwd)
    context = app.context
    tool = Tool("bash", "", {"type": "object"}, ("bash",), "system")
    request = ToolCallRequest(tool=tool, arguments={}, context=context, call_id="c1")
    hook = app.pm.hook.ikigai_before_tool_call
    times = interleaved({
        "walk": per_call(lambda: find_project_trust(cwd, home)),
        "once": per_call(lambda: project_trust(context.project, home)),
        "hook": per_call(lambda: hook(request=request)),
    }, 15)
    walk, once, whole = (times[k] / CALLS * 1e6 for k in ("walk", "once", "hook"))
    print(f"{label}:")
    print(f"  project found at each call: {walk:7.1f} us per call (baseline)")
    print(f"  project found once:         {once:7.1f} us per call ({once / walk:.2f}x)")
    print(f"  a whole before-call hook:   {whole:7.1f} us per call")


def main() -> None:
    """A trusted project with one rule; the times 8 levels below it and outside it."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        home = base / "home"
        home.mkdir(mode=0o700)
        root = base / "project"
        (root / ".ikigai").mkdir(parents=True)
        (root / ".ikigai" / "permissions.json").write_text(
            '{"rules": [{"tool": "bash", "decision": "deny"}]}')
        TrustStore(home).trust(root)
        for label, cwd in (("8 levels below a trusted project's root", root / "a/b/c/d/e/f/g/h"),
                           ("outside every project", base / "a/b/c/d/e/f/g/h")):
            cwd.mkdir(parents=True)
            measure(label, cwd, home)


if __name__ == "__main__":
    main()
