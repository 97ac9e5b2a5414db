"""On a pipe, with ``NO_COLOR`` or with ``--plain``, ``ask`` and ``chat`` print exactly what
they printed before the terminal front end existed (issue 13): these bytes are pinned.

The real ``ikigai`` runs as a subprocess with piped stdio against the fake provider server,
and its real ``bash`` tool runs the command the model asks for.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.imports import heavy_imports
from tests.support.replies import REPLIES
from tests.support.terminal import Terminal, read_until

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
ANSWER = "Here:\n\n```python\nprint('hi')\n```\n\n- **done**"
"""Markdown a terminal renders; a pipe gets it as is."""


@pytest.fixture
def env(fake_server, tmp_path):
    """An environment pointing the openai provider at the fake server, with a key."""
    return {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url}


def _push_turns(fake_server, stream: bool) -> None:
    replies = REPLIES["openai"]
    fake_server.push(
        replies.reply("Let me look.", [("c1", "bash", {"command": "echo one; echo two"})],
                      stream=stream),
        replies.reply(ANSWER, stream=stream),
    )


PINNED_ERR = (b'ikigai: \xe2\x86\x92 bash {"command": "echo one; echo two"}\n'
              b"ikigai: \xe2\x86\x90 bash ok\n")
PINNED_OUT = b"Let me look.\n" + ANSWER.encode() + b"\n"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_ask_on_a_pipe_is_byte_for_byte_unchanged(stream, env, fake_server, tmp_path):
    _push_turns(fake_server, stream)
    flags = [] if stream else ["--no-stream"]
    done = subprocess.run([IKIGAI, "ask", "--yes", "--provider", "openai", *flags, "look"],
                          capture_output=True, env=env, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout, done.stderr) == (0, PINNED_OUT, PINNED_ERR)


def test_chat_on_a_pipe_is_byte_for_byte_unchanged(env, fake_server, tmp_path):
    _push_turns(fake_server, True)
    done = subprocess.run([IKIGAI, "chat", "--yes", "--provider", "openai"], input=b"look\n",
                          capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, PINNED_OUT, PINNED_ERR)


def test_ask_on_a_terminal_with_no_color_is_unchanged(env, fake_server, tmp_path):
    _push_turns(fake_server, True)
    with Terminal([IKIGAI, "ask", "--yes", "--provider", "openai", "look"],
                  env={**env, "NO_COLOR": "1", "TERM": "xterm"}, cwd=tmp_path) as term:
        seen = term.read_until(b"")
        assert term.wait() == 0
    # one terminal carries both streams, with the line discipline's \r\n
    assert seen == (b"Let me look.\n" + PINNED_ERR + ANSWER.encode() + b"\n").replace(
        b"\n", b"\r\n")


@pytest.mark.parametrize("command", [["ask", "hi"], ["chat"]])
def test_on_a_pipe_the_terminal_front_end_is_not_imported(command, env, fake_server, tmp_path):
    fake_server.push(REPLIES["openai"].reply("Hi."))
    imported = heavy_imports([command[0], "--provider", "openai", "--no-stream", *command[1:]],
                             env=env, cwd=str(tmp_path))
    if command[0] == "ask":  # chat reads no prompt from /dev/null, so sends nothing
        assert "httpx" in imported  # a request was made...
    assert "prompt_toolkit" not in imported and "rich" not in imported  # ...without rich


# -- One stream on a terminal, the other a pipe: stdout decides -----------------------------


@contextmanager
def _half_on_a_terminal(argv, env, cwd, *, stdin_on_it: bool):
    """``argv`` started with stdin on a new terminal and stdout and stderr piped, or (not
    ``stdin_on_it``) the other way round: ``(process, the terminal's main side)``."""
    main, side = pty.openpty()
    pipe = subprocess.PIPE
    process = subprocess.Popen(argv, env={**env, "TERM": "xterm-256color"}, cwd=cwd,
                               stdin=side if stdin_on_it else pipe,
                               stdout=pipe if stdin_on_it else side,
                               stderr=pipe if stdin_on_it else side)
    os.close(side)
    try:
        yield process, main
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
        os.close(main)


def test_stdin_on_a_terminal_stdout_on_a_pipe_is_plain(env, fake_server, tmp_path):
    _push_turns(fake_server, True)
    argv = [IKIGAI, "chat", "--yes", "--provider", "openai"]
    with _half_on_a_terminal(argv, env, tmp_path, stdin_on_it=True) as (process, terminal):
        os.write(terminal, b"look\n\x04")
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    # the answer as on a pipe, behind input()'s prompts; the activity on stderr
    assert out == b"> " + PINNED_OUT + b"> \n"
    assert err.endswith(PINNED_ERR) and err.startswith(b"ikigai: chatting with openai")
    assert b"\x1b" not in out + err and "●".encode() not in out + err


@pytest.mark.parametrize("command", [["chat"], ["ask", "-"]], ids=["chat", "ask"])
def test_stdin_on_a_pipe_stdout_on_a_terminal(command, env, fake_server, tmp_path):
    """chat reads its lines from the pipe: plain; ask reads its prompt there: rendered."""
    _push_turns(fake_server, True)
    argv = [IKIGAI, *command, "--yes", "--provider", "openai"]
    with _half_on_a_terminal(argv, env, tmp_path, stdin_on_it=False) as (process, terminal):
        process.stdin.write(b"look\n")
        process.stdin.close()
        shown = read_until(terminal, b"", timeout=60)  # a whole turn, on a loaded machine
        assert process.wait(timeout=30) == 0
    if command == ["chat"]:  # (after the discovery spinner stderr, a terminal, shows)
        assert shown.endswith(b"\r\x1b[K" + (
            b"Let me look.\n" + PINNED_ERR + ANSWER.encode() + b"\n").replace(b"\n", b"\r\n"))
    else:
        text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", shown).decode()
        assert "● bash  echo one; echo two  ok" in text and "```" not in text
