"""The session's interpreter: one JSON line ``{"code": ...}`` in, one ``{"output": ...}``
(and ``"error"`` when the code raised) out, the variables kept until stdin ends."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback
from typing import Any


def main() -> None:
    """Serve until stdin ends (ikigai exited or closed the session)."""
    scope: dict[str, Any] = {"__name__": "__session__"}
    for line in sys.stdin:
        out = io.StringIO()
        reply: dict[str, str] = {}
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                exec(compile(json.loads(line)["code"], "<session>", "exec"), scope)
        except BaseException:  # the code's own error (even SystemExit) is its answer
            reply["error"] = traceback.format_exc(limit=-1).strip().splitlines()[-1]
        sys.stdout.write(json.dumps({"output": out.getvalue(), **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
