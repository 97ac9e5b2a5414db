"""How ``ask`` and ``chat`` look: plain text, or (on a terminal) the rendered screen.

Plain is what a pipe, ``NO_COLOR`` (https://no-color.org), ``TERM=dumb`` and ``--plain``
get, byte for byte what ikigai always printed: the model's text on stdout as it arrives,
each tool call as ``ikigai: → ...``/``ikigai: ← ...`` lines on stderr. The rendered one
lives in :mod:`ikigai_core.commands.screen`, imported (with ``rich`` and
``prompt_toolkit``) only when it is used.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.commands.chatview import chatting_with
from ikigai_core.commands.output import printable, warn

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.commands.chatview import ChatView, FrontEnd
    from ikigai_core.commands.plainprompt import PlainPrompt
    from ikigai_core.conversation import Compaction, ToolCall

ARGUMENTS_SHOWN = 100
"""Characters of a tool call's arguments shown on its activity line."""

plain_option = click.option(
    "--plain", is_flag=True,
    help="Plain text even on a terminal (also NO_COLOR=1): no rendering, spinner or colours.")


def is_plain(app: App, plain: bool) -> bool:
    """Whether to print plain text: asked to, ``NO_COLOR``, ``TERM=dumb``, or stdout (where
    the answer goes) not a terminal; stdin and stderr do not decide this."""
    return (plain or bool(app.environ.get("NO_COLOR")) or app.environ.get("TERM") == "dumb"
            or not sys.stdout.isatty())


def front_end(app: App, *, plain: bool, interactive: bool) -> FrontEnd:
    """The front end for this invocation; ``interactive`` when it reads a chat's lines
    (then rendering also needs stdin on the terminal: a chat fed from a pipe is plain)."""
    front: FrontEnd
    if is_plain(app, plain) or (interactive and not sys.stdin.isatty()):
        front = PlainFrontEnd(app)
    else:
        from ikigai_core.commands.screen import Screen

        front = Screen(app)
    front.show_thinking = interactive and app.settings.show_thinking
    return front


class PlainFrontEnd:
    """The model's text on stdout as it arrives; tool activity on stderr, on lines of its own;
    a ``readline`` prompt on a terminal, one message per line from a pipe."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.last = ""
        self.interactive = sys.stdin.isatty()
        self.prompt: PlainPrompt | None = None
        if self.interactive:
            from ikigai_core.commands.plainprompt import PlainPrompt

            self.prompt = PlainPrompt(app.home / "history")
        self.show_thinking = False
        self.thinking_shown = False  # a thinking line is open on stderr

    def text(self, piece: str) -> None:
        """Print a piece of the model's text."""
        self._end_thinking()
        click.echo(printable(piece, prose=True), nl=False)
        self.last = piece[-1:] or self.last

    def thinking(self, piece: str) -> None:
        """With :attr:`show_thinking`: the model's thinking, dimmed, on stderr after
        ``thinking:``."""
        if not self.show_thinking:
            return
        if not self.thinking_shown:
            self.end_line()
            click.echo(click.style("thinking: ", dim=True), nl=False, err=True)
            self.thinking_shown = True
        click.echo(click.style(printable(piece, prose=True), dim=True), nl=False, err=True)

    def _end_thinking(self) -> None:
        if self.thinking_shown:
            click.echo(err=True)
            self.thinking_shown = False

    def end_line(self) -> None:
        """End the model's line, if text is waiting on one."""
        self._end_thinking()
        if self.last not in ("", "\n"):
            click.echo()
        self.last = ""

    def request(self) -> None:
        """Nothing to show."""

    def tool_start(self, call: ToolCall) -> None:
        """``ikigai: → bash {"command": ...}``."""
        self.end_line()
        shown = "(unreadable arguments)"
        if call.arguments is not None:
            shown = json.dumps(call.arguments, ensure_ascii=False)
        if len(shown) > ARGUMENTS_SHOWN:
            shown = shown[: ARGUMENTS_SHOWN - 1] + "…"
        warn(f"→ {call.name} {shown}")

    def tool_end(self, call: ToolCall, envelope: Mapping[str, Any]) -> None:
        """``ikigai: ← bash ok``, or the error code."""
        status = "ok" if envelope.get("tool_success") else envelope.get("error_code", "failed")
        warn(f"← {call.name} {status}")

    def turn(self) -> AbstractContextManager[None]:
        """Nothing around a turn; the text's last line is ended."""
        return nullcontext()

    def compacted(self, compaction: Compaction) -> None:
        """``ikigai: compacted: 42 messages summarised, ...``."""
        from ikigai_core.commands.chat_context import compaction_line

        self.end_line()
        warn(compaction_line(compaction))

    def started(self, chat: ChatView, guard: str) -> None:
        """On a terminal: say who we chat with and how tools are guarded; let plugins ask
        the user questions."""
        if self.prompt is not None:
            from ikigai_core.commands.approving import terminal_asker

            self.app.ask_user = terminal_asker(self.prompt.at_prompt)
            warn(f"{chatting_with(chat)}; /help for commands")
            warn(guard)

    def cleared(self) -> None:
        """Nothing to show."""

    def interject(self, say: Callable[[], object]) -> bool:
        """Have ``say`` said at once, from another thread, while the prompt waits on a
        terminal; ``False`` otherwise (the chat says it after the turn)."""
        return self.prompt is not None and self.prompt.at_prompt(
            lambda live: say() if live else None)

    def redraw(self) -> None:
        """Nothing: the plain chat has no status line."""

    def lines(self) -> Iterator[str]:
        """Lines typed at a prompt (with line editing and history; what other threads
        bring while it waits comes up over it), or one message per line from a pipe (no
        prompt noise)."""
        if self.prompt is None:
            yield from sys.stdin
            return
        yield from self.prompt.lines()


class QuietFrontEnd(PlainFrontEnd):
    """``ask --json``: the model's text only in the JSON printed at the end; tool activity
    still on stderr."""

    def text(self, piece: str) -> None:
        """Nothing: the text is in the JSON."""

    def end_line(self) -> None:
        """Nothing was printed."""
