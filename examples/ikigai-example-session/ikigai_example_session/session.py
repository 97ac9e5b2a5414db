"""One Python interpreter kept alive across calls, spoken to in JSON lines."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the runner is built at every discovery; what a call needs loads then
    import subprocess

    from ikigai_core import Tool, ToolOutcome

POLL = 0.05
"""Seconds between looks at ``cancelled`` while the session works."""


class Session:
    """The :class:`~ikigai_core.ToolRunner`: one call at a time; a session that timed out
    or died is killed and replaced by a fresh one on the next call."""

    command = (sys.executable, "-u", "-m", "ikigai_example_session.server")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def call(self, tool: Tool, arguments: Mapping[str, Any], *, timeout: float,
             cancelled: threading.Event) -> ToolOutcome:
        """Send the code, wait for its one-line answer or ``cancelled``."""
        import json
        import subprocess

        from ikigai_core import ToolOutcome

        with self._lock:
            process = self._process
            if process is None or process.poll() is not None:
                process = self._process = subprocess.Popen(
                    self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps({"code": arguments["code"]}).encode() + b"\n")
                process.stdin.flush()
            except BrokenPipeError:
                pass  # it died: reading finds the end at once
            line = _read_line(process.stdout.fileno(), cancelled)
            if line is None:
                process.kill()
                process.wait()
                return ToolOutcome(tool.name, error="the Python session ended; the next call "
                                   "starts a fresh one", error_code="TOOL_CRASHED")
            return ToolOutcome(tool.name, result=json.loads(line))


def _read_line(fd: int, cancelled: threading.Event) -> bytes | None:
    """One line from ``fd``, or ``None`` when it ends or ``cancelled`` is set first."""
    import select

    data = b""
    while not data.endswith(b"\n"):
        if cancelled.is_set():
            return None
        if select.select([fd], [], [], POLL)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            data += chunk
    return data


SESSION = Session()
"""The session every discovery's source hands out, so ``/refresh`` keeps its state."""
