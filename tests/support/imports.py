"""Which heavy packages a real ``ikigai`` command imports, asked of a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence

HEAVY = ("httpx", "jsonschema", "mcp", "ikigai_core.execution", "prompt_toolkit", "rich",
         "ikigai_core.lifecycle", "ikigai_core.permissions", "sysconfig", "hashlib")
"""What `ikigai tool list` on a warm cache must not import (issue 2): the HTTP client, the
validator, the MCP SDK, and the executor (discovery needs only the process hook, issue 14);
nor the call-lifecycle types or the permission rules (no call is judged; with every example
plugin installed, issue 9), nor ``sysconfig`` (in a virtual environment the built-ins'
folder is known without it), nor ``hashlib`` (loading OpenSSL costs 2.6 ms); and what ``ask``
and ``chat`` on a pipe must not import: the prompt and the renderer, even through httpx's
command line (issue 13)."""

_MARKER = "IMPORTED-HEAVY:"
_SCRIPT = f"""
import sys
watched = sys.argv.pop(1).split(",")
from ikigai_core.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted({{h for h in watched for m in sys.modules if m == h or m.startswith(h + ".")}})
print({_MARKER!r} + ",".join(heavy), file=sys.stderr)
"""


def heavy_imports(args: Sequence[str], *, env: Mapping[str, str], cwd: str,
                  watched: Sequence[str] = HEAVY) -> list[str]:
    """Run ``ikigai ARGS`` through its console-script ``main`` and list the ``watched``
    packages (default :data:`HEAVY`) it imported (the script imports nothing else, so
    ``json`` may be watched)."""
    ran = subprocess.run([sys.executable, "-c", _SCRIPT, ",".join(watched), *args],
                         capture_output=True, text=True, env=dict(env), cwd=cwd, timeout=120,
                         stdin=subprocess.DEVNULL)
    for line in reversed(ran.stderr.splitlines()):
        if line.startswith(_MARKER):
            return [name for name in line[len(_MARKER):].split(",") if name]
    raise RuntimeError(f"ikigai {' '.join(args)} did not finish: {ran.stderr.strip()}")
