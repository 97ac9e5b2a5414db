"""Chat's ``/sessions`` and ``/resume`` in the rendered front end: the real ``ikigai chat`` on a
pseudo-terminal (``pyte`` plays the terminal), against the fake provider server."""

from __future__ import annotations

from tests.support.replies import REPLIES
from tests.test_chat_terminal import chat, env  # noqa: F401 - the fixtures
from tests.test_session_daily import asked, offline, user_texts  # noqa: F401 - offline: autouse

OPENAI = REPLIES["openai"]


def test_sessions_and_resume_on_a_terminal(fake_server, chat):  # noqa: F811
    fake_server.push(OPENAI.reply("Noted."), OPENAI.reply("Still here.", stream=True))
    session = str(asked("remember the walrus")["session"])
    chat.write(b"/sessions\r")
    chat.wait_for(f"{session}  ")
    assert "1 turn  15 tokens  <$0.0001  remember the walrus" in chat.text
    chat.write(f"/resume {session[:6]}\r".encode())
    chat.wait_for(f"continuing session {session} (1 earlier prompts)")
    chat.write(b"and now?\r")
    chat.wait_for("Still here.")
    assert user_texts(fake_server.requests[1].json) == ["remember the walrus", "and now?"]
