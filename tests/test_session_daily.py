"""The session commands for daily use (issue 27): ``ask --resume``, ``ask --json``'s provider
and model, chat's ``/resume`` and ``/sessions``. Each through ``ikigai`` run as a real process
against the fake provider server."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.replies import REPLIES
from tests.test_sessions import IKIGAI, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)
OPENAI = REPLIES["openai"]


def ikigai(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` in the current directory, with the test's environment."""
    return subprocess.run([IKIGAI, *args], input=input, capture_output=True, text=True,
                          timeout=60)


def asked(prompt: str, *args: str) -> dict[str, object]:
    """``ikigai ask --json PROMPT`` answered; its JSON."""
    done = ikigai("ask", "--provider", "openai", "--no-stream", "--json", *args, prompt)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def user_texts(body: dict[str, list[dict[str, str]]]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_ask_json_names_the_provider_and_model(fake_server):
    fake_server.push(OPENAI.reply("Hi."))
    answer = asked("hello", "--model", "gpt-test")
    assert (answer["provider"], answer["model"], answer["text"]) == ("openai", "gpt-test", "Hi.")


def test_ask_resume_goes_on_with_the_session_named_by_its_start(fake_server):
    fake_server.push(*(OPENAI.reply(text) for text in ("One.", "Two.", "Three.")))
    first = str(asked("first")["session"])
    asked("unrelated")
    again = asked("second", "--resume", first[:5])
    assert again["session"] == first
    assert user_texts(fake_server.requests[2].json) == ["first", "second"]
    missing = ikigai("ask", "--provider", "openai", "--resume", "nosuch", "q")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == ("ikigai: no session 'nosuch'; `ikigai sessions list` shows "
                              "them\n")
    assert len(fake_server.requests) == 3  # nothing was sent


def test_chat_resume_and_sessions(fake_server):
    fake_server.push(*(OPENAI.reply(text) for text in ("A.", "B.", "C.", "D.")))
    first = str(asked("alpha")["session"])
    second = str(asked("beta")["session"])
    chat = ikigai("chat", "--provider", "openai", "--no-stream", input=(
        f"/sessions\n/resume {first[:6]}\ngamma\n/resume\ndelta\n/resume nosuch\n"))
    assert chat.returncode == 0, chat.stderr
    listed = chat.stdout.splitlines()[:2]
    assert listed[0].startswith(f"{second}  ") and listed[0].endswith("  1 turn  15 tokens  beta")
    assert listed[1].startswith(f"{first}  ") and listed[1].endswith("alpha")
    assert user_texts(fake_server.requests[2].json) == ["alpha", "gamma"]
    # /resume alone: the last conversation here, which gamma just went on with
    assert user_texts(fake_server.requests[3].json) == ["alpha", "gamma", "delta"]
    assert chat.stderr.splitlines() == [
        f"ikigai: continuing session {first} (1 earlier prompts)",
        f"ikigai: continuing session {first} (2 earlier prompts)",
        "ikigai: no session 'nosuch'; `ikigai sessions list` shows them"]


def test_chat_sessions_shows_the_recent_ten(fake_server):
    empty = ikigai("chat", "--provider", "openai", input="/sessions\n")
    assert (empty.returncode, empty.stdout) == (0, "No conversations recorded yet.\n")
    fake_server.push(*(OPENAI.reply("ok") for _ in range(11)))
    for number in range(11):
        asked(f"question {number}")
    shown = ikigai("chat", "--provider", "openai", input="/sessions\n").stdout.splitlines()
    assert len(shown) == 11 and shown[0].endswith("question 10")
    assert shown[-1] == "… 1 more: `ikigai sessions list` shows all"
