"""The plain chat's prompt on a terminal: readline's ``input()`` with line editing and
history, and (issue 25) what another thread brings while it waits, done by the main
thread at the prompt: a sub-agent's approval question, a line saying a sub-agent ended.

Only the main thread reads the terminal. Another thread leaves its job and sends the main
thread :data:`GIVE_WAY`; the signal wakes readline, the handler does the job on lines of
its own, then readline draws the prompt again with what was typed, the cursor where it
was. The handler never raises: an exception would end ``input()``, losing the typed line
(or, arriving just after ``input()`` returned, the line sent). A job that comes while the
prompt is not yet (or no longer) in readline waits for readline's pre-input hook, or for
``input()`` to return.
"""

from __future__ import annotations

import signal
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path

import click

from ikigai_core.commands.approving import ASKING
from ikigai_core.statefiles import ensure_private_dir

PROMPT = "> "
HISTORY_LENGTH = 1000
"""Lines of chat history kept in ``$IKIGAI_HOME/history``."""
GIVE_WAY = signal.SIGUSR1
"""Sent to the main thread when a job waits for the prompt (readline leaves it alone)."""

Job = Callable[[bool], object]
"""Something to do at the prompt; called with ``False`` when the chat ends first."""


class PlainPrompt:
    """Reads the chat's lines at readline's prompt; :meth:`at_prompt` has the main thread
    do another thread's job there while it waits.

    :param history: the file keeping the prompt's history between chats (user-only).
    """

    def __init__(self, history: Path) -> None:
        self.history = history
        self.guard = threading.Lock()
        self.reading = False
        """The prompt is (about to be) up: a job from another thread is done there."""
        self.in_readline = False  # readline shows the prompt: a job is done on the spot
        self.waiting: deque[Job] = deque()
        self.busy = False  # the main thread is doing the jobs: a signal now adds none

    def lines(self) -> Iterator[str]:
        """The lines typed, until Ctrl-D (Ctrl-C raises ``KeyboardInterrupt``)."""
        previous = signal.signal(GIVE_WAY, lambda signum, frame: self._give_way())
        try:
            with line_editing(self.history, self._prompt_shown):
                while (line := self._read()) is not None:
                    yield line
            click.echo()
        finally:
            signal.signal(GIVE_WAY, previous)

    def _read(self) -> str | None:
        with ASKING, self.guard:  # a question being read is answered before the prompt
            self.reading = True
        line = None
        try:
            line = input(PROMPT)
        except EOFError:
            pass
        finally:
            self.in_readline = False
            with self.guard:
                self.reading = False
            self._run_waiting(live=line is not None)
        return line

    def _prompt_shown(self) -> None:
        """readline's pre-input hook: the prompt is on the screen, input not yet read."""
        self.in_readline = True
        self._give_way()

    def at_prompt(self, job: Job) -> bool:
        """Have the main thread do ``job`` at the prompt, at once (from another thread);
        ``False`` when no prompt waits (the caller does it itself, or later)."""
        main = threading.main_thread()
        with self.guard:  # signalled while ``reading``: the handler is still ours
            if not self.reading or threading.current_thread() is main or main.ident is None:
                return False
            self.waiting.append(job)
            signal.pthread_kill(main.ident, GIVE_WAY)
        return True

    def _give_way(self) -> None:
        """In ``input()``, on the main thread (the signal's handler, the pre-input hook):
        the jobs waiting, on lines of their own, then the prompt again. Elsewhere the
        jobs wait for ``input()`` to end."""
        if not self.in_readline or self.busy or not self.waiting:
            return
        click.echo(err=True)
        self._run_waiting(live=True)
        redisplay()

    def _run_waiting(self, *, live: bool) -> None:
        # The queue is looked at again once ``busy`` is cleared: a job whose signal came
        # while a job ran (and so was left to this loop) is never stranded.
        while self.waiting and not self.busy:
            self.busy = True
            try:
                self.waiting.popleft()(live)
            finally:
                self.busy = False


def redisplay() -> None:
    """Have readline draw the prompt and the line typed again, on the cursor's line."""
    redraw = _forced_update_display()
    if redraw is None:  # pragma: no cover - no GNU readline: what was typed stays unseen
        click.echo(PROMPT, nl=False)
    else:
        redraw()


@cache
def _forced_update_display() -> Callable[[], int] | None:
    """readline's ``rl_forced_update_display`` (the module does not offer it), if any."""
    try:
        import ctypes
        import readline

        function: Callable[[], int] = ctypes.CDLL(readline.__file__).rl_forced_update_display
    except (ImportError, OSError, AttributeError):  # pragma: no cover
        return None
    return function


@contextmanager
def line_editing(history: Path, shown: Callable[[], object]) -> Iterator[None]:
    """Arrow keys and history at the prompt (readline), the history kept user-only in
    ``history`` between chats; ``shown`` is called each time the prompt is on the screen.
    Without readline the prompt is plain ``input()``."""
    try:
        import readline
    except ImportError:  # pragma: no cover - a Python built without readline
        yield
        return
    with suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(HISTORY_LENGTH)
    readline.set_pre_input_hook(shown)
    try:
        yield
    finally:
        readline.set_pre_input_hook()
        with suppress(OSError):
            ensure_private_dir(history.parent)
            readline.write_history_file(history)
            history.chmod(0o600)
