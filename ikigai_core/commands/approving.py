"""The command line's side of approvals: ``--yes``/``--allow``, the prompt in ``chat``,
and the line saying how tools are guarded."""

from __future__ import annotations

import codecs
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.commands.output import printable
from ikigai_core.questions import taken_back

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.grants import Grants

AtPrompt = Callable[[Callable[[bool], object]], bool]
"""Has the main thread do a job at the chat's prompt (called with ``False`` when the chat
ends first); ``False`` when no prompt waits."""

APPROVALS = "ikigai_core.defaults.approvals"
SANDBOX = "ikigai_core.defaults.sandbox"
ASKING = threading.Lock()
"""Held while a question is read at the terminal: concurrent calls ask one after another,
and the plain chat's prompt comes up only once no question is being read."""
_POLL = 0.1  # seconds between looks at whether a Ctrl-C signal ended the question

approval_options = (
    click.option("--yes", "-y", is_flag=True, help="Approve every tool call that would ask "
                 "(a deny rule still denies)."),
    click.option("--allow", "allow", multiple=True, metavar="TOOL[:CONDITION]",
                 help="Approve calls of TOOL (a name or glob) for this run, only those meeting "
                 "CONDITION when given: POINTER~REGEX or POINTER=VALUE, e.g. "
                 "'bash:/command~^ls( |$)'. Repeatable."),
)


def grants(yes: bool, allow: tuple[str, ...]) -> Grants:
    """The run's grants from ``--yes`` and ``--allow``; a malformed one is a usage error."""
    from ikigai_core.grants import Grants
    from ikigai_core.permissions import allow_rule

    return Grants(yes, tuple(allow_rule(spec, "--allow") for spec in allow))


def guard_line(app: App, granted: Grants) -> str:
    """``sandbox: ...; approvals: ...``, as ``chat`` says when it starts."""
    from ikigai_core.defaults.sandbox import sandbox_shown

    mode = sandbox_shown(app.settings)  # a misspelt mode fails here, as chat starts
    if app.pm.is_blocked(SANDBOX):
        mode = "off (its plugin is disabled)"
    if app.pm.is_blocked(APPROVALS):
        approvals = "none, every call runs (its plugin is disabled)"
    elif granted.yes:
        approvals = "--yes, every call runs unless a rule denies it"
    else:
        approvals = "ask before tools other than file_read, glob and grep, unless a rule decides"
        if granted.allow:
            approvals += f"; {len(granted.allow)} --allow grant(s)"
    return f"sandbox: {mode}; approvals: {approvals}"


def disabled_guards(app: App) -> list[str]:
    """Status-line words for the guarding plugins that are disabled (a disabled plugin
    cannot say so itself): ``approve: off (plugin disabled)``."""
    return [f"{word}: off (plugin disabled)"
            for plugin, word in ((APPROVALS, "approve"), (SANDBOX, "sandbox"))
            if app.pm.is_blocked(plugin)]


def terminal_asker(at_prompt: AtPrompt | None = None) -> Callable[[str], str | None]:
    """``CallContext.ask_user`` for a person at this terminal: the question on stderr,
    their line read with Ctrl-C (and Ctrl-D on an empty line) answering ``None``, as does
    a question taken back (:mod:`ikigai_core.questions`: its sub-agent was stopped).

    With ``at_prompt`` (the plain chat's :meth:`~ikigai_core.commands.plainprompt.
    PlainPrompt.at_prompt`), a question another thread asks while the chat's prompt waits
    is asked by the main thread at the prompt: only one reader of the terminal at a time.

    Call it from the main thread: it chains a SIGINT handler so that a Ctrl-C arriving as
    a signal (typed just before the question) also ends a question a worker is asking.
    """
    fd = sys.stdin.fileno()
    interrupted = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: Any) -> None:
        interrupted.set()
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGINT, on_sigint)

    def read(question: str, taken_back: threading.Event) -> str | None:
        interrupted.clear()
        return _read_line(fd, question, interrupted, taken_back)

    def ask(question: str) -> str | None:
        stopped = taken_back()
        answer: Future[str | None] = Future()

        def at_the_prompt(live: bool) -> None:
            if not live:  # the chat ended first: nobody is left to answer
                answer.set_result(None)
                return
            try:
                with ASKING:
                    answer.set_result(read(question, stopped))
            except BaseException as exc:  # the asking thread is not left waiting
                answer.set_exception(exc)
                raise

        with ASKING:
            if at_prompt is None or not at_prompt(at_the_prompt):
                return read(question, stopped)
        return answer.result()

    return ask


def _read_line(fd: int, question: str, *interrupted: threading.Event) -> str | None:
    """Show ``question``, then read one line typed at terminal ``fd``, echoed, with
    backspace; ``None`` on Ctrl-C, on Ctrl-D on an empty line, or once one of
    ``interrupted`` is set.

    The terminal is put in non-canonical mode without signals for the line, so Ctrl-C
    answers this question rather than interrupting the turn from another thread.
    """
    import termios

    saved = termios.tcgetattr(fd)
    raw = termios.tcgetattr(fd)
    raw[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG)
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, raw)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    line = ""
    try:
        _echo(printable(question))
        while True:
            if any(event.is_set() for event in interrupted):
                _echo("\n")
                return None
            if not select.select([fd], [], [], _POLL)[0]:
                continue
            byte = os.read(fd, 1)
            if byte in (b"", b"\x03") or (byte == b"\x04" and not line):
                _echo("^C\n" if byte == b"\x03" else "\n")
                return None
            if byte in (b"\r", b"\n"):
                _echo("\n")
                return line
            if byte in (b"\x7f", b"\x08"):
                if line:
                    line = line[:-1]
                    _echo("\b \b")
            elif byte >= b" ":
                piece = decoder.decode(byte)
                line += piece
                _echo(piece)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _echo(text: str) -> None:
    click.echo(text, nl=False, err=True)
