"""Which recorded sub-agents this process is running, so that the next ikigai marks them
``interrupted`` when this one was killed before it could (issue 25).

Each ikigai process serving sub-agents holds ``$IKIGAI_HOME/agents-running/PID`` open
under an exclusive ``flock`` and appends ``+ID`` when a recorded child starts and ``-ID``
when its end is recorded. A file whose lock can be taken belongs to a process that is
gone (a lock dies with its holder, whatever the pid became since): its children without
an end line are marked ``interrupted``, and the file is removed.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core.statefiles import ensure_private_dir

if TYPE_CHECKING:
    from ikigai_core.sessions import SessionStore

DIRECTORY = "agents-running"


class Ledger:
    """This process's file (made on the first :meth:`started`).

    :param home: ``$IKIGAI_HOME``.
    """

    def __init__(self, home: Path) -> None:
        self.path = home / DIRECTORY / str(os.getpid())
        self._fd: int | None = None

    def started(self, session_id: str) -> None:
        """A recorded child started."""
        if self._fd is None:
            ensure_private_dir(self.path.parent)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.write(self._fd, f"+{session_id}\n".encode())

    def ended(self, session_id: str) -> None:
        """A recorded child's end is recorded."""
        if self._fd is not None:
            os.write(self._fd, f"-{session_id}\n".encode())

    def close(self) -> None:
        """Every child's end is recorded: the file goes."""
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


def sweep(home: Path, store: SessionStore) -> list[str]:
    """Mark ``interrupted`` the children of every ikigai that died running them; their
    session ids. A file that cannot be read or a log that cannot be written is left for
    the next start."""
    from ikigai_core.errors import IkigaiError

    folder = home / DIRECTORY
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    marked: list[str] = []
    for name in names:
        path = folder / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # its owner is alive: skip it
            lines = path.read_text(errors="replace").split()
            running = {line[1:] for line in lines if line.startswith("+")} - {
                line[1:] for line in lines if line.startswith("-")}
            for session_id in sorted(running):
                store.set_status(session_id, "interrupted")
                marked.append(session_id)
            path.unlink()
        except (OSError, IkigaiError):
            continue
        finally:
            os.close(fd)
    return marked
