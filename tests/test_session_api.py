"""The core session service from Python (issue 23 item 1): a real provider plugin against
the local fake server, real tools as subprocesses, approvals answered by a callback, the
conversation resumed from sessions.db, and nothing printed."""

from __future__ import annotations

import json
import os
import threading

import pytest

from ikigai_core import App, Cancelled, Session
from ikigai_core.conversation import ToolResultsMessage
from tests.support.procs import wait_gone
from tests.support.replies import REPLIES

OPENAI = REPLIES["openai"]


@pytest.fixture
def app(fake_server, tmp_path):
    """An invocation whose openai provider talks to the fake server."""
    environ = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url}
    return App(environ=environ, cwd=tmp_path)


def _results(session: Session) -> list[dict]:
    """The envelopes of the tool calls the last prompt made."""
    return [result.envelope for message in session.exchange
            if isinstance(message, ToolResultsMessage) for result in message.results]


def test_a_session_runs_tools_asks_a_callback_resumes_and_prints_nothing(
        app, fake_server, tmp_path, capfd):
    fake_server.push(OPENAI.reply("", [("c1", "bash", {"command": "echo from-the-tool"})]),
                     OPENAI.reply("It printed from-the-tool."),
                     OPENAI.reply("Yes, it did."))
    questions: list[str] = []

    def answer(question: str) -> str:
        questions.append(question)
        return "y"

    session = app.session("openai", ask=answer)
    reply = session.send("run echo from-the-tool")

    assert reply.text == "It printed from-the-tool."
    assert len(questions) == 1 and questions[0].startswith("Allow bash ")
    [envelope] = _results(session)
    assert envelope["tool_success"] and "from-the-tool" in json.dumps(envelope)
    assert session.usage.total == 30 and session.id is not None

    resumed = App(environ=app.environ, cwd=tmp_path).session("openai")
    assert resumed.resume(session.id)
    assert resumed.send("did it?").text == "Yes, it did."
    sent = json.dumps(fake_server.requests[-1].json["messages"])
    assert "run echo from-the-tool" in sent and "from-the-tool" in sent
    assert resumed.id == session.id
    assert capfd.readouterr() == ("", "")


def test_without_an_asker_a_call_that_needs_approval_is_denied(app, fake_server, capfd):
    fake_server.push(OPENAI.reply("", [("c1", "bash", {"command": "touch made"})]),
                     OPENAI.reply("It was denied."))

    session = app.session("openai", log=False)
    session.send("make a file")

    [envelope] = _results(session)
    assert envelope["error_code"] == "TOOL_DENIED"
    assert not (app.cwd / "made").exists()
    assert any("nobody can be asked" in notice.message for notice in app.notices)
    assert session.id is None
    assert capfd.readouterr() == ("", "")


def test_cancel_stops_the_prompt_and_kills_its_tools(app, fake_server, tmp_path, capfd):
    pid_file = tmp_path / "pid"
    fake_server.push(OPENAI.reply("", [("c1", "bash", {
        "command": f"echo $$ > {pid_file}; exec sleep 60"})]))
    session = app.session("openai", ask=lambda question: "y")
    before = list(session.conversation.messages)

    def cancel_once_started() -> None:
        for _ in range(200):  # 20 s at most
            if pid_file.exists() and pid_file.read_text().strip():
                break
            threading.Event().wait(0.1)
        session.cancel()

    canceller = threading.Thread(target=cancel_once_started)
    canceller.start()
    with pytest.raises(Cancelled):
        session.send("sleep")
    canceller.join(timeout=30)

    assert wait_gone(int(pid_file.read_text()), timeout=10)
    assert session.conversation.messages == before
    assert capfd.readouterr() == ("", "")
