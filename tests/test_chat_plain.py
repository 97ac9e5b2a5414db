"""On a pipe, with ``NO_COLOR`` or with ``--plain``, ``ask`` and ``chat`` print exactly what
they printed before the terminal front end existed (issue 13): these bytes are pinned.

The real ``ikigai`` runs as a subprocess with piped stdio against the fake provider server,
and its real ``bash`` tool runs the command the model asks for.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.imports import heavy_imports
from tests.support.replies import REPLIES
from tests.support.terminal import Terminal

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
    # (rich itself may come in: httpx imports its own command line, which uses rich)
    fake_server.push(REPLIES["openai"].reply("Hi."))
    imported = heavy_imports([command[0], "--provider", "openai", "--no-stream", *command[1:]],
                             env=env, cwd=str(tmp_path))
    assert "prompt_toolkit" not in imported
