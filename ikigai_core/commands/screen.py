"""The chat on a terminal: the model's markdown rendered as it streams, one line per tool
call with a preview of its result (a coloured diff for file edits), a spinner with the
elapsed time, and a ``prompt_toolkit`` prompt with a status line.

Imported only on a terminal. The prompt needs ``prompt_toolkit`` at once; ``rich`` is
imported in the background once the prompt is up (:func:`warm_up`), so the first prompt never
waits for it. Everything from the model or a tool is printed as :class:`rich.text.Text` or
markdown, never as rich markup, with its control characters escaped.
"""

from __future__ import annotations

import difflib
import json
import shutil
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ikigai_core import hookimpl
from ikigai_core.commands.chatview import chatting_with
from ikigai_core.commands.output import printable

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.spinner import Spinner
    from rich.text import Text

    from ikigai_core.app import App
    from ikigai_core.commands.chatview import ChatView
    from ikigai_core.commands.lineinput import LineInput
    from ikigai_core.conversation import Compaction, ToolCall
    from ikigai_core.lifecycle import CallRecord

PREVIEW_LINES = 4
THINKING_LINES = 6
"""Lines of the model's thinking shown live (the last ones) while it thinks."""
"""Lines of a tool's result shown under its line."""
DIFF_LINES = 40
"""Lines of a file edit's diff shown."""
DIFF_MAX_BYTES = 256 * 1024
"""Files larger than this get no diff (reading them twice would cost too much)."""
KEY_ARGUMENTS = ("command", "file_path", "path", "pattern", "url", "query", "name")
"""The argument shown on a tool's line: the first of these the call has, else the first
string argument."""
DIFFED_TOOLS = ("file_edit", "file_write")
FENCES = ("```", "~~~")
WARM_UP = ("rich.console", "rich.live", "rich.markdown", "rich.spinner", "rich.text")
"""What the first answer renders with, imported while the user types the first prompt."""


def warm_up() -> None:
    """Import :data:`WARM_UP` in a background thread (a line sent meanwhile waits for it,
    through the import lock)."""
    import importlib

    def load() -> None:
        for module in WARM_UP:
            importlib.import_module(module)

    threading.Thread(target=load, name="ikigai-warm-up", daemon=True).start()


def split_blocks(text: str) -> tuple[str, str]:
    """``text`` cut after its last complete markdown block: ``(complete, rest)``.

    A block ends at a blank line outside a code fence, or at a closing fence; the rest
    (an unfinished paragraph or code block) waits for more text.
    """
    in_fence = False
    cut = position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break
        stripped = line.strip()
        if stripped.startswith(FENCES):
            in_fence = not in_fence
            if not in_fence:
                cut = position
        elif not stripped and not in_fence:
            cut = position
    return text[:cut], text[cut:]


def key_argument(call: ToolCall) -> str:
    """The argument that says what a call does: the bash command, the file path..."""
    arguments = call.arguments or {}
    for name in KEY_ARGUMENTS:
        if isinstance(arguments.get(name), str):
            return str(arguments[name])
    return next((value for value in arguments.values() if isinstance(value, str)), "")


def one_line(text: str) -> str:
    """``text`` printable on one line."""
    return printable(text, keep_newlines=False)


def result_text(envelope: Mapping[str, Any]) -> str:
    """What to preview of a result: the tool's ``output`` text, else its JSON; the error of
    a failure."""
    if not envelope.get("tool_success"):
        return str(envelope.get("error", ""))
    result = envelope.get("result")
    if isinstance(result, Mapping) and isinstance(result.get("output"), str):
        return str(result["output"])
    return json.dumps(result, ensure_ascii=False, indent=2)


def status_of(envelope: Mapping[str, Any]) -> tuple[str, str]:
    """``(word, style)`` ending a tool's line: ``ok``, ``exit 2`` or ``failed CODE``."""
    if not envelope.get("tool_success"):
        return f"failed {envelope.get('error_code', '')}".strip(), "bold red"
    result = envelope.get("result")
    code = result.get("exit_code") if isinstance(result, Mapping) else None
    if isinstance(code, int) and code != 0:
        return f"exit {code}", "yellow"
    return "ok", "green"


def _read_small(path: Path) -> str | None:
    try:
        if path.stat().st_size > DIFF_MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""  # a new file: everything is added


def diff_lines(before: str, after: str, name: str) -> list[Text]:
    """A unified diff of ``before`` and ``after``, one coloured :class:`Text` per line."""
    from rich.text import Text

    styles = {"+": "green", "-": "red", "@": "cyan"}
    lines = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(),
                                     f"a/{name}", f"b/{name}", lineterm=""):
        lines.append(Text(one_line(line), style=styles.get(line[:1], "")))
    return lines


