"""The core session service from Python (issue 23 item 1): a real provider plugin against
the local fake server, real tools as subprocesses, approvals answered by a callback, the
conversation resumed from sessions.db, and nothing printed."""

from __future__ import annotations

import json
import os
import threading

import pytest

from ikigai_core import App, Cancelled, Session
from ikigai_core.commands.chat_session import ChatSession
from ikigai_core.commands.frontend import PlainFrontEnd
from ikigai_core.conversation import ToolResultsMessage
from ikigai_core.errors import UsageError
from tests.support.procs import wait_gone
from tests.support.replies import REPLIES
from tests.test_cli_agent import advertised
from tests.test_system_prompt import greeter

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

    session = Session.open(app, "openai", ask=answer)
    reply = session.send("run echo from-the-tool")

    assert reply.text == "It printed from-the-tool."
    assert len(questions) == 1 and questions[0].startswith("Allow bash ")
    [envelope] = _results(session)
    assert envelope["tool_success"] and "from-the-tool" in json.dumps(envelope)
    assert session.usage.total == 30 and session.id is not None

    resumed = Session.open(App(environ=app.environ, cwd=tmp_path), "openai")
    assert resumed.resume(session.id)
    assert resumed.send("did it?").text == "Yes, it did."
    sent = json.dumps(fake_server.requests[-1].json["messages"])
    assert "run echo from-the-tool" in sent and "from-the-tool" in sent
    assert resumed.id == session.id
    assert capfd.readouterr() == ("", "")


def test_without_an_asker_a_call_that_needs_approval_is_denied(app, fake_server, capfd):
    fake_server.push(OPENAI.reply("", [("c1", "bash", {"command": "touch made"})]),
                     OPENAI.reply("It was denied."))

    session = Session.open(app, "openai", log=False)
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
    session = Session.open(app, "openai", ask=lambda question: "y")
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


def test_a_session_chosen_like_ask_loads_skills_switches_model_and_clears(
        app, fake_server, isolated_home, make_tool, capfd):
    greeter(isolated_home, make_tool)
    fake_server.push(OPENAI.reply("Hello."), OPENAI.reply("Again."))
    session = Session.open(app, "openai", "model-a", system="Be brief.", tools="bash",
                           log=False)
    assert session.ask is None and session.toolset.loaded == []

    session.load_skill("greeter")
    session.model = "model-b"
    session.send("greet Ada")
    sent = fake_server.requests[-1].json
    assert sent["model"] == "model-b"
    assert sent["messages"][0]["content"].startswith("Be brief.")
    assert "## Skill: greeter" in sent["messages"][0]["content"]
    assert advertised("openai", sent) == ["bash", "greet"]

    session.clear()
    session.send("hi")
    sent = fake_server.requests[-1].json
    assert "## Skill: greeter" not in sent["messages"][0]["content"]
    assert advertised("openai", sent) == ["bash"] and len(sent["messages"]) == 2
    assert capfd.readouterr() == ("", "")


def test_resuming_what_is_not_there_is_a_usage_error(app):
    session = Session.open(app, "openai")
    assert not session.resume()
    with pytest.raises(UsageError, match="no earlier conversation in this directory"):
        session.resume(last=True)


def test_a_log_that_cannot_be_written_is_a_notice_and_the_session_goes_on(
        app, fake_server, isolated_home, capfd):
    (isolated_home / "sessions.db").mkdir()  # not a database
    fake_server.push(OPENAI.reply("One."), OPENAI.reply("Two."))
    session = Session.open(app, "openai")
    session.send("one")
    assert session.send("two").text == "Two." and session.id is None
    messages = [n.message for n in app.notices if "not recorded" in n.message]
    assert len(messages) == 1
    assert capfd.readouterr() == ("", "")


def test_the_chat_holds_a_session_and_shows_its_tools_and_tokens(app, fake_server, capfd):
    fake_server.push(OPENAI.reply("Hi."))
    front = PlainFrontEnd(app)
    chat = ChatSession(Session.open(app, "openai", "model-a", events=front, log=False),
                       app.discovery(), front)
    found = chat.tools_found()  # discovery starts; the registry, or None while it runs
    assert found is None or "bash" in found
    chat.send("hi")

    assert "bash" in chat.tools_found() and chat.session.model == "model-a"
    assert chat.turn_usage.total == chat.usage.total == 15
    assert capfd.readouterr() == ("Hi.", "")  # the front end shows what the session tells


def test_a_session_without_a_model_runs_a_clients_calls_through_its_boundary(app, tmp_path,
                                                                              capfd):
    marker = tmp_path / "marker"
    registry = app.registry()
    session = Session.serving(app, registry)
    assert {"bash", "glob"} <= set(session.offered())

    session.toolset.choose("glob", registry)  # the check is made as the call starts
    refused = session.call("bash", {"command": f"touch {marker}"})
    found = session.call("glob", {"pattern": "*"})

    assert refused.envelope["error_code"] == "TOOL_NOT_FOUND" and not marker.exists()
    assert found.envelope["tool_success"]
    assert list(session.offered()) == ["glob"] and session.id is None
    with pytest.raises(UsageError, match="no model"):
        session.send("hello")
    assert capfd.readouterr() == ("", "")
