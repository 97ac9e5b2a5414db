"""The terminal front end's pieces in-process: the rendered screen on a rich console held in
memory, and the prompt fed keys through prompt_toolkit's pipe input.

tests/test_chat_terminal.py drives the whole chat on a real terminal; these pin the details.
"""

from __future__ import annotations

import contextvars
import io
import re
import signal
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

import ikigai_core.commands.chat  # noqa: F401 - chat's module fills the command table
from ikigai_core import hookimpl
from ikigai_core.app import App
from ikigai_core.commands.lineinput import LEAVE_HINT, REDRAW_INTERVAL, LineInput, fitted
from ikigai_core.commands.screen import WARM_UP, Screen, key_argument, split_blocks, warm_up
from ikigai_core.conversation import ToolCall, Usage
from ikigai_core.grants import Grants


@pytest.fixture(autouse=True)
def sigint_restored():
    """The prompt chains a SIGINT handler; each test leaves the one it found."""
    saved = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, saved)


@pytest.fixture
def app(isolated_home, tmp_path):
    return App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)


@pytest.fixture
def screen(app):
    """A screen printing plain text (no colours) into memory, 80 columns wide."""
    console = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=80)
    return Screen(app, console=console)


def shown(screen: Screen) -> str:
    return "\n".join(line.rstrip() for line in screen.console.file.getvalue().splitlines())


@pytest.mark.parametrize(("text", "done"), [
    ("one\n\ntwo", "one\n\n"),
    ("para\nstill para\n", ""),
    ("```py\nx = 1\n\ny = 2\n", ""),  # a blank line inside a fence ends nothing
    ("```py\nx = 1\n```\nafter", "```py\nx = 1\n```\n"),
    ("~~~\ncode\n~~~\n", "~~~\ncode\n~~~\n"),
])
def test_blocks_end_at_blank_lines_outside_fences(text, done):
    assert split_blocks(text) == (done, text[len(done):])


def test_markdown_is_rendered_block_by_block_as_it_streams(screen):
    screen.text("# Title\n\nSome **bold")
    assert "Title" in shown(screen) and "bold" not in shown(screen)
    screen.text(" text**\n\n```python\nprint('hi')\n")
    assert "bold text" in shown(screen) and "print" not in shown(screen)
    screen.text("```\n")
    assert "print('hi')" in shown(screen)
    screen.text("- last")
    with screen.turn():  # the rest is rendered when the turn ends
        pass
    out = shown(screen)
    assert "**" not in out and "```" not in out and "#" not in out
    assert re.search(r"^ *• last$", out, re.M)


def test_a_tool_line_with_a_preview_of_its_result(screen):
    call = ToolCall("c1", "bash", {"command": "seq 1 6"})
    screen.tool_start(call)
    screen.tool_end(call, {"tool_success": True,
                           "result": {"output": "1\n2\n3\n4\n5\n6", "exit_code": 0}})
    out = shown(screen)
    assert re.match(r"● bash  seq 1 6  ok 0\.\ds\n  1\n  2\n  3\n  4\n  … 2 more lines$", out), out


@pytest.mark.parametrize(("envelope", "status", "preview"), [
    ({"tool_success": True, "result": {"output": "boom", "exit_code": 2}}, "exit 2", "boom"),
    ({"tool_success": False, "error": "Tool 'x' crashed with exit code 3",
      "error_code": "TOOL_CRASHED"}, "failed TOOL_CRASHED", "Tool 'x' crashed with exit code 3"),
    ({"tool_success": True, "result": {"count": 2}}, "ok", '{'),
])
def test_the_status_word_says_how_the_call_ended(screen, envelope, status, preview):
    call = ToolCall("c1", "x", {"path": "a\x1b[31mb"})
    screen.tool_end(call, envelope)  # never started: timed from now
    first, second = shown(screen).splitlines()[:2]
    assert first == f"● x  a\\x1b[31mb  {status} 0.0s"  # control characters escaped
    assert second == f"  {preview}"


def test_key_arguments():
    assert key_argument(ToolCall("1", "t", {"n": 1, "query": "q", "other": "o"})) == "q"
    assert key_argument(ToolCall("1", "t", {"n": 1, "other": "o"})) == "o"
    assert key_argument(ToolCall("1", "t", None, "broken")) == ""


