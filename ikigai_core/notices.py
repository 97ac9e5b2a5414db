"""The one channel through which the core reports what it could not do.

Core modules never print (the CLI does): a broken plugin, a cache that could not be
written or a tool left out of a request becomes a :class:`Notice` in the invocation's
:class:`Notices`. The CLI prints each as it arrives; a library user reads the list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import NamedTuple


class Notice(NamedTuple):
    """One thing the user should know (a named tuple: cheap to define at every start-up).

    :param message: one line: what went wrong and, where it helps, what to do.
    :param plugin: the plugin it concerns, if any.
    :param kind: ``warning`` (something was skipped or could not be saved) or ``info``.
    """

    message: str
    plugin: str | None = None
    kind: str = "warning"


class Notices:
    """Every notice of one invocation, in order; thread-safe.

    :param listener: called with each notice as it is reported (the CLI prints it);
        without one, notices are only collected.
    """

    def __init__(self, listener: Callable[[Notice], None] | None = None) -> None:
        self.listener = listener
        self._items: list[Notice] = []
        self._lock = threading.Lock()

    def report(self, message: str, *, plugin: str | None = None, kind: str = "warning") -> None:
        """Record one notice and hand it to the listener."""
        notice = Notice(message, plugin, kind)
        with self._lock:
            self._items.append(notice)
        if self.listener is not None:
            self.listener(notice)

    def __iter__(self) -> Iterator[Notice]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)
