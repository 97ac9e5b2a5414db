"""Run one stdio MCP server, and leave none of its processes behind: ``reaper.py CMD ARGS...``.

The SDK's stdio transport starts this script (``python -I -S``: standard library only, no
site, about 10 ms) in a session of its own. It starts the server as its child, in a process
group of its own, on the same stdin, stdout and stderr, and waits. When the server exits,
when the script is told to stop (SIGTERM, SIGINT or SIGHUP: the SDK's shutdown), or when
ikigai is gone (the parent changed: ikigai ended, crashed or was SIGKILLed), the server's
whole group (the server and everything it started: ``npx`` -> ``node``) gets SIGTERM, then
SIGKILL after :data:`GRACE` seconds. The exit status is the server's.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL of the server's group (the SDK waits 2 s)."""
POLL = 0.25
"""Seconds between looks at the parent (a signal or the server's exit wakes at once)."""
STOP = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
STOPPING = {int(sig) for sig in STOP}


def main(argv: list[str]) -> int:
    """Run ``argv`` until it ends, this script is stopped, or its parent is gone."""
    if not argv:
        sys.stderr.write("usage: reaper.py CMD ARGS...\n")
        return 2
    parent = os.getppid()
    wake, woken = os.pipe()
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(woken)
    for sig in (signal.SIGCHLD, *STOP):
        signal.signal(sig, lambda *_: None)
    try:
        server = os.posix_spawnp(argv[0], argv, os.environ, setpgroup=0,
                                 setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        sys.stderr.write(f"cannot start {argv[0]!r}: {exc.strerror}\n")
        return 127
    quiet = os.open(os.devnull, os.O_RDWR)  # the server alone holds its pipes: EOF is its
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    status = None
    while status is None and os.getppid() == parent:
        if select.select([wake], [], [], POLL)[0] and set(os.read(wake, 512)) & STOPPING:
            break
        status = _reap(server)
    return _end(server, status)


def _reap(pid: int) -> int | None:
    """``pid``'s wait status once it has exited (and is reaped), else ``None``."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if done else None


def _end(group: int, status: int | None) -> int:
    """SIGTERM the group, SIGKILL what is left after :data:`GRACE`; the server's exit code."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + GRACE
        alive = _signal(group, sig)
        while alive and time.monotonic() < deadline:
            time.sleep(0.01)
            if status is None:  # a zombie leader keeps its group alive: reap it
                status = _reap(group)
            alive = _signal(group, 0)
        if not alive:
            break
    if status is None:
        return 1
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _signal(group: int, sig: int) -> bool:
    """Send ``sig`` to the group (0: only look); whether anyone was there to get it."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal (setuid): still there
        pass
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
