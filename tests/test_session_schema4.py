"""Schema 4 of the session log: a turn's cache tokens and cost, a conversation's sub-agent
lineage (the parent conversation, the turn it was forked from, the agent definition) and
state; stored, read back, listed, and added to a log of schema 3."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import replace

import pytest

from ikigai_core.sqlite_store import MIGRATIONS, SCHEMA_VERSION, SqliteStore
from tests.test_sessions import a_turn, db_path


def test_a_turns_cache_tokens_and_cost_are_stored_and_summed(isolated_home, tmp_path):
    store = SqliteStore(db_path(isolated_home))
    for cost in (0.25, 0.5):
        turn = replace(a_turn(), cache_read_tokens=100, cache_write_tokens=7, cost=cost)
        store.add_turn("s1", turn, command="ask", cwd=tmp_path, system=None)
    store.add_turn("s2", a_turn(), command="ask", cwd=tmp_path, system=None)
    (first, _) = store.show("s1")["turns"]
    assert (first["cache_read_tokens"], first["cache_write_tokens"], first["cost"]) == (
        100, 7, 0.25)
    summaries = {s.id: s for s in store.sessions()}
    one, two = summaries["s1"], summaries["s2"]
    assert (one.cache_read_tokens, one.cache_write_tokens, one.cost) == (200, 14, 0.75)
    assert (two.cache_read_tokens, two.cache_write_tokens, two.cost) == (0, 0, None)


def test_a_sub_agents_lineage_and_status_are_stored(isolated_home, tmp_path):
    store = SqliteStore(db_path(isolated_home))
    store.add_turn("main", a_turn(), command="chat", cwd=tmp_path, system=None)
    store.new_session("sub", command="agent", cwd=tmp_path, system="be a reviewer",
                      parent="main", fork_turn=0, agent="reviewer", status="running")
    running = {s.id: s for s in store.sessions()}["sub"]  # listed before its first turn
    assert (running.parent, running.fork_turn, running.agent, running.status, running.turns) == (
        "main", 0, "reviewer", "running", 0)
    store.add_turn("sub", a_turn("review it"), command="agent", cwd=tmp_path,
                   system="be a reviewer")
    store.set_status("sub", "budget_exceeded")
    shown = store.show("sub")
    assert (shown["parent"], shown["fork_turn"], shown["agent"], shown["status"]) == (
        "main", 0, "reviewer", "budget_exceeded")
    assert [t["prompt"] for t in shown["turns"]] == ["review it"]
    main = store.show("main")
    assert (main["parent"], main["fork_turn"], main["agent"], main["status"]) == (
        None, None, None, None)
    with pytest.raises(ValueError, match="status"):
        store.set_status("sub", "asleep")


def test_a_log_of_schema_3_gains_the_columns_and_keeps_its_turns(isolated_home, tmp_path):
    with closing(sqlite3.connect(db_path(isolated_home), isolation_level=None)) as db:
        for step in MIGRATIONS[:3]:
            if callable(step):
                step(db)
            else:
                db.executescript(step)
        db.execute("PRAGMA user_version = 3")
        db.execute("INSERT INTO sessions VALUES ('old', 1, 2, ?, 'ask', NULL)", (str(tmp_path),))
        db.execute("INSERT INTO turns (session_id, seq, created, provider, model, prompt, "
                   "input_tokens, output_tokens, messages, tools) VALUES "
                   "('old', 0, 1, 'openai', 'm', 'p', 3, 4, ?, '{}')",
                   (json.dumps([{"role": "user", "text": "p"}]),))
    store = SqliteStore(db_path(isolated_home))
    (turn,) = store.show("old")["turns"]
    assert (turn["input_tokens"], turn["cache_read_tokens"], turn["cache_write_tokens"],
            turn["cost"]) == (3, 0, 0, None)
    (summary,) = store.sessions()
    assert (summary.turns, summary.cost, summary.parent, summary.status) == (1, None, None, None)
    with closing(sqlite3.connect(db_path(isolated_home))) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