class QuestionTime:
    """How long each tool call waited for the person: for its questions and for its turn to
    ask. A tool's line shows the time the tool took, not the person (issue 22).

    Registered as a plugin: the questions and ``ikigai_after_tool_call`` of one call come
    from the thread running it, which ties the one to the other.
    """

    def __init__(self) -> None:
        self.answered = 0.0
        """When the last question ended (``time.monotonic()``): the spinner counts from it."""
        self._by_thread: dict[int, float] = {}
        self._by_call: dict[str | None, float] = {}

    @contextmanager
    def asking(self) -> Iterator[None]:
        """Count the block as this thread's call waiting for the person."""
        started = time.monotonic()
        try:
            yield
        finally:
            thread, self.answered = threading.get_ident(), time.monotonic()
            self._by_thread[thread] = self._by_thread.get(thread, 0.0) + (
                self.answered - started)

    @hookimpl
    def ikigai_after_tool_call(self, record: CallRecord) -> None:
        """Move what the finished call's thread waited to the call's id."""
        self._by_call[record.call_id] = self._by_thread.pop(threading.get_ident(), 0.0)

    def waited(self, call: ToolCall) -> float:
        """Seconds ``call`` (finished) waited for the person."""
        return self._by_call.pop(call.id, 0.0)


@dataclass
class _Running:
    call: ToolCall
    started: float
    path: Path | None = None
    before: str | None = None
    shown_path: str = ""


