"""The chat's prompt on a terminal (``prompt_toolkit``): multi-line input, pasted text kept
whole, completion of slash commands and tool names, history, a status line, and the
questions plugins ask (``app.ask_user``).

Keys: Enter sends; Alt-Enter (or Esc then Enter), or Enter after a ``\\`` ending the line,
starts a new line; Ctrl-C clears the line, and on an empty line pressed twice leaves, like
Ctrl-D. (Ctrl-J is Enter: a terminal turns an Enter typed ahead, while the model answers,
into Ctrl-J.)
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

from ikigai_core.commands.approving import disabled_guards
from ikigai_core.commands.output import printable
from ikigai_core.commands.spend import spend_words
from ikigai_core.errors import IkigaiError
from ikigai_core.questions import taken_back
from ikigai_core.statefiles import ensure_private_dir
from ikigai_core.status import status_words

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document
    from prompt_toolkit.key_binding import KeyPressEvent

    from ikigai_core.app import App
    from ikigai_core.commands.chatview import ChatView

PROMPT = "> "
HISTORY_FILE = "prompt-history"
"""The prompt's history in ``$IKIGAI_HOME`` (user-only); ``--plain`` keeps ``history``."""
LEAVE_HINT = "Ctrl-C again (or Ctrl-D) leaves"
_YIELD: Any = type("GiveWay", (str,), {})()
"""What the prompt returns when it gives way to a question another thread asks (a ``str``
only in type: compared by identity)."""
TAKEN_BACK_POLL = 0.1
"""Seconds between looks at whether the question being asked was taken back."""
REDRAW_INTERVAL = 0.25
"""Seconds at least between two redraws other threads ask for (sub-agents' tokens): a few
a second at most, however fast the children count."""
RESUME_CHOICES = 50
"""Conversations ``/resume`` completion offers, the latest first."""
MENTION_AT_CURSOR = re.compile(r"(?:^|\s)@(\S*)$")
"""An ``@path`` being typed: an ``@`` at the start or after a space, up to the cursor."""


@Condition
def _after_backslash() -> bool:
    """The cursor ends the input, right after a backslash."""
    document = get_app().current_buffer.document
    return document.is_cursor_at_the_end and document.text.endswith("\\")


def fitted(words: Iterable[str], width: int) -> str:
    """``words`` joined by `` · ``, a new line started where the next would pass ``width``."""
    lines: list[str] = []
    for word in words:
        joined = f"{lines[-1]} · {word}" if lines else word
        if lines and len(joined) <= width:
            lines[-1] = joined
        else:
            lines.append(word)
    return "\n".join(lines)