def test_file_edits_show_a_coloured_diff(app, tmp_path):
    console = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=80)
    screen = Screen(app, console=console)
    path = tmp_path / "notes.txt"
    path.write_text("alpha\nbeta\n")
    call = ToolCall("c1", "file_edit", {"file_path": "notes.txt", "old_string": "beta",
                                        "new_string": "BETA"})
    screen.tool_start(call)
    path.write_text("alpha\nBETA\n")
    screen.tool_end(call, {"tool_success": True, "result": {"output": "Replaced 1"}})
    raw = console.file.getvalue()
    assert "\x1b[31m-beta" in raw and "\x1b[32m+BETA" in raw
    new = ToolCall("c2", "file_write", {"file_path": "new.txt", "content": "fresh\n"})
    screen.tool_start(new)
    (tmp_path / "new.txt").write_text("fresh\n")
    screen.tool_end(new, {"tool_success": True, "result": {"output": "Wrote 6 bytes"}})
    assert "\x1b[32m+fresh" in console.file.getvalue()


def test_big_files_and_failed_edits_show_no_diff(screen, tmp_path, monkeypatch):
    monkeypatch.setattr("ikigai_core.commands.screen.DIFF_MAX_BYTES", 4)
    (tmp_path / "big.txt").write_text("0123456789")
    call = ToolCall("c1", "file_write", {"file_path": "big.txt", "content": "x"})
    screen.tool_start(call)
    screen.tool_end(call, {"tool_success": True, "result": {"output": "Wrote 1 bytes"}})
    assert "  Wrote 1 bytes" in shown(screen) and "+++" not in shown(screen)


def test_the_live_area_shows_what_is_awaited(screen):
    def live() -> str:
        console = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=80)
        console.print(screen)
        return console.file.getvalue()

    assert live().strip() == ""
    screen.request()
    assert re.search(r"waiting for the model 0\.\ds", live())
    screen.text("partial *answer")
    assert "partial" in live() and "waiting" not in live()
    screen.tool_start(ToolCall("c1", "bash", {"command": "sleep 9"}))
    screen.tool_start(ToolCall("c2", "glob", {"pattern": "*.py"}))
    assert re.search(r"bash sleep 9 \(\+1 more\) 0\.\ds", live())


def test_clear_and_start_are_said(screen, app):
    chat = SimpleNamespace(app=app, agent=SimpleNamespace(
        provider=SimpleNamespace(name="openai"), model="m"), turn_usage=Usage(), usage=Usage(),
        cost=None, agents_status=lambda: None, grants=Grants())
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        screen.started(chat, "sandbox: off; approvals: ask")
        assert app.ask_user == screen.ask
        screen.cleared()
        keys.send_text("hello\r")
        assert next(screen.lines()) == "hello"
        keys.send_text("y\r")
        with screen.turn():
            assert screen.ask("go on?") == "y"
    assert "chatting with openai m; /help" in shown(screen)
    assert "sandbox" not in shown(screen)  # the status line says it
    assert "new conversation" in shown(screen)


# -- The prompt ---------------------------------------------------------------------------


def test_rich_waits_until_the_first_prompt_is_shown(app, capsys):
    """The first prompt needs no rich: the banner is printed without it, rich comes later
    in the background; the console is made when first used."""
    screen = Screen(app)
    screen._note("chatting with someone")
    assert capsys.readouterr().out == "chatting with someone\n"  # (no colour on a pipe)
    assert screen._console is None
    assert screen.console.file is sys.stdout and screen._console is not None
    before = set(threading.enumerate())
    warm_up()
    for thread in set(threading.enumerate()) - before:
        thread.join(20)
    assert all(module in sys.modules for module in WARM_UP)


@pytest.fixture
def prompt(app):
    """A :class:`LineInput` fed from a pipe: ``(line_input, keys)``."""
    agent = SimpleNamespace(provider=SimpleNamespace(name="openai"), model="gpt-x")
    chat = SimpleNamespace(agent=agent, turn_usage=Usage(10, 5), usage=Usage(1000, 234),
                           cost=None, agents_status=lambda: None, grants=Grants(),
                           tools_found=lambda: {"file_read": None, "file_write": None})
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        yield LineInput(app, chat), keys


