"""Watch processes from tests: alive, gone, reaped."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path


def processes() -> Iterator[tuple[int, str, int, int]]:
    """``(pid, state, ppid, pgid)`` of every process in /proc."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, ppid, pgid = f.read().rpartition(")")[2].split()[:3]
        except (OSError, ValueError):  # gone meanwhile
            continue
        yield int(entry), state, int(ppid), int(pgid)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (dead, waiting for its parent) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    """Wait up to ``timeout`` seconds for ``pid`` to stop running; whether it did."""
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def open_fd_count() -> int:
    """How many file descriptors this process holds."""
    return len(os.listdir("/proc/self/fd"))


def pid_written(path: Path, timeout: float = 20) -> int:
    """The pid a process writes to ``path`` (a line), once it is there."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().endswith("\n")):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never written")
        time.sleep(0.05)
    return int(path.read_text())
