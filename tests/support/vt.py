"""A terminal emulator (``pyte``) on a real pseudo-terminal: tests assert what the screen shows.

Every wait reads in ``select`` with a deadline, so a program that stops writing fails the
test with the screen it left, never hangs it.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import time
from collections.abc import Callable, Mapping, Sequence

import pyte

from tests.support.terminal import Terminal


class Screen:
    """``argv`` on a ``columns`` x ``lines`` terminal that ``pyte`` draws; use as a context
    manager. Cursor-position queries are answered, as a real terminal does."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str],
                 columns: int = 100, lines: int = 30, cwd=None) -> None:
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.ByteStream(self.screen)
        self.terminal = Terminal(argv, env={**env, "COLUMNS": str(columns),
                                            "LINES": str(lines)}, cwd=cwd)
        fcntl.ioctl(self.terminal.fd, termios.TIOCSWINSZ,
                    struct.pack("HHHH", lines, columns, 0, 0))
        self.screen.write_process_input = lambda data: self.terminal.write(data.encode())
        self.closed = False

    def __enter__(self) -> Screen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.terminal.close()

    @property
    def text(self) -> str:
        """The screen now, one line per row, trailing blanks stripped."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    def write(self, data: bytes) -> None:
        """Type ``data``."""
        self.terminal.write(data)

    def pump(self, seconds: float) -> None:
        """Draw whatever the program writes for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not self.closed:
            self._read(left)

    def _read(self, timeout: float) -> None:
        if not select.select([self.terminal.fd], [], [], timeout)[0]:
            return
        try:
            chunk = os.read(self.terminal.fd, 65536)
        except OSError:  # the program closed the terminal
            chunk = b""
        if not chunk:
            self.closed = True
        self.stream.feed(chunk)

    def wait_for(self, check: str | Callable[[str], bool], timeout: float = 20) -> str:
        """The screen once it shows ``check`` (a text, or a test of the screen's text); an
        ``AssertionError`` with the screen once ``timeout`` seconds pass."""
        test = (lambda text: check in text) if isinstance(check, str) else check
        deadline = time.monotonic() + timeout
        while not test(self.text):
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                raise AssertionError(f"{check!r} not on the screen within {timeout} s "
                                     f"(closed: {self.closed}):\n{self.text}")
            self._read(min(left, 0.05))
        return self.text

    def wait(self, timeout: float = 10) -> int:
        """The program's exit code, drawing what it writes until then."""
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            self._read(0.05)
        return self.terminal.wait(max(deadline - time.monotonic(), 0.1))
