"""The session commands for daily use (issue 27): ``ask --resume``, ``ask --json``'s provider
and model, chat's ``/resume`` and ``/sessions``. Each through ``ikigai`` run as a real process
against the fake provider server."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from ikigai_core import sqlite_store as sessions
from ikigai_core.sessions import SCHEMA_VERSION
from tests.support.replies import REPLIES
from tests.test_session_damage import DAMAGES, damage, one_session
from tests.test_sessions import IKIGAI, a_turn, db_path, invoke, offline

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
    assert listed[0].startswith(f"{second}  ") and listed[0].endswith("  1 turn  15 tokens  <$0.0001  beta")
    assert listed[1].startswith(f"{first}  ") and listed[1].endswith("alpha")
    assert user_texts(fake_server.requests[2].json) == ["alpha", "gamma"]
    # /resume alone: the last conversation here, which gamma just went on with
    assert user_texts(fake_server.requests[3].json) == ["alpha", "gamma", "delta"]
    assert chat.stderr.splitlines() == [
        f"ikigai: continuing session {first} (1 earlier prompts)",
        f"ikigai: continuing session {first} (2 earlier prompts)",
        "ikigai: no session 'nosuch'; `ikigai sessions list` shows them"]


def recorded(home: Path, *prompts: str) -> None:
    """One ``ask`` here per prompt, oldest first, recorded through the store as ``ask``
    records it (for tests whose subject is what reads them)."""
    store = sessions.SqliteStore(db_path(home))
    for number, prompt in enumerate(prompts):
        store.add_turn(f"{number:08x}", a_turn(prompt), command="ask", cwd=Path.cwd(),
                       system=None)


def test_chat_sessions_shows_the_recent_ten(fake_server, isolated_home):
    empty = ikigai("chat", "--provider", "openai", input="/sessions\n")
    assert (empty.returncode, empty.stdout) == (0, "No conversations recorded yet.\n")
    recorded(isolated_home, *(f"question {number}" for number in range(11)))
    shown = ikigai("chat", "--provider", "openai", input="/sessions\n").stdout.splitlines()
    assert len(shown) == 11 and shown[0].endswith("question 10")
    assert shown[-1] == "… 1 more: `ikigai sessions list` shows all"


# -- sessions search ---------------------------------------------------------------------


def searched(*args: str) -> list[dict[str, object]]:
    """``sessions search --json ARGS``'s matches, run in-process (what a real process
    prints is checked on the plain form)."""
    done = invoke("sessions", "search", "--json", *args)
    assert done.exit_code == 0, done.stderr
    return list(json.loads(done.stdout))


def test_search_finds_prompts_answers_and_tool_results(fake_server):
    fake_server.push(
        OPENAI.reply("", [("c1", "bash", {"command": "echo zebra-crossing"})]),
        OPENAI.reply("The tool said so."), OPENAI.reply("Lions roar at dusk."))
    tooled = str(asked("use the tool", "--yes")["session"])
    talked = str(asked("tell me about lions")["session"])
    (hit,) = searched("crossing")  # only in the tool's arguments and output
    assert (hit["session"], hit["turn"]) == (tooled, 0)
    assert "**crossing**" in str(hit["snippet"])
    assert [m["session"] for m in searched("LIONS dusk")] == [talked]  # every word, any case
    assert searched("lions zebra") == []
    assert searched('"unbalanced AND (') == []  # words, never query syntax
    shown = ikigai("sessions", "search", "roar")
    assert shown.returncode == 0 and shown.stderr == ""
    (line,) = shown.stdout.splitlines()
    assert line.startswith(f"{talked}  ") and line.endswith("  prompt 1  tell me about lions Lions **roar** at dusk.")
    none = ikigai("sessions", "search", "nowhere")
    assert (none.returncode, none.stdout, none.stderr) == (
        0, "", "ikigai: nothing recorded matches 'nowhere'\n")
    empty = ikigai("sessions", "search", " ")
    assert (empty.returncode, empty.stderr) == (
        2, "ikigai: sessions search needs some text to look for\n")
    assert ikigai("sessions", "rm", talked).returncode == 0
    assert searched("lions") == []  # gone from the index with the session


SCHEMA_4_COLUMNS = [("turns", "cache_read_tokens"), ("turns", "cache_write_tokens"),
                    ("turns", "cost"), ("sessions", "parent"), ("sessions", "fork_turn"),
                    ("sessions", "agent"), ("sessions", "status")]


def as_schema_2(home: Path) -> None:
    """Make the session log what ikigai wrote before the index: schema 2, no index (nor
    schema 4's columns)."""
    with closing(sqlite3.connect(db_path(home), isolation_level=None)) as db:
        db.executescript("DROP TRIGGER turn_text_add; DROP TRIGGER turn_text_remove; "
                         "DROP TABLE turn_text; PRAGMA user_version = 2;")
        for table, column in SCHEMA_4_COLUMNS:
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


def test_the_migration_indexes_what_was_recorded_before(fake_server, isolated_home):
    fake_server.push(OPENAI.reply("Kept from before."), OPENAI.reply("New."))
    before = asked("an old question")["session"]
    as_schema_2(isolated_home)
    assert [m["session"] for m in searched("kept before")] == [before]
    after = asked("a new question")["session"]  # the trigger indexes it
    assert [m["session"] for m in searched("question")] == [after, before]
    with closing(sqlite3.connect(db_path(isolated_home))) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.mark.parametrize("what", DAMAGES)
def test_damaged_rows_never_break_search(what, fake_server, isolated_home):
    session = one_session(isolated_home)
    damage(isolated_home, *DAMAGES[what])
    for _ in ("indexed before the damage", "indexed from the damaged row"):
        done = invoke("sessions", "search", "hi")
        assert done.exit_code == 0, done.stderr
        assert all(line.startswith(f"{session}  ") for line in done.stdout.splitlines())
        assert done.stderr in ("", "ikigai: nothing recorded matches 'hi'\n")
        as_schema_2(isolated_home)


def test_without_fts5_recording_goes_on_and_search_is_one_line(fake_server, monkeypatch):
    fake_server.push(OPENAI.reply("Answered."))
    real = sessions.has_fts5
    monkeypatch.setattr(sessions, "has_fts5", lambda: False)
    assert invoke("ask", "--provider", "openai", "a question").exit_code == 0
    refused = invoke("sessions", "search", "question")
    assert refused.exit_code == 1 and refused.stdout == ""
    assert refused.stderr == (
        f"ikigai: sessions search needs SQLite's full-text search (FTS5), which this "
        f"Python's SQLite {sqlite3.sqlite_version} lacks; run ikigai with a Python whose "
        "sqlite3 has it\n")
    monkeypatch.setattr(sessions, "has_fts5", real)  # a Python with FTS5 builds the index
    assert json.loads(invoke("sessions", "search", "--json", "question").stdout)[0][
        "snippet"] == "a **question**\nAnswered."


def test_search_limit(fake_server, isolated_home):
    recorded(isolated_home, *(f"same words {number}" for number in range(3)))
    assert len(searched("same words")) == 3
    assert len(searched("same", "--limit", "2")) == 2


# -- sessions show: markdown and plain ----------------------------------------------------


def test_show_markdown_is_markdown_and_plain_is_not(fake_server):
    fake_server.push(OPENAI.reply("", [("c1", "bash", {"command": "echo hi"}),
                                       ("c2", "file_read", {"path": "nothing.txt"})]),
                     OPENAI.reply("Said **hi**.\n\n- one"))
    session = str(asked("greet\nthem", "--yes", "--system", "Be brief.\n# Rules")["session"])
    markdown = ikigai("sessions", "show", session[:6], "--markdown").stdout
    head, system, prompt = markdown.split("\n## ")
    assert head.startswith(f"# Session {session}\n\nask in `")
    assert system == "System prompt\n\n```markdown\nBe brief.\n# Rules\n```\n"  # fenced
    assert prompt.startswith("Prompt 1 (openai gpt-4o-mini, 30 tokens, <$0.0001)\n\n> greet\n> them\n\n"
                             "Tool call `bash` (")
    assert "s):\n\n```sh\necho hi\n```\n\nResult:\n\n```json\n{\n  \"tool_success\": true," \
        in prompt  # the command as a shell block, the result as indented JSON
    assert "Tool call `file_read` (" in prompt and '```json\n{\n  "path": "nothing.txt"\n}\n```' \
        in prompt
    assert prompt.endswith("```\n\nSaid **hi**.\n\n- one\n")  # the model's markdown as is
    assert markdown.count("```") % 2 == 0
    plain = ikigai("sessions", "show", session[:6]).stdout
    assert plain == ikigai("sessions", "show", session[:6], "--plain").stdout != markdown
    assert plain.startswith(f"Session {session}: ask in {Path.cwd()}, ")
    assert "\n\nPrompt 1 (openai gpt-4o-mini, 30 tokens, <$0.0001):\n    greet\n    them\n\n" \
           "Tool bash (" in plain
    assert 's): {"command": "echo hi"}\n  → {"tool_success": true, ' in plain
    assert not any(line.startswith(("#", "```", ">")) for line in plain.splitlines())
    assert plain.endswith("\n\nSaid **hi**.\n\n- one\n")
