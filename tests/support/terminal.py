"""Run a program on a real pseudo-terminal, with waits whose timeouts really fire.

Every read waits in ``select`` with a deadline (a bare ``os.read`` on a terminal blocks
for ever when the program stops writing), and the program is killed if it outlives the test.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType


class Terminal:
    """``argv`` started on a new pseudo-terminal; use as a context manager.

    :param argv: the program and its arguments (``argv[0]`` is a path).
    :param env: its environment (default: this process's).
    :param cwd: its working directory (default: this process's).
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover - the child
            if cwd is not None:
                os.chdir(cwd)
            os.execve(argv[0], list(argv), dict(os.environ if env is None else env))
        self.status: int | None = None

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def write(self, data: bytes) -> None:
        """Type ``data`` at the terminal."""
        os.write(self.fd, data)

    def wait_for_input(self, timeout: float = 10) -> None:
        """Wait until the program sleeps waiting for what is typed, as a person typing finds it.

        A Ctrl-C typed the instant a prompt appears, before the program is back in its
        ``select`` for input, is lost: CPython's readline loop sees a signal only when
        ``select`` is interrupted by it, so the prompt would wait on as if nothing happened.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            wchan = Path(f"/proc/{self.pid}/wchan").read_text()
            if "poll" in wchan or "select" in wchan:
                return
            if wchan in ("", "0"):  # the kernel does not say: give the program a moment
                time.sleep(0.2)
                return
            time.sleep(0.01)
        raise AssertionError(f"not waiting for input after {timeout} s")

    def read_until(self, marker: bytes, timeout: float = 20) -> bytes:
        """What the program prints until ``marker`` ends it (``b""``: until it closes the
        terminal); an ``AssertionError`` showing what was seen once ``timeout`` seconds pass."""
        return read_until(self.fd, marker, timeout)

    def wait(self, timeout: float = 10) -> int:
        """The program's exit code; an ``AssertionError`` (the program killed) if it still
        runs after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.status is None:
            reaped, status = os.waitpid(self.pid, os.WNOHANG)
            if reaped:
                self.status = status
            elif time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"still running after {timeout} s; killed")
            else:
                time.sleep(0.02)
        return os.waitstatus_to_exitcode(self.status)

    def close(self) -> None:
        """Kill the program if it still runs, reap it, close the terminal."""
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            self.status = os.waitpid(self.pid, 0)[1]
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def read_until(fd: int, marker: bytes, timeout: float = 20) -> bytes:
    """What the terminal ``fd`` (a pty's main side) shows until ``marker`` ends it (``b""``:
    until every program closed it); an ``AssertionError`` once ``timeout`` seconds pass."""
    seen = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"no {marker or 'end'!r} within {timeout} s after {seen!r}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the program closed the terminal
            chunk = b""
        if not chunk:
            assert not marker, f"the terminal closed before {marker!r}: {seen!r}"
            return seen
        seen += chunk
        if marker and seen.endswith(marker):
            return seen
