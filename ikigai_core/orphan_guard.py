"""Kill running tools' process groups when ikigai dies, even by SIGKILL.

No program can act on its own SIGKILL, and a tool runs in a session of its own (so its whole
group can be stopped), so a killed ikigai's tools would run on. With the guard on (the
``ikigai`` program turns it on: process state belongs to the program), the first tool starts
a watcher: one small Python process in a session of its own, told over a pipe which process
groups are running (``+PGID`` when one starts, ``-PGID`` once its leader is reaped). When
ikigai ends, however it ends, the kernel closes the pipe; the watcher SIGKILLs every group
still listed and exits. A listed number names that group: Linux keeps a number while a
member of its group lives, and a group is struck off once its leader is reaped or, when a
grandchild outlived the leader, once that grandchild's grace (``KILL_GRACE``) is over.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

WATCHER = """\
import os, signal, sys
groups = set()
for line in sys.stdin.buffer:
    (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""
"""The watcher's program: it reads the pipe until ikigai is gone, then kills what is left."""

_lock = threading.Lock()
_enabled = False
_groups: set[int] = set()
_watcher: subprocess.Popen[bytes] | None = None  # once a tool has started


def enable() -> None:
    """Watch the process groups of the tools this process starts from now on."""
    global _enabled
    _enabled = True


def started(pgid: int) -> None:
    """A tool's process group ``pgid`` is running: kill it if ikigai dies before
    :func:`ended`."""
    if _enabled:
        with _lock:
            _groups.add(pgid)
            _tell(f"+{pgid}\n")


def ended(pgid: int) -> None:
    """The leader of ``pgid`` is reaped: the watcher forgets the group."""
    if _enabled:
        with _lock:
            _groups.discard(pgid)
            _tell(f"-{pgid}\n")


def _tell(line: str) -> None:
    """Send ``line`` to the watcher, starting one (told every listed group) if there is
    none or it has gone; without a watcher that can start, tools run unguarded."""
    global _watcher
    for _ in range(2):
        if _watcher is None:
            try:
                _watcher = _start()
            except OSError:
                return
            line = "".join(f"+{group}\n" for group in _groups)
        assert _watcher.stdin is not None
        try:
            os.write(_watcher.stdin.fileno(), line.encode())
            return
        except OSError:  # the watcher was killed: start another, listing every group
            _watcher.stdin.close()
            _watcher.wait()
            _watcher = None


def _start() -> subprocess.Popen[bytes]:
    import subprocess

    # No environment (ikigai's holds keys) and / as its folder (it pins no mount).
    return subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHER], env={}, cwd="/",
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, close_fds=True,
                            start_new_session=True)
