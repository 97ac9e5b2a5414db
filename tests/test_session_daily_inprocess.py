"""The daily session commands of :mod:`tests.test_session_daily` once more in process, for the
coverage gate (which does not follow subprocesses)."""

from __future__ import annotations

import json

import pytest

from ikigai_core.commands.sessions import plain_transcript, transcript
from tests.support.replies import REPLIES
from tests.test_sessions import invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)
OPENAI = REPLIES["openai"]


def test_chat_sessions_resume_and_search_in_process(fake_server, monkeypatch):
    monkeypatch.setattr("ikigai_core.commands.chat.RECENT_SESSIONS", 1)
    assert invoke("chat", "--provider", "openai", input="/sessions\n").stdout == (
        "No conversations recorded yet.\n")
    fake_server.push(*(OPENAI.reply(text) for text in ("A.", "B.", "C.")))
    first = json.loads(invoke("ask", "--json", "--provider", "openai", "alpha").stdout)
    invoke("ask", "--provider", "openai", "beta")
    chat = invoke("chat", "--provider", "openai", "--no-stream",
                  input=f"/sessions\n/resume {first['session']}\ngamma\n")
    lines = chat.stdout.splitlines()
    assert lines[0].endswith("beta") and lines[1] == "… 1 more: `ikigai sessions list` shows all"
    assert f"continuing session {first['session']} (1 earlier prompts)" in chat.stderr
    assert (first["provider"], first["model"]) == ("openai", "gpt-4o-mini")
    (hit,) = json.loads(invoke("sessions", "search", "--json", "gamma").stdout)
    assert (hit["session"], hit["turn"]) == (first["session"], 1)
    assert "  prompt 2  **gamma** C." in invoke("sessions", "search", "gamma").stdout
    assert invoke("sessions", "search", "nowhere").stderr == (
        "ikigai: nothing recorded matches 'nowhere'\n")
    assert invoke("sessions", "search", " ").exit_code == 2
    assert invoke("ask", "--resume", "nosuch", "--provider", "openai", "q").exit_code == 2


def test_markdown_fences_what_holds_backticks_and_plain_indents_the_system_prompt():
    result = {"call": {"id": "c", "name": "bash", "arguments": {"command": 7}},
              "envelope": {"result": "``` ````"}, "duration": 0.5}
    data = {"id": "s", "command": "ask", "cwd": "/", "created": None, "system": "be\nbrief",
            "turns": [{"seq": 0, "parent": None, "provider": "p", "model": "m", "prompt": "q",
                       "input_tokens": 1, "output_tokens": 1,
                       "messages": [{"role": "tool", "results": [result]}]}]}
    shown = transcript(data)
    assert '```json\n{\n  "command": 7\n}\n```' in shown
    assert '`````json\n{\n  "result": "``` ````"\n}\n`````' in shown
    assert plain_transcript(data) == (
        'Session s: ask in /, ?\n\nSystem prompt:\n    be\n    brief\n\nPrompt 1 (p m, 2 tokens):'
        '\n    q\n\nTool bash (0.50 s): {"command": 7}\n  → {"result": "``` ````"}\n')