def test_shown_is_called_once_the_first_prompt_is_drawn(app):
    shown = []
    chat = SimpleNamespace(agent=SimpleNamespace(provider=SimpleNamespace(name="o"), model="m"),
                           turn_usage=Usage(), usage=Usage(), cost=None, tools_found=dict,
                           agents_status=lambda: None, grants=Grants())
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        line_input = LineInput(app, chat, shown=lambda: shown.append(True))
        assert shown == []
        keys.send_text("one\r")
        line_input.read()
        keys.send_text("two\r")
        line_input.read()
    assert shown == [True]


def test_enter_sends_and_alt_enter_or_a_backslash_start_a_new_line(prompt):
    line_input, keys = prompt
    keys.send_text("one\x1b\rtwo\\\rthree\r")
    assert line_input.read() == "one\ntwo\nthree"


def test_a_paste_is_kept_whole(prompt):
    line_input, keys = prompt
    keys.send_text("\x1b[200~first\rsecond\x1b[201~\r")
    assert line_input.read() == "first\nsecond"


def test_ctrl_c_clears_then_twice_on_an_empty_line_leaves(prompt):
    line_input, keys = prompt
    keys.send_text("typed\x03\x03x\x7f\x03sent\r")  # typing after one Ctrl-C disarms it
    assert line_input.read() == "sent"
    keys.send_text("\x03")
    keys.send_text("\x03")
    assert line_input.read() is None


def test_redraws_other_threads_ask_for_come_a_few_a_second_at_most(prompt):
    """Children counting tokens 100 times a second redraw the waiting prompt's status
    line only every REDRAW_INTERVAL, yet it is redrawn."""
    line_input, keys = prompt
    app = line_input.session.app
    seen: dict[str, float] = {}

    def child() -> None:
        try:
            deadline = time.monotonic() + 10
            while not app.is_running and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)  # its first drawing
            start, began = app.render_counter, time.monotonic()
            for _ in range(100):
                line_input.redraw()
                time.sleep(0.01)
            time.sleep(REDRAW_INTERVAL + 0.1)  # the last one asked for is drawn
            seen["renders"] = app.render_counter - start
            seen["seconds"] = time.monotonic() - began
        finally:
            keys.send_text("done\r")

    thread = threading.Thread(target=child)
    thread.start()
    assert line_input.read() == "done"
    thread.join(10)
    assert 2 <= seen["renders"] <= seen["seconds"] / REDRAW_INTERVAL + 1, seen


def test_a_redraw_due_on_a_prompt_that_gave_way_holds_back_none_on_the_next(prompt,
                                                                           monkeypatch):
    """A child's count just after the prompt came back (a sibling's end made it give way)
    is drawn at once, though a redraw was still due on the prompt that went."""
    from ikigai_core.commands import lineinput

    monkeypatch.setattr(lineinput, "REDRAW_INTERVAL", 2.0)
    line_input, keys = prompt
    app = line_input.session.app
    seen: dict[str, int] = {}

    def up(after: object = None) -> object:
        """The loop of the prompt once it is up (another than ``after``), drawn."""
        deadline = time.monotonic() + 10
        while not (app.is_running and app.loop is not after) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        return app.loop

    def child() -> None:
        try:
            first = up()
            line_input.redraw()
            line_input.redraw()  # due in 2 s, on the first prompt
            keys.send_text("one\r")
            up(after=first)
            start = app.render_counter
            line_input.redraw()
            time.sleep(0.5)
            seen["renders"] = app.render_counter - start
        finally:
            keys.send_text("two\r")

    thread = threading.Thread(target=child)
    thread.start()
    assert [line_input.read(), line_input.read()] == ["one", "two"]
    thread.join(10)
    assert seen["renders"] >= 1


def test_ctrl_d_leaves(prompt):
    line_input, keys = prompt
    keys.send_text("\x04")
    assert line_input.read() is None


@pytest.mark.parametrize(("typed", "offered"), [
    ("/mo", ["/model"]),
    ("/", ["/tool", "/refresh", "/skill", "/load", "/toolset", "/fork", "/agents", "/send",
           "/kill", "/model", "/clear", "/resume",
           "/sessions", "/approve", "/compact", "/uncompact", "/context",
           "/help", "/quit"]),
    ("/tool file_", ["file_read", "file_write"]),
    ("/model x", []),  # nothing to complete after other commands
    ("plain text", []),
])
def test_completion_of_commands_and_tool_names(prompt, typed, offered):
    line_input, _ = prompt
    completer = line_input.session.completer
    found = [c.text for c in completer.get_completions(Document(typed), CompleteEvent())]
    assert found[:len(offered)] == offered and (offered or not found)


