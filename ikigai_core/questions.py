"""Questions to the user that their asker may take back (issue 25): a sub-agent stopped
while its approval question is up takes the question away.

Whoever asks on another's behalf marks the question with :func:`taken_back_when` (the
supervisor, with the child's cancellation); a front end reading the answer also watches
:func:`taken_back` and ends the question once it is set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_taken_back: ContextVar[threading.Event | None] = ContextVar("ikigai_taken_back", default=None)


@contextmanager
def taken_back_when(stopped: threading.Event) -> Iterator[None]:
    """Questions asked in this block, on this thread, are taken back once ``stopped`` is
    set."""
    token = _taken_back.set(stopped)
    try:
        yield
    finally:
        _taken_back.reset(token)


def taken_back() -> threading.Event:
    """Set once the question this thread is asking is taken back (an event never set when
    nobody marked it)."""
    return _taken_back.get() or threading.Event()
