"""The session log's guarantees, once per store (SQLite, and PostgreSQL on a real server):
whole turns read back, sub-agent records, ids, search, removal, concurrent and killed
writers, and ``ask``/``chat``/``--continue``/``sessions`` through ``IKIGAI_SESSIONS_URL``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ikigai_core.errors import UsageError
from tests.support.asks import asks_at_once
from tests.support.replies import REPLIES
from tests.test_sessions import _user_texts, a_turn, invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)
ROOT = Path(__file__).parent.parent.parent


def test_a_turn_is_read_back_whole(store, tmp_path):
    turn = replace(a_turn(), cache_read_tokens=9, cache_write_tokens=2, cost=0.125)
    assert store.add_turn("s1", turn, command="chat", cwd=tmp_path, system="be brief") == 0
    data = store.show("s1")
    assert (data["command"], data["cwd"], data["system"], data["status"]) == (
        "chat", str(tmp_path), "be brief", None)
    (recorded,) = data["turns"]
    assert (recorded["input_tokens"], recorded["output_tokens"], recorded["cache_read_tokens"],
            recorded["cache_write_tokens"], recorded["cost"]) == (30, 8, 9, 2, 0.125)
    assert recorded["tool_calls"] == [{"call_id": "c0", "name": "echo", "arguments": {"n": 0},
                                       "envelope": {"tool_success": True, "result": {}},
                                       "duration": 0.25}]
    assert store.branch("s1", "openai").conversation.messages == list(turn.messages)
    (summary,) = store.sessions()
    assert (summary.id, summary.turns, summary.input_tokens, summary.cache_read_tokens,
            summary.cost, summary.first_prompt) == ("s1", 1, 30, 9, 0.125, "hi")


def test_sub_agents_ids_and_removal(store, tmp_path):
    for session in ("abc111", "abc222", "def333"):
        store.add_turn(session, a_turn(), command="ask", cwd=tmp_path, system=None)
    store.new_session("sub1", command="agent", cwd=tmp_path / "elsewhere", system=None,
                      parent="abc111", fork_turn=0, agent="reviewer", status="running")
    store.set_status("sub1", "done")
    sub = {s.id: s for s in store.sessions()}["sub1"]
    assert (sub.parent, sub.fork_turn, sub.agent, sub.status, sub.turns) == (
        "abc111", 0, "reviewer", "done", 0)
    assert store.ids() == ["abc111", "abc222", "def333", "sub1"]
    assert store.resolve("d") == "def333" and store.last_in(tmp_path) == "def333"
    with pytest.raises(UsageError, match="'abc' starts 2 session ids"):
        store.resolve("abc")
    store.remove("def333")
    assert [s.id for s in store.sessions()] == ["sub1", "abc222", "abc111"]
    assert store.rows("def333") is None


def test_going_on_from_an_earlier_turn_branches(store, tmp_path):
    for parent in (None, 0, 0):
        store.add_turn("s", a_turn(f"after {parent}"), command="chat", cwd=tmp_path,
                       system=None, parent=parent)
    branch = store.branch("s", "openai")
    assert branch.last == 2
    assert [m.text for m in branch.conversation.messages if m.__class__.__name__ ==
            "UserMessage"] == ["after None", "after 0"]


def test_search_needs_every_word_and_marks_them(store, tmp_path):
    store.add_turn("lions", a_turn("where do lions sleep"), command="ask", cwd=tmp_path,
                   system=None)
    store.add_turn("tigers", a_turn("where do tigers sleep"), command="ask", cwd=tmp_path,
                   system=None)
    (match,) = store.search("lions sleep", limit=5)
    assert (match.session, match.turn) == ("lions", 0)
    assert "**lions**" in match.snippet and "**sleep**" in match.snippet
    assert {m.session for m in store.search("sleep", limit=5)} == {"lions", "tigers"}
    assert len(store.search("sleep", limit=1)) == 1
    assert [m.session for m in store.search("echo", limit=5)] != []  # a tool call's name
    store.remove("lions")
    assert [m.session for m in store.search("lions", limit=5)] == []
    with pytest.raises(UsageError, match="needs some text"):
        store.search("  ", limit=5)


WRITER = """
import sys
from pathlib import Path
from tests.stores.conftest import store_at
from tests.test_sessions import a_turn
store = store_at(sys.argv[1], Path("/nonexistent"))
for i in range(int(sys.argv[3])):
    store.add_turn(sys.argv[2], a_turn(f"prompt {i}", calls=int(sys.argv[4])), command="ask",
                   cwd=Path("/"), system=None)
