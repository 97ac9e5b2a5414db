"""Two ``ask --continue`` on one session at once (issue 21 item 14): each records the turn
it went on from, so the conversation branches; the next ``--continue`` follows the branch
of the latest turn, and ``sessions show`` says where a turn went on from. Two real
processes against the fake provider server."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
from contextlib import closing

import pytest

from ikigai_core.sqlite_store import MIGRATIONS, SqliteStore
from tests.support.replies import REPLIES
from tests.test_sessions import IKIGAI, _user_texts, db_path, invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)
ANSWER_AFTER = 4.0
"""Seconds the server holds each concurrent answer: both processes have read the session
and sent their request before either records its turn."""


def test_two_continues_at_once_branch_and_the_next_follows_one(fake_server, tmp_path):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("First."))
    assert invoke("ask", "--provider", "openai", "--no-stream", "first").exit_code == 0
    fake_server.push(*(dataclasses.replace(replies.reply(text), wait=ANSWER_AFTER)
                       for text in ("Answer A.", "Answer B.")))
    askers = [subprocess.Popen([IKIGAI, "ask", "--continue", "--provider", "openai",
                                "--no-stream", prompt], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for prompt in ("second", "third")]
    ended = [asker.communicate(timeout=60) for asker in askers]
    assert [asker.returncode for asker in askers] == [0, 0], ended
    at_once = [_user_texts(request.json) for request in fake_server.requests[1:]]
    assert sorted(at_once) == [["first", "second"], ["first", "third"]]  # the same parent

    fake_server.push(replies.reply("Fourth."))
    assert invoke("ask", "--continue", "--provider", "openai", "--no-stream",
                  "fourth").exit_code == 0
    session = json.loads(invoke("sessions", "list", "--json").stdout)[0]["id"]
    turns = json.loads(invoke("sessions", "show", session, "--json").stdout)["turns"]
    sent = _user_texts(fake_server.requests[3].json)
    assert sent == ["first", turns[2]["prompt"], "fourth"]  # one branch, never both
    assert [(t["seq"], t["parent"]) for t in turns] == [(0, None), (1, 0), (2, 0), (3, 2)]
    shown = invoke("sessions", "show", session, "--markdown").stdout
    assert f"## Prompt 3 (openai gpt-4o-mini, 15 tokens, <$0.0001, going on from prompt 1)\n\n" \
           f"> {turns[2]['prompt']}\n" in shown
    assert "## Prompt 4 (openai gpt-4o-mini, 15 tokens, <$0.0001)\n\n> fourth\n" in shown


def test_a_log_of_schema_1_is_one_chain_after_the_migration(isolated_home, tmp_path):
    """Turns written before parents were recorded each went on from the one before."""
    with closing(sqlite3.connect(db_path(isolated_home), isolation_level=None)) as db:
        db.executescript(MIGRATIONS[0] + "PRAGMA user_version = 1;")
        db.execute("INSERT INTO sessions VALUES ('old1', 1, 2, ?, 'ask', NULL)",
                   (str(tmp_path),))
        for seq in range(3):
            db.execute("INSERT INTO turns VALUES ('old1', ?, 1, 'openai', 'm', ?, 1, 2, ?, '{}')",
                       (seq, f"p{seq}", json.dumps([{"role": "user", "text": f"p{seq}"}])))
    store = SqliteStore(db_path(isolated_home))
    turns = store.show("old1")["turns"]
    assert [(t["parent"], t["skills"]) for t in turns] == [(None, []), (0, []), (1, [])]
    branch = store.branch("old1", "openai")
    assert (branch.last, [m.text for m in branch.conversation.messages]) == (2, ["p0", "p1", "p2"])
