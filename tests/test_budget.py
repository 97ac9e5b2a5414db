"""A session's budget (issue 26 §4): ``--max-cost`` / ``max_cost`` stop ``ikigai ask`` with
one line once the priced turns reach it, a model without a known price is refused before
anything is sent (fail closed), and a library :class:`Budget` of turns, tokens or seconds
stops a :class:`Session`, killing running tools, with what was answered kept and recorded.
Against the local fake provider server, with real tools."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time

import pytest

from ikigai_core import App, Budget, BudgetExceeded, Session
from ikigai_core.conversation import ToolResultsMessage
from tests.support.procs import wait_gone
from tests.support.replies import REPLIES
from tests.test_sessions import db_path, invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)
OPENAI = REPLIES["openai"]
TOUCH = ("c1", "bash", {"command": "touch made"})


def test_max_cost_stops_ask_before_the_tools_and_records_the_answered_turn(
        fake_server, isolated_home, tmp_path):
    fake_server.push(OPENAI.reply("Let me look.", [TOUCH]), OPENAI.reply("never asked"))
    ran = invoke("ask", "--provider", "openai", "--no-stream", "--yes",
                 "--max-cost", "0.000000001", "make a file")

    assert ran.exit_code == 1
    [line] = ran.stderr.splitlines()[-1:]
    assert line.startswith("ikigai: BUDGET_EXCEEDED: the cost limit of $1e-09 is reached")
    assert "--max-cost" in line
    assert not (tmp_path / "made").exists()
    assert len(fake_server.requests) == 1
    [listed] = json.loads(invoke("sessions", "list", "--json").stdout)
    [turn] = json.loads(invoke("sessions", "show", "--json", listed["id"]).stdout)["turns"]
    assert "BUDGET_EXCEEDED" in json.dumps(turn["messages"])
    assert turn["output_tokens"] == 5


def test_max_cost_from_config_json_is_kept_too(fake_server, isolated_home, tmp_path):
    (isolated_home / "config.json").write_text(json.dumps({"max_cost": 1e-9}))
    fake_server.push(OPENAI.reply("", [TOUCH]))
    ran = invoke("ask", "--provider", "openai", "--no-stream", "--yes", "make a file")
    assert ran.exit_code == 1 and "BUDGET_EXCEEDED: the cost limit" in ran.stderr
    assert not (tmp_path / "made").exists()


def test_a_cost_cap_under_a_model_with_no_known_price_sends_nothing(fake_server):
    ran = invoke("ask", "--provider", "openai", "--model", "no-such-model-7",
                 "--max-cost", "1", "hello")
    assert ran.exit_code == 1
    assert "no price is known for this model" in ran.stderr.splitlines()[-1]
    assert fake_server.requests == []


def test_a_cap_not_reached_changes_nothing(fake_server):
    fake_server.push(OPENAI.reply("Hi."))
    ran = invoke("ask", "--provider", "openai", "--no-stream", "--max-cost", "5", "hello")
    assert (ran.exit_code, ran.stdout) == (0, "Hi.\n")


@pytest.fixture
def app(fake_server, tmp_path):
    environ = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url}
    return App(environ=environ, cwd=tmp_path)


@pytest.mark.parametrize("budget", [Budget(turns=1), Budget(tokens=15)])
def test_a_turn_or_token_budget_stops_a_session_and_it_goes_on_after(
        app, fake_server, budget, isolated_home):
    fake_server.push(OPENAI.reply("Looking.", [TOUCH]))
    session = Session.open(app, "openai", ask=lambda question: "y", budget=budget)

    with pytest.raises(BudgetExceeded) as stopped:
        session.send("make a file")

    assert stopped.value.limit == ("turns" if budget.turns else "tokens")
    assert not (app.cwd / "made").exists()
    [results] = [m for m in session.exchange if isinstance(m, ToolResultsMessage)]
    assert results.results[0].envelope["error_code"] == "BUDGET_EXCEEDED"
    assert session.usage.total == 15 and session.meter.spent.turns == 1
    with sqlite3.connect(db_path(isolated_home)) as db:
        assert db.execute("select count(*) from turns").fetchone() == (1,)
    with pytest.raises(BudgetExceeded):  # the limit holds for the next prompt: nothing sent
        session.send("again")
    assert len(fake_server.requests) == 1


def test_a_seconds_budget_kills_the_running_tool(app, fake_server, tmp_path):
    pid_file = tmp_path / "pid"
    fake_server.push(OPENAI.reply("", [("c1", "bash", {
        "command": f"echo $$ > {pid_file}; exec sleep 60"})]))
    session = Session.open(app, "openai", ask=lambda question: "y", log=False,
                           budget=Budget(seconds=1.5))
    started = time.monotonic()
    with pytest.raises(BudgetExceeded) as stopped:
        session.send("sleep")

    assert stopped.value.limit == "seconds"
    assert time.monotonic() - started < 15
    assert wait_gone(int(pid_file.read_text()), timeout=10)
    envelope = session.conversation.messages[-1].results[0].envelope
    assert envelope["error_code"] == "BUDGET_EXCEEDED"
    assert threading.active_count() < 10