def test_history_is_kept_user_only(prompt, isolated_home):
    line_input, keys = prompt
    keys.send_text("remember me\r")
    line_input.read()
    history = isolated_home / "prompt-history"
    assert "remember me" in history.read_text()
    assert history.stat().st_mode & 0o777 == 0o600


def test_the_status_line(prompt, app):
    line_input, keys = prompt

    class Audit:
        @hookimpl
        def ikigai_status(self):
            return ["audit: on"]

    app.pm.register(Audit(), name="audit")
    assert line_input.status() == (  # broken between words to fit 80 columns
        "openai · gpt-x · tokens: turn 15 · chat 1,234 · sandbox: off · approve: ask\n"
        "audit: on")
    line_input.armed = True
    assert line_input.status().endswith(f"audit: on · {LEAVE_HINT}")


def test_the_status_line_shows_the_cache_share_and_the_cost(prompt):
    line_input, keys = prompt
    line_input.chat.usage = Usage(1000, 234, cache_read_tokens=870, cache_write_tokens=100)
    line_input.chat.cost = 0.01234
    assert line_input.status().startswith(
        "openai · gpt-x · tokens: turn 15 · chat 1,234 · cache 87% · $0.0123\n")
    line_input.chat.cost = None  # no price known: nothing said
    assert "$" not in line_input.status()


def test_status_words_are_fitted_to_the_width():
    assert fitted(["ab", "cd", "ef"], 7) == "ab · cd\nef"
    assert fitted(["a-long-word", "b"], 5) == "a-long-word\nb"  # a word wider is not cut
    assert fitted([], 5) == ""


def test_questions_are_asked_one_at_a_time_from_any_thread(prompt):
    line_input, keys = prompt
    answers = []
    keys.send_text("always\r")
    context = contextvars.copy_context()  # the pipe input, in the worker thread too
    worker = threading.Thread(target=context.run,
                              args=(lambda: answers.append(line_input.ask("run? [y/n]")),))
    worker.start()
    worker.join(20)
    assert answers == ["always"]
    keys.send_text("\x03")
    assert line_input.ask("again?") is None


# -- Which front end ----------------------------------------------------------------------


@pytest.fixture
def terminal(monkeypatch):
    """stdin and stdout look like a terminal."""
    for stream in ("stdin", "stdout"):
        monkeypatch.setattr(f"sys.{stream}.isatty", lambda: True, raising=False)


@pytest.mark.parametrize(("environ", "plain"), [
    ({}, False), ({"NO_COLOR": "1"}, True), ({"TERM": "dumb"}, True), ({}, True)])
def test_the_front_end_is_rendered_on_a_terminal_unless_told_otherwise(
    terminal, isolated_home, environ, plain, monkeypatch
):
    from ikigai_core.commands.frontend import PlainFrontEnd, front_end

    app = App(environ={"IKIGAI_HOME": str(isolated_home), "TERM": "xterm", **environ})
    asked_plain = plain and not environ
    front = front_end(app, plain=asked_plain, interactive=True)
    assert isinstance(front, PlainFrontEnd if plain else Screen)


def test_the_plain_front_end_on_a_pipe_asks_nobody(app, capsys):
    from ikigai_core.commands.frontend import PlainFrontEnd

    front = PlainFrontEnd(app)  # stdin is no terminal here
    front.started(SimpleNamespace(app=app), "guarded")
    assert app.ask_user is None
    assert capsys.readouterr() == ("", "")


def test_a_ctrl_c_signal_ends_a_question_a_worker_asks(prompt):
    line_input, keys = prompt
    answers = []
    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run,
                              args=(lambda: answers.append(line_input.ask("run?")),))
    worker.start()
    deadline = time.monotonic() + 20
    while line_input.question is None or not line_input.question.app.is_running:
        assert time.monotonic() < deadline, "the question never came up"
        time.sleep(0.01)
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)  # as the main thread would get it
    worker.join(20)
    assert answers == [None]
