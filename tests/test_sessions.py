"""The session log (issue 13): every ask and chat conversation in ``$IKIGAI_HOME/sessions.db``,
the ``sessions`` commands, ``--continue``/``--resume``, ``ask --json`` and the prompt on stdin.

Conversations run against the fake provider server with the real tools; concurrency and
crashes use real processes.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikigai_core.cli import cli
from ikigai_core.conversation import (
    AssistantMessage,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.sessions import SCHEMA_VERSION, Turn
from ikigai_core.sqlite_store import SqliteStore
from ikigai_core.tools import Tool
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
TOOL = Tool("echo", "echoes", {"type": "object"}, ("/bin/echo",), "user")


@pytest.fixture(autouse=True)
def offline(monkeypatch, fake_server, tmp_path):
    """Every provider at the fake server with a key; cwd tmp_path."""
    for provider, var in (("OPENAI", "OPENAI"), ("ANTHROPIC", "ANTHROPIC")):
        monkeypatch.setenv(f"{var}_API_KEY", "sk-test")
        monkeypatch.setenv(f"{provider}_BASE_URL", fake_server.url)
    monkeypatch.chdir(tmp_path)


def invoke(*args: str, input: str | None = None):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return result


def db_path(home: Path) -> Path:
    return home / "sessions.db"


def a_turn(prompt: str = "hi", *, calls: int = 1) -> Turn:
    call_list = tuple(ToolCall(f"c{i}", "echo", {"n": i}) for i in range(calls))
    messages = [UserMessage(prompt),
                AssistantMessage("Let me.", call_list, raw={"r": 1}, usage=Usage(10, 5)),
                ToolResultsMessage(tuple(ToolResult(c, {"tool_success": True, "result": {}},
                                                    0.25) for c in call_list)),
                AssistantMessage("Done.", usage=Usage(20, 3))]
    return Turn(prompt, "openai", "m1", messages, {"echo": TOOL})


# -- The store ----------------------------------------------------------------------------


def test_a_turn_is_recorded_and_read_back_whole(isolated_home, tmp_path):
    store = SqliteStore(db_path(isolated_home))
    turn = a_turn()
    store.add_turn("s1", turn, command="chat", cwd=tmp_path, system="be brief")
    data = store.show("s1")
    assert (data["command"], data["cwd"], data["system"]) == ("chat", str(tmp_path), "be brief")
    (recorded,) = data["turns"]
    assert (recorded["provider"], recorded["model"], recorded["prompt"]) == ("openai", "m1", "hi")
    assert (recorded["input_tokens"], recorded["output_tokens"]) == (30, 8)
    assert set(recorded["tools"]) == {"echo"} and len(recorded["tools"]["echo"]) == 64
    assert recorded["tool_calls"] == [{"call_id": "c0", "name": "echo", "arguments": {"n": 0},
                                       "envelope": {"tool_success": True, "result": {}},
                                       "duration": 0.25}]
    conversation = store.branch("s1", "openai").conversation
    assert conversation.system == "be brief"
    assert conversation.messages == list(turn.messages)
    other = store.branch("s1", "anthropic").conversation  # another provider's raw form is dropped
    assert other.messages[1].raw is None and other.messages[1].text == "Let me."


def test_what_cannot_be_stored_as_json_is_left_out(isolated_home, tmp_path):
    store = SqliteStore(db_path(isolated_home))
    turn = Turn("q", "openai", "m", [UserMessage("q"), AssistantMessage("a", raw=object())], {})
    store.add_turn("s1", turn, command="ask", cwd=tmp_path, system=None)
    assert store.branch("s1", "openai").conversation.messages == [UserMessage("q"), AssistantMessage("a")]
    with pytest.raises(UsageError, match="no session 'nosuch'"):
        store.show("nosuch")


@pytest.mark.parametrize(("fields", "usage"), [
    (None, None), ({"in": True, "out": "3"}, None), ({"in": 3}, Usage(3, 0)),
    ({"in": 3, "out": 4}, Usage(3, 4))])
def test_usage_is_read_from_numbers_only(fields, usage):
    assert Usage.read(fields, "in", "out") == usage


def test_the_database_is_user_only_versioned_and_in_wal_mode(isolated_home, tmp_path):
    SqliteStore(db_path(isolated_home)).add_turn("s1", a_turn(), command="ask", cwd=tmp_path,
                                                  system=None)
    assert db_path(isolated_home).stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(db_path(isolated_home)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_newer_schema_is_refused_in_one_line(isolated_home):
    with sqlite3.connect(db_path(isolated_home)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(IkigaiError, match="written by a newer ikigai") as exc:
        SqliteStore(db_path(isolated_home)).sessions()
    assert "\n" not in str(exc.value)


def test_a_file_that_is_not_a_database_is_one_line(isolated_home):
    db_path(isolated_home).write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(IkigaiError, match="move it away") as exc:
        SqliteStore(db_path(isolated_home)).sessions()
    assert "\n" not in str(exc.value)


def test_ids_resolve_by_their_start(isolated_home, tmp_path):
    store = SqliteStore(db_path(isolated_home))
    for session in ("abc111", "abc222", "def333"):
        store.add_turn(session, a_turn(), command="ask", cwd=tmp_path, system=None)
    assert store.resolve("d") == "def333"
    with pytest.raises(UsageError, match="'abc' starts 2 session ids"):
        store.resolve("abc")
    with pytest.raises(UsageError, match="no session 'zzz'"):
        store.resolve("zzz")
    store.remove("def333")
    assert [s.id for s in store.sessions()] == ["abc222", "abc111"]


WRITER = """
import sys
from pathlib import Path
from ikigai_core.sqlite_store import SqliteStore
from tests.test_sessions import a_turn
store = SqliteStore(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    store.add_turn(sys.argv[2], a_turn(f"prompt {i}", calls=int(sys.argv[4])), command="ask",
                   cwd=Path("/"), system=None)
print("started", flush=True)
"""


def _writer(home: Path, session: str, turns: int, calls: int = 3) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(db_path(home)), session,
                             str(turns), str(calls)], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=Path(__file__).parent.parent)


def test_two_processes_logging_at_once_both_land(isolated_home):
    writers = [_writer(isolated_home, name, 40) for name in ("one", "two")]  # a fresh database
    ended = [writer.communicate(timeout=120) for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], ended
    counts = {s.id: s.turns for s in SqliteStore(db_path(isolated_home)).sessions()}
    assert counts == {"one": 40, "two": 40}


def test_a_killed_writer_leaves_whole_turns_only(isolated_home):
    SqliteStore(db_path(isolated_home)).sessions()  # created and migrated
    writer = _writer(isolated_home, "big", 100000, calls=50)
    deadline = time.monotonic() + 30
    with sqlite3.connect(db_path(isolated_home), timeout=30) as db:
        while db.execute("SELECT COUNT(*) FROM turns").fetchone()[0] < 5:
            assert time.monotonic() < deadline and writer.poll() is None
            time.sleep(0.02)
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=20)
    with sqlite3.connect(db_path(isolated_home)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        turns = db.execute("SELECT seq, messages FROM turns").fetchall()
        calls = dict(db.execute("SELECT turn, COUNT(*) FROM tool_calls GROUP BY turn"))
    assert len(turns) >= 5
    for seq, messages in turns:  # every turn has all its calls: none was half written
        assert sum(len(m.get("results", ())) for m in json.loads(messages)) == calls[seq] == 50


# -- Recording ask and chat ---------------------------------------------------------------


def _user_texts(body) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_chat_then_continue_sends_the_earlier_messages(fake_server, isolated_home):
    replies = REPLIES["openai"]
    fake_server.push(
        replies.reply("", [("c1", "bash", {"command": "echo hi"})]), replies.reply("One."),
        replies.reply("Two."), replies.reply("Three."))
    assert invoke("chat", "--yes", "--provider", "openai", "--no-stream",
                  input="first\n").exit_code == 0
    result = invoke("chat", "--continue", "--provider", "openai", "--no-stream", input="second\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Two.\n"
    body = fake_server.requests[2].json
    assert _user_texts(body) == ["first", "second"]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool",
                                                     "assistant", "user"]
    assert body["messages"][0] == fake_server.requests[0].json["messages"][0]  # recorded
    assert invoke("ask", "--continue", "--provider", "openai", "--no-stream",
                  "third").exit_code == 0
    assert _user_texts(fake_server.requests[3].json) == ["first", "second", "third"]
    (session,) = SqliteStore(db_path(isolated_home)).sessions()
    assert session.turns == 3 and session.first_prompt == "first"


def test_show_json_matches_what_was_sent_and_received(fake_server, isolated_home, tmp_path):
    replies = REPLIES["anthropic"]
    fake_server.push(
        replies.reply("Looking.", [("toolu_1", "bash", {"command": "echo hello"})], stream=True),
        replies.reply("It said hello.", stream=True))
    result = invoke("ask", "--yes", "--provider", "anthropic", "--json", "say hello")
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    shown = json.loads(invoke("sessions", "show", answer["session"], "--json").stdout)
    (turn,) = shown["turns"]
    assert turn["prompt"] == "say hello" and turn["provider"] == "anthropic"
    (call,) = turn["tool_calls"]
    sent = fake_server.requests[1].json["messages"]
    assert sent[1]["content"][1]["input"] == call["arguments"] == {"command": "echo hello"}
    assert json.loads(sent[2]["content"][0]["content"]) == call["envelope"]
    assert call["envelope"]["result"]["output"] == "hello"
    assert [m["text"] for m in turn["messages"] if m["role"] == "assistant"] == [
        "Looking.", "It said hello."]
    assert (turn["input_tokens"], turn["output_tokens"]) == (20, 30)
    assert answer["cost"] > 0
    assert answer == {"text": "It said hello.", "session": answer["session"],
                      "provider": "anthropic", "model": answer["model"],
                      "usage": {"input_tokens": 20, "output_tokens": 30,
                                "cache_read_tokens": 0, "cache_write_tokens": 0},
                      "cost": answer["cost"],
                      "tool_calls": [{"id": "toolu_1", "name": "bash",
                                      "arguments": {"command": "echo hello"},
                                      "envelope": call["envelope"],
                                      "duration": call["duration"]}]}


def test_sessions_list_and_rm(fake_server, isolated_home):
    fake_server.push(REPLIES["openai"].reply("A."), REPLIES["openai"].reply("B."))
    invoke("ask", "--provider", "openai", "--model", "m-one", "first question")
    invoke("ask", "--provider", "openai", "--model", "m-two", "second\nquestion")
    listed = json.loads(invoke("sessions", "list", "--json").stdout)
    assert [(s["model"], s["first_prompt"], s["turns"]) for s in listed] == [
        ("m-two", "second\nquestion", 1), ("m-one", "first question", 1)]
    assert listed[0]["input_tokens"] == 10 and listed[0]["output_tokens"] == 5
    lines = invoke("sessions", "list").stdout.splitlines()
    assert lines[0].startswith(listed[0]["id"]) and lines[0].endswith(
        "m-two  1 turn  15 tokens  second\\nquestion")
    removed = invoke("sessions", "rm", listed[0]["id"][:6])
    assert removed.stdout == f"Removed session {listed[0]['id']}.\n"
    assert [s["id"] for s in json.loads(invoke("sessions", "list", "--json").stdout)] == [
        listed[1]["id"]]
    missing = invoke("sessions", "show", "nosuch")
    assert missing.exit_code == 2 and "no session 'nosuch'" in missing.stderr


def test_show_markdown_is_a_transcript(fake_server):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "bash", {"command": "echo hi"})]),
                     replies.reply("Said hi."))
    session = json.loads(invoke("ask", "--yes", "--json", "--provider", "openai",
                                "greet").stdout)["session"]
    text = invoke("sessions", "show", session, "--markdown").stdout
    assert text.startswith(f"# Session {session}\n\nask in `")
    assert "## Prompt 1 (openai gpt-4o-mini, 30 tokens, <$0.0001)\n\n> greet\n" in text
    assert "Tool call `bash` (" in text and "```sh\necho hi\n```" in text
    assert text.endswith("```\n\nSaid hi.\n")


@pytest.mark.parametrize("how", ["flag", "config", "environment"])
def test_no_log_records_nothing(how, fake_server, isolated_home, monkeypatch):
    fake_server.push(REPLIES["openai"].reply("A."))
    args = ["ask", "--provider", "openai", "--json", "q"]
    if how == "flag":
        args.insert(1, "--no-log")
    elif how == "config":
        (isolated_home / "config.json").write_text('{"log": false}')
    else:
        monkeypatch.setenv("IKIGAI_LOG", "false")
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["session"] is None
    assert not db_path(isolated_home).exists()


def test_resume_by_id_and_clear_starts_a_new_session(fake_server, isolated_home):
    replies = REPLIES["openai"]
    fake_server.push(*(replies.reply(t) for t in ("A.", "B.", "C.", "D.")))
    invoke("chat", "--provider", "openai", "--no-stream", input="one\n/clear\ntwo\n")
    older, newer = sorted(SqliteStore(db_path(isolated_home)).sessions(),
                          key=lambda s: s.first_prompt)
    assert (older.first_prompt, newer.first_prompt) == ("one", "two")
    result = invoke("chat", "--resume", older.id[:8], "--provider", "openai", input="three\n")
    assert result.exit_code == 0, result.stderr
    assert _user_texts(fake_server.requests[2].json) == ["one", "three"]
    bad = invoke("chat", "--resume", "nosuch", "--provider", "openai", input="x\n")
    assert bad.exit_code == 2 and "no session 'nosuch'" in bad.stderr


def test_continue_without_an_earlier_conversation_is_one_line(isolated_home):
    result = invoke("ask", "--continue", "--provider", "openai", "q")
    assert result.exit_code == 2
    assert result.stderr == ("ikigai: no earlier conversation in this directory; "
                             "`ikigai sessions list` shows them all\n")


def test_a_log_that_cannot_be_written_is_said_once_and_the_answer_still_comes(
    fake_server, isolated_home
):
    db_path(isolated_home).write_bytes(b"garbage" * 1000)
    fake_server.push(REPLIES["openai"].reply("Still answered."))
    result = invoke("ask", "--provider", "openai", "q")
    assert result.exit_code == 0
    assert result.stdout == "Still answered.\n"
    assert result.stderr.count("this conversation is not recorded") == 1


# -- Scripts ------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["-"], []], ids=["dash", "missing"])
def test_the_prompt_is_read_from_stdin(args, fake_server, tmp_path):
    fake_server.push(REPLIES["openai"].reply("Read it."), REPLIES["openai"].reply("Again."))
    result = invoke("ask", "--provider", "openai", *args, input="a question\nover two lines\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Read it.\n"
    assert _user_texts(fake_server.requests[0].json) == ["a question\nover two lines\n"]
    done = subprocess.run([IKIGAI, "ask", "--provider", "openai", *args], input="piped\n",
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout) == (0, "Again.\n")


def test_an_empty_prompt_on_stdin_is_a_usage_error(tmp_path):
    done = subprocess.run([IKIGAI, "ask", "--provider", "openai", "-"], input="",
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stderr) == (
        2, "ikigai: the prompt read from stdin is empty; pass PROMPT or pipe some text\n")


WRITER = textwrap.dedent(WRITER)