"""


def _writer(url: str, session: str, turns: int, calls: int = 3) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, url, session, str(turns),
                             str(calls)], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)


def test_writers_to_one_conversation_at_once_all_land(store_url, store):
    writers = [_writer(store_url, "one", 20) for _ in range(3)]  # a fresh store: all migrate
    ended = [writer.communicate(timeout=120) for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0], ended
    data = store.show("one")
    assert [t["seq"] for t in data["turns"]] == list(range(60))


def test_a_killed_writer_leaves_whole_turns_only(store_url, store):
    store.sessions()  # created and migrated
    writer = _writer(store_url, "big", 100000, calls=50)
    deadline = time.monotonic() + 60
    while (len(store.ids()) == 0 or store.sessions()[0].turns < 5):
        assert time.monotonic() < deadline and writer.poll() is None
        time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=20)
    rows = store.rows("big")
    assert rows is not None and len(rows.turns) >= 5
    calls: dict[int, int] = {}
    for call in rows.calls:
        calls[call["turn"]] = calls.get(call["turn"], 0) + 1
    for turn in rows.turns:  # every turn has all its calls: none was half written
        messages = json.loads(turn["messages"])
        assert sum(len(m.get("results", ())) for m in messages) == calls[turn["seq"]] == 50


def test_ask_chat_continue_and_the_sessions_commands(store_url, fake_server, isolated_home):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "bash", {"command": "echo lions"})]),
                     replies.reply("One."), replies.reply("Two."), replies.reply("Three."))
    assert invoke("chat", "--yes", "--provider", "openai", "--no-stream",
                  input="first\n").exit_code == 0
    result = invoke("chat", "--continue", "--provider", "openai", "--no-stream",
                    input="second\n")
    assert result.exit_code == 0, result.stderr
    assert _user_texts(fake_server.requests[2].json) == ["first", "second"]
    (listed,) = json.loads(invoke("sessions", "list", "--json").stdout)
    assert (listed["turns"], listed["first_prompt"]) == (2, "first")
    resumed = invoke("ask", "--resume", listed["id"][:5], "--provider", "openai", "third")
    assert resumed.exit_code == 0, resumed.stderr
    assert _user_texts(fake_server.requests[3].json) == ["first", "second", "third"]
    shown = json.loads(invoke("sessions", "show", listed["id"], "--json").stdout)
    assert [t["prompt"] for t in shown["turns"]] == ["first", "second", "third"]
    found = invoke("sessions", "search", "lions")
    assert found.stdout.startswith(f"{listed['id']}  ") and "**lions**" in found.stdout
    assert invoke("sessions", "rm", listed["id"]).exit_code == 0
    assert json.loads(invoke("sessions", "list", "--json").stdout) == []
    assert not (isolated_home / "sessions.db").exists()  # nothing in the default store


@pytest.mark.parametrize("count", [4, pytest.param(100, marks=[pytest.mark.slow,
                                                               pytest.mark.timeout(900)])])
def test_many_asks_at_once_all_land(count, store_url, store, fake_server):
    """``count`` asks at once to one store: each lands, none fails on a lock. Four already
    race each other (the default run); 100 is the load case, run with ``-m slow``."""
    loaded = {**os.environ, "IKIGAI_HTTP_TIMEOUT": "600"}  # a busy machine is slow, not wrong
    _, ended = asks_at_once(fake_server, loaded, count)
    problems = [r.stderr for r in ended if r.returncode != 0 or r.stderr]
    assert problems == [], problems[:3]  # no lock error, no "not recorded"
    summaries = store.sessions()
    assert sorted(s.first_prompt for s in summaries) == sorted(f"q{i}" for i in range(count))
    assert all(s.turns == 1 for s in summaries)