class ChatCompleter(Completer):
    """Slash commands at the start of the line; tool names after ``/tool``; conversation
    ids (with their first prompts) after ``/resume``; files after an ``@`` in a message
    (``@path`` attaches one: :mod:`ikigai_core.inputs`)."""

    def __init__(self, chat: ChatView) -> None:
        self.chat = chat

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        from ikigai_core.commands.chat_table import CHAT_COMMANDS

        text = document.text_before_cursor
        mention = MENTION_AT_CURSOR.search(text)
        if mention is not None and not text.startswith("/"):
            yield from self._paths(mention.group(1))
            return
        if not text.startswith("/") or "\n" in text:
            return
        if " " not in text:
            names: Iterable[str] = CHAT_COMMANDS
            word = text
        elif text.startswith("/tool "):
            names, word = self.chat.tools_found() or {}, text[len("/tool "):]
        elif text.startswith("/resume "):
            yield from self._sessions(text[len("/resume "):])
            return
        else:
            return
        for name in names:
            if name.startswith(word):
                yield Completion(name, start_position=-len(word))

    def _paths(self, word: str) -> Iterable[Completion]:
        """Files and directories whose path starts with ``word`` (from the chat's directory;
        hidden ones when ``word``'s last part starts with ``.``), directories ending in
        ``/`` so the next Tab goes on into them."""
        folder, _, start = word.rpartition("/")
        where = self.chat.app.cwd / Path(folder + "/" if folder or word.startswith("/")
                                         else ".").expanduser()
        try:
            entries = sorted(os.scandir(where), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(start) and (start or not entry.name.startswith(".")):
                name = entry.name + ("/" if entry.is_dir() else "")
                yield Completion(name, start_position=-len(start), display=name)

    def _sessions(self, word: str) -> Iterable[Completion]:
        """The recorded conversations whose id starts with ``word``, the latest first, each
        shown with its first prompt."""
        from ikigai_core.session import store_of

        try:
            found = store_of(self.chat.app).sessions()
        except IkigaiError:  # an unreadable log offers nothing; /resume says why
            return
        for summary in found[:RESUME_CHOICES]:
            if summary.id.startswith(word):
                prompt = " ".join((summary.first_prompt or "").split())
                yield Completion(summary.id, start_position=-len(word),
                                 display_meta=printable(prompt[:60]))


class LineInput:
    """Reads the chat's lines, and answers ``app.ask_user`` questions, on the terminal.

    :param app: the invocation (its home holds the history).
    :param chat: the chat whose commands, tools, model and tokens the prompt shows.
    :param shown: called once, when the first prompt is on the screen.
    """

    def __init__(self, app: App, chat: ChatView,
                 shown: Callable[[], object] | None = None) -> None:
        self.app = app
        self.chat = chat
        self.shown = shown
        self.armed = False  # Ctrl-C was pressed on an empty line: once more leaves
        self.asking = threading.Lock()
        ensure_private_dir(app.home)
        history = app.home / HISTORY_FILE
        history.touch(mode=0o600)
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)), completer=ChatCompleter(chat),
            complete_while_typing=False, key_bindings=self._keys(),
            bottom_toolbar=self.status, enable_history_search=False)
        self.session.default_buffer.on_text_changed += self._disarm
        self.session.app.after_render += self._first_render
        self.question: PromptSession[str] | None = None
        self.prompting = False
        """The prompt is (about to be) up: a question from another thread waits for it."""
        self.waiting: deque[Callable[[bool], object]] = deque()
        """What other threads left for the main thread to do at the prompt (called with
        ``False`` when the chat ends first)."""
        self.guard = threading.Lock()
        self._redraw_loop: object = None
        self._redraw_at = 0.0
        """When the last redraw asked for is (or was) due on ``_redraw_loop``, the event
        loop of the prompt that was up then (``time.monotonic``)."""
        self._redraws = threading.Lock()
        previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum: int, frame: Any) -> None:
            self.cancel_question()  # a Ctrl-C typed just before a question also ends it
            if callable(previous):
                previous(signum, frame)

        signal.signal(signal.SIGINT, on_sigint)

    def _disarm(self, _: object) -> None:
        self.armed = False

    def _first_render(self, _: object) -> None:
        self.session.app.after_render -= self._first_render
        if self.shown is not None:
            self.shown()

    def _keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @keys.add("enter", filter=_after_backslash)
        def _continued(event: KeyPressEvent) -> None:
            event.current_buffer.delete_before_cursor(1)
            event.current_buffer.insert_text("\n")

        @keys.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
            elif self.armed:
                event.app.exit(exception=EOFError())
            else:
                self.armed = True
                event.app.invalidate()

        return keys

    def status(self) -> str:
        """The status line: provider, model, tokens of the last turn and of the chat (its
        sub-agents' included), the prompt cache's share and the chat's cost, the
        sub-agents running and their tokens, then
        what plugins add (``ikigai_status``: the approval and sandbox modes...); on more
        lines, broken between words, when the terminal is too narrow for one."""
        agent = self.chat.agent
        words = [agent.provider.name, agent.model,
                 *spend_words(self.chat.turn_usage, self.chat.usage, self.chat.cost)]
        agents = self.chat.agents_status()  # sub-agents' tokens are in the chat's already
        words += [*([agents] if agents else []), *status_words(self.app, self.chat.grants),
                  *disabled_guards(self.app)]
        if self.armed:
            words.append(LEAVE_HINT)
        return fitted(words, self.session.output.get_size().columns)

    def read(self) -> str | None:
        """The next line the user sends; ``None`` when they leave. What another thread
        brings meanwhile (a sub-agent's approval question, its end) takes the prompt's
        place until it is done; what was typed so far is kept."""
        self.armed = False
        typed = ""
        while True:
            with self.asking, self.guard:  # a question asked directly is answered first
                self.prompting = True
            try:
                line = self.session.prompt(PROMPT, default=typed, pre_run=self._yield_early)
            except EOFError:
                self._run_waiting(live=False)  # leaving: nobody is left to answer
                return None
            finally:
                with self.guard:
                    self.prompting = False
            self._run_waiting(live=True)
            if line is not _YIELD:
                return line
            typed = self.session.default_buffer.text

    def interject(self, say: Callable[[], object]) -> bool:
        """Have the main thread run ``say`` at the prompt (from any thread: the prompt
        gives way, ``say`` prints, the prompt comes back); ``False`` when no prompt is up
        (the caller says it later)."""
        return self._at_prompt(lambda live: say() if live else None)

    def redraw(self) -> None:
        """Draw the prompt and its status line anew (from any thread: a sub-agent's
        tokens grew), at most once every :data:`REDRAW_INTERVAL`; nothing when the prompt
        is not up (it is drawn afresh as it comes back)."""
        app = self.session.app
        loop = app.loop
        if not app.is_running or loop is None:
            return
        with self._redraws:
            now = time.monotonic()
            at = now  # on a new prompt, at once: one due on the last one is gone with it
            if loop is self._redraw_loop:
                if self._redraw_at >= now:
                    return  # one is due: it shows this too
                at = max(now, self._redraw_at + REDRAW_INTERVAL)
            self._redraw_loop, self._redraw_at = loop, at
        try:
            loop.call_soon_threadsafe(loop.call_later, at - now, app.invalidate)
        except RuntimeError:  # the prompt ended meanwhile: the next one is drawn anew
            pass

    def _at_prompt(self, job: Callable[[bool], object]) -> bool:
        with self.guard:
            if not self.prompting or threading.current_thread() is threading.main_thread():
                return False
            self.waiting.append(job)
            self._give_way()
            return True

    def _yield_early(self) -> None:
        """As the prompt comes up: give way at once to what came meanwhile."""
        if self.waiting:
            self._give_way()

    def _give_way(self) -> None:
        """End the prompt (from any thread), so the main thread runs what waits."""
        app = self.session.app

        def leave() -> None:
            if app.is_running and app.future is not None and not app.future.done():
                app.exit(result=_YIELD)

        if app.loop is not None:
            app.loop.call_soon_threadsafe(leave)

    def _run_waiting(self, *, live: bool) -> None:
        while self.waiting:
            self.waiting.popleft()(live)

    def ask(self, question: str) -> str | None:
        """Ask ``question`` (its line breaks shown as such); the answer typed, or ``None``
        on Ctrl-C or Ctrl-D, or once the question is taken back (its sub-agent stopped:
        :mod:`ikigai_core.questions`). Asked from another thread while the prompt is up (a
        sub-agent's approval between turns), it waits for the main thread to ask it."""
        return self._ask(question, taken_back())

    def _ask(self, question: str, stopped: threading.Event) -> str | None:
        answer: Future[str | None] = Future()
        if self._at_prompt(lambda live: answer.set_result(
                self._ask(question, stopped) if live else None)):
            return answer.result()
        with self.asking:
            if stopped.is_set():
                return None
            self.question = PromptSession()
            try:
                return self.question.prompt(f"{printable(question)} ",
                                            pre_run=lambda: _ended_by(stopped))
            except (EOFError, KeyboardInterrupt):
                return None
            finally:
                self.question = None

    def cancel_question(self) -> None:
        """End the question being asked, if any (from any thread): it answers ``None``."""
        question = self.question
        app = question.app if question is not None else None
        loop = app.loop if app is not None and app.is_running else None
        if app is None or loop is None:
            return

        def end() -> None:
            app.exit(exception=EOFError())

        loop.call_soon_threadsafe(end)


def _ended_by(stopped: threading.Event) -> None:
    """In a question's prompt as it starts: end it (answering ``None``) once ``stopped``
    is set."""
    import asyncio

    app = get_app()

    async def watch() -> None:
        while not stopped.is_set():
            await asyncio.sleep(TAKEN_BACK_POLL)
        if not app.is_done:  # not answered in the same moment
            app.exit(exception=EOFError())

    app.create_background_task(watch())