class Screen:
    """The rendered front end (see :class:`~ikigai_core.commands.frontend.FrontEnd`).

    Only the main thread changes what is shown; the live area's refresh thread reads it.
    """

    def __init__(self, app: App, console: Console | None = None) -> None:
        self.app = app
        self._console = console
        self.asking = threading.Lock()
        self.pending = ""
        self.show_thinking = False
        self.thought = ""
        """The thinking shown live (dimmed) until the model's text or a tool starts."""
        self.spaced = True  # whether the next markdown block needs no blank line above it
        self.waiting_since: float | None = None
        self.running: dict[int, _Running] = {}
        self.live: Live | None = None
        self._spinner: Spinner | None = None
        self.chat: ChatView | None = None
        self.input: LineInput | None = None
        self.question_time = QuestionTime()

    @property
    def console(self) -> Console:
        """Where everything is rendered (stdout), made at the first use."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False)
        return self._console

    # -- the model's text -----------------------------------------------------

    def text(self, piece: str) -> None:
        """Render each markdown block once it is complete; the rest shows live."""
        self._end_thinking()
        self.waiting_since = None
        done, self.pending = split_blocks(self.pending + printable(piece, prose=True))
        if done.strip():
            self._markdown(done)

    def thinking(self, piece: str) -> None:
        """With :attr:`show_thinking`: the model's thinking, dimmed, live as it comes."""
        if self.show_thinking:
            self.thought += printable(piece, prose=True)

    def _end_thinking(self) -> None:
        """Print the thinking shown live, dimmed, above what follows it."""
        from rich.text import Text

        if self.thought.strip():
            self.console.print(Text(self.thought.strip(), style="dim italic"))
            self.spaced = False
        self.thought = ""

    def end_line(self) -> None:
        """Render what is left of the model's text."""
        self._end_thinking()
        if self.pending.strip():
            self._markdown(self.pending)
        self.pending = ""

    def _markdown(self, text: str) -> None:
        from rich.markdown import Markdown

        if not self.spaced:
            self.console.print()
        self.console.print(Markdown(text, code_theme="monokai"))
        self.spaced = False

    # -- progress -------------------------------------------------------------

    def request(self) -> None:
        """The spinner says the model is being waited for."""
        self.waiting_since = time.monotonic()

    @contextmanager
    def turn(self) -> Iterator[None]:
        """A live area under the printed lines: the unfinished text and the spinner."""
        from rich.live import Live

        live = Live(self, console=self.console, transient=True, refresh_per_second=10,
                    redirect_stdout=False, redirect_stderr=False)
        self.spaced = True
        with live:
            self.live = live
            try:
                yield
            finally:
                self.live = None
                self.waiting_since = None
                self.running.clear()
        self.end_line()

    def __rich__(self) -> RenderableType:
        """The live area: the model's unfinished block, then the spinner line."""
        from rich.console import Group
        from rich.spinner import Spinner
        from rich.text import Text

        parts: list[RenderableType] = []
        thought = self.thought.strip()
        if thought:
            parts.append(Text("\n".join(thought.splitlines()[-THINKING_LINES:]),
                              style="dim italic"))
        pending = self.pending
        if pending.strip():
            from rich.markdown import Markdown

            parts.append(Markdown(pending, code_theme="monokai"))
        label, since = self._activity()
        if since is not None:
            if self._spinner is None:
                self._spinner = Spinner("dots", style="cyan")
            self._spinner.update(text=Text(f"{label} {time.monotonic() - since:.1f}s",
                                           style="dim"))
            parts.append(self._spinner)
        return Group(*parts)

    def _activity(self) -> tuple[str, float | None]:
        running = list(self.running.values())  # one step: the main thread changes it
        if running:
            first = min(running, key=lambda r: r.started)
            more = f" (+{len(running) - 1} more)" if len(running) > 1 else ""
            shown = one_line(key_argument(first.call))[:60]
            since = max(first.started, self.question_time.answered)  # not the person's time
            return f"{first.call.name} {shown}{more}".strip(), since
        if self.waiting_since is not None:
            return "waiting for the model", self.waiting_since
        return "", None

    # -- tools ----------------------------------------------------------------

    def tool_start(self, call: ToolCall) -> None:
        """Remember when the call started (and, for a file edit, the file before it)."""
        self.end_line()
        self.spaced = True
        running = _Running(call, time.monotonic())
        path = (call.arguments or {}).get("file_path")
        if call.name in DIFFED_TOOLS and isinstance(path, str):
            running.path, running.shown_path = self.app.cwd / path, path
            running.before = _read_small(running.path)
        self.waiting_since = None
        self.running[id(call)] = running

    def tool_end(self, call: ToolCall, envelope: Mapping[str, Any]) -> None:
        """``● bash  ls -l  ok 0.1s`` (the time without the wait for the person's answer),
        then a preview of the result or the file's diff."""
        from rich.text import Text

        running = self.running.pop(id(call), None) or _Running(call, time.monotonic())
        elapsed = time.monotonic() - running.started - self.question_time.waited(call)
        word, style = status_of(envelope)
        line = Text("● ", style=style)
        line.append(one_line(call.name), style="bold")
        argument = one_line(key_argument(call))
        if argument:
            line.append("  " + argument, style="cyan")
        line.append(f"  {word} {elapsed:.1f}s", style=style)
        self.console.print(line, overflow="ellipsis", no_wrap=True)
        diff = self._diff(running) if envelope.get("tool_success") else None
        self._preview(diff if diff is not None else
                      [Text(one_line(t)) for t in result_text(envelope).splitlines()],
                      DIFF_LINES if diff is not None else PREVIEW_LINES)

    def _diff(self, running: _Running) -> list[Text] | None:
        if running.path is None or running.before is None:
            return None
        after = _read_small(running.path)
        if after is None:
            return None
        return diff_lines(running.before, after, running.shown_path)

    def _preview(self, lines: list[Text], limit: int) -> None:
        from rich.text import Text

        for line in lines[:limit]:
            self.console.print(Text("  ") + line, overflow="ellipsis", no_wrap=True,
                               style="dim" if not line.style else "")
        if len(lines) > limit:
            self.console.print(Text(f"  … {len(lines) - limit} more lines", style="dim italic"))

    # -- the chat -------------------------------------------------------------

    def started(self, chat: ChatView, guard: str) -> None:
        """Say who we chat with; plugins may now ask the user questions. How tools are
        guarded is on the status line (``/approve`` says ``guard`` in full)."""
        from ikigai_core.commands.lineinput import LineInput

        self.chat = chat
        self.input = LineInput(self.app, chat, shown=warm_up)
        self.app.ask_user = self.ask
        self.app.pm.register(self.question_time, name=__name__)
        self._note(f"{chatting_with(chat)}; /help for commands, Alt-Enter or \\ Enter for a "
                   "new line, Ctrl-D to leave")

    def compacted(self, compaction: Compaction) -> None:
        """The compaction's line, dimmed, where the conversation is."""
        from rich.text import Text

        from ikigai_core.commands.chat_context import compaction_line

        self.end_line()
        self.console.print(Text(printable(compaction_line(compaction)), style="dim"))
        self.spaced = True

    def cleared(self) -> None:
        """Say that the conversation starts afresh."""
        self._note("new conversation")

    def _note(self, text: str) -> None:
        """``text`` dimmed, wrapped to the terminal (without rich: the first prompt is up
        before rich is imported)."""
        width = self._console.width if self._console else shutil.get_terminal_size().columns
        click.echo(click.style(textwrap.fill(printable(text), width), dim=True),
                   file=self._console.file if self._console else None)

    def lines(self) -> Iterator[str]:
        """What the user submits at the prompt, until Ctrl-D (or Ctrl-C twice)."""
        assert self.input is not None
        while (line := self.input.read()) is not None:
            yield line

    def interject(self, say: Callable[[], object]) -> bool:
        """Run ``say`` at the prompt, from any thread (``False``: no prompt is up)."""
        return self.input is not None and self.input.interject(say)

    def redraw(self) -> None:
        """Redraw the prompt's status line soon (from any thread), if the prompt is up."""
        if self.input is not None:
            self.input.redraw()

    def ask(self, question: str) -> str | None:
        """Ask ``question`` (from any thread, the spinner paused); ``None`` if unanswered."""
        assert self.input is not None
        with self.question_time.asking(), self.asking:
            live = self.live
            if live is not None:
                live.stop()
            try:
                return self.input.ask(question)
            finally:
                if live is not None:
                    live.start()
