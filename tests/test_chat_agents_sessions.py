"""Sub-agents in ``ikigai sessions``: ``show`` draws a conversation's tree of children,
``list`` rolls their tokens into the conversation they were forked from (issue 25)."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from ikigai_core.cli import cli
from ikigai_core.conversation import AssistantMessage, Usage, UserMessage
from ikigai_core.sessions import Turn
from ikigai_core.sqlite_store import SqliteStore


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def record(store: SqliteStore, session_id: str, tokens: tuple[int, int], tmp_path, *,
           parent: str | None = None, agent: str | None = None, status: str | None = None,
           fork_turn: int | None = None) -> None:
    """A conversation of one prompt using ``tokens`` (input, output)."""
    if parent is not None:
        store.new_session(session_id, command="agent", cwd=tmp_path, system=None,
                          parent=parent, fork_turn=fork_turn, agent=agent, status=status)
    messages = [UserMessage(f"prompt of {session_id}"),
                AssistantMessage(f"answer of {session_id}", usage=Usage(*tokens))]
    store.add_turn(session_id, Turn(f"prompt of {session_id}", "openai", "m1", messages, {}),
                   command="agent" if parent else "chat", cwd=tmp_path, system=None)


def a_tree(isolated_home, tmp_path) -> SqliteStore:
    """root (100+10) forked reviewer (20+2, done) and scout (30+3, budget_exceeded), which
    forked a grandchild (5+1, killed); 'other' is a conversation without children."""
    store = SqliteStore(isolated_home / "sessions.db")
    record(store, "other", (1, 1), tmp_path)
    record(store, "root", (100, 10), tmp_path)
    record(store, "rev", (20, 2), tmp_path, parent="root", agent="reviewer", status="done",
           fork_turn=0)
    record(store, "scout", (30, 3), tmp_path, parent="root", status="budget_exceeded",
           fork_turn=0)
    record(store, "grand", (5, 1), tmp_path, parent="scout", agent="finder", status="killed")
    return store


def test_sessions_show_draws_the_tree_of_sub_agents(isolated_home, tmp_path):
    a_tree(isolated_home, tmp_path)
    shown = invoke("sessions", "show", "root").stdout
    assert shown.endswith("\n\nSub-agents:\n"
                          "  rev  reviewer  done  22 tokens  (forked after prompt 1)\n"
                          "  scout  agent  budget_exceeded  33 tokens  (forked after prompt 1)\n"
                          "    grand  finder  killed  6 tokens\n")
    assert "Sub-agents" not in invoke("sessions", "show", "other").stdout
    markdown = invoke("sessions", "show", "root", "--markdown").stdout
    assert markdown.endswith("\n## Sub-agents\n\n"
                             "- rev  reviewer  done  22 tokens  (forked after prompt 1)\n"
                             "- scout  agent  budget_exceeded  33 tokens  (forked after "
                             "prompt 1)\n  - grand  finder  killed  6 tokens\n")
    agents = json.loads(invoke("sessions", "show", "root", "--json").stdout)["agents"]
    assert [(a["id"], a["parent"], a["depth"], a["agent"], a["status"]) for a in agents] == [
        ("rev", "root", 1, "reviewer", "done"), ("scout", "root", 1, None, "budget_exceeded"),
        ("grand", "scout", 2, "finder", "killed")]


def test_sessions_list_rolls_the_children_into_the_root(isolated_home, tmp_path):
    a_tree(isolated_home, tmp_path)
    lines = invoke("sessions", "list").stdout.splitlines()
    assert [line.split("  ")[0] for line in lines] == ["root", "other"]
    assert "  1 turn  171 tokens (with 3 sub-agents)  prompt of root" in lines[0]
    assert "  1 turn  2 tokens  prompt of other" in lines[1]
    listed = {s["id"]: s for s in json.loads(invoke("sessions", "list", "--json").stdout)}
    assert set(listed) == {"root", "rev", "scout", "grand", "other"}
    assert listed["root"]["input_tokens"] == 100
    assert listed["root"]["rolled_up"] == {"agents": 3, "input_tokens": 155,
                                           "output_tokens": 16, "cost": None}
    assert listed["scout"]["rolled_up"]["agents"] == 1


def test_a_damaged_parent_loop_neither_hangs_nor_hides_the_sessions(isolated_home, tmp_path):
    a_tree(isolated_home, tmp_path)
    with sqlite3.connect(isolated_home / "sessions.db") as db:
        db.execute("UPDATE sessions SET parent = 'grand' WHERE id = 'root'")
    lines = invoke("sessions", "list").stdout.splitlines()
    assert {line.split("  ")[0] for line in lines} >= {"root", "other"}
    assert "Sub-agents:\n  rev" in invoke("sessions", "show", "root").stdout
