"""The sub-agent runtime from Python (issue 25): children on threads, the running cap,
the depth limit, budgets, usage roll-up, send, wait, kill, and the root's cancel; a real
provider plugin against a local scripted model, real tools as subprocesses."""

from __future__ import annotations

import json
import os
import time

import pytest

from ikigai_core import App, Session
from ikigai_core.errors import UsageError
from ikigai_core.orchestration import Supervisor, parse_budget
from tests.support.agents import AgentModel, scripted_models
from tests.support.procs import pid_written, wait_gone
from tests.test_cli_agent import advertised
from tests.test_system_prompt import greeter

TIMEOUT = 30


@pytest.fixture
def model():
    with scripted_models() as make:
        yield make


def slowly(text: str, seconds: float):
    """A turn answering ``text`` after ``seconds`` (the server waits, not its lock)."""
    from dataclasses import replace

    from pytest_ikigai.replies import REPLIES

    return lambda request: replace(REPLIES["openai"].reply(
        text, stream=request.json.get("stream") is True), wait=seconds)


def _root(model: AgentModel, tmp_path, *, ask=None, **options) -> Supervisor:
    import os

    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    session = Session.open(app, "openai", ask=ask, log=False)
    return Supervisor(session, **options)


def test_three_children_run_at_once_and_wait_returns_their_answers(model, tmp_path):
    m = model({f"task {i}": [f"answer {i}"] for i in range(3)})
    sup = _root(m, tmp_path)
    ids = [sup.fork(f"task {i}") for i in range(3)]

    results = sup.wait(ids, TIMEOUT)

    assert [(r.id, r.status, r.output) for r in results] == [
        (ids[i], "done", f"answer {i}") for i in range(3)]
    assert all(r.usage.total == 15 and r.truncated is None for r in results)
    assert sup.root.live.usage.total == 45  # rolled up into the root session
    assert sup.usage()["children"]["total"] == 45
    sup.close()


def test_each_count_of_a_childs_tokens_is_told_as_it_runs(model, tmp_path, approve_all):
    """The front end hears a ``usage`` event as each of a running child's model turns is
    counted (the chat's status line redraws on it), not only when the child ends."""
    m = model({"work": [[("bash", {"command": "true"})], "worked"]})
    sup = _root(m, tmp_path)
    heard: list[tuple[str, str, int]] = []
    sup.on_event = lambda e: heard.append((e.kind, e.status, sup.root.live.usage.total))

    [result] = sup.wait([sup.fork("work")], TIMEOUT)

    assert result.output == "worked"
    assert heard == [("started", "running", 0), ("usage", "running", 15),
                     ("usage", "running", 30), ("ended", "done", 30)]
    sup.close()


def test_the_running_cap_queues_further_forks_in_order(model, tmp_path):
    m = model({"slow 0": [slowly("slow done", 0.5)], "slow 1": [slowly("slow done", 0.5)],
               "quick": ["quick done"]})
    sup = _root(m, tmp_path, max_running=2)
    first = [sup.fork("slow 0"), sup.fork("slow 1")]
    queued = sup.fork("quick")

    assert {i.id: i.status for i in sup.list()}[queued] == "queued"
    [result] = sup.wait([queued], TIMEOUT)
    assert result.status == "done"
    first_slow = min(m.seen["slow 0"], m.seen["slow 1"])
    assert m.seen["quick"] - first_slow >= 0.45  # it started only once a slot was free
    assert all(r.status == "done" for r in sup.wait(first, TIMEOUT))
    sup.close()


def test_the_depth_limit_refuses_a_fork_too_deep(model, tmp_path):
    m = model({"child": ["hi"]})
    sup = _root(m, tmp_path, max_depth=1)
    child = sup.fork("child")
    with pytest.raises(UsageError, match="depth 1, the deepest allowed"):
        sup.fork("grandchild", caller=child)
    sup.close()


@pytest.mark.parametrize(("budget", "script", "why"), [
    ({"turns": 1}, [[("glob", {"pattern": "*"})], "never"], "the turns limit of 1 turns"),
    ({"tokens": 20}, [[("glob", {"pattern": "*"})], [("glob", {"pattern": "*"})], "never"],
     "the tokens limit of 20 tokens is reached (30 tokens spent)"),
])
def test_a_child_over_its_turns_or_tokens_stops_with_budget_exceeded(
        model, tmp_path, budget, script, why):
    m = model({"work": script})
    sup = _root(m, tmp_path)
    [result] = sup.wait([sup.fork("work", budget=budget)], TIMEOUT)
    assert result.status == "budget_exceeded"
    assert result.error.startswith("BUDGET_EXCEEDED: ") and why in result.error
    sup.close()


def test_a_child_over_its_seconds_stops_and_its_tool_is_killed(
        model, tmp_path, approve_all):
    pid_file = tmp_path / "pid"
    m = model({"sleep": [[("bash", {"command": f"echo $$ > {pid_file}; exec sleep 60"})],
                         "never"]})
    sup = _root(m, tmp_path)
    started = time.monotonic()
    [result] = sup.wait([sup.fork("sleep", budget={"seconds": 1})], TIMEOUT)
    assert result.status == "budget_exceeded" and "the seconds limit" in result.error
    assert time.monotonic() - started < 10
    assert wait_gone(pid_written(pid_file), timeout=10)
    sup.close()


def test_a_parents_token_budget_caps_its_descendants_total(model, tmp_path):
    m = model({"parent": [[("glob", {"pattern": "*"})], "never"],
               "kid": [[("glob", {"pattern": "*"})], [("glob", {"pattern": "*"})], "kid done"]})
    sup = _root(m, tmp_path)
    parent = sup.fork("parent", budget={"tokens": 40})
    kid = sup.fork("kid", caller=parent)  # 45 tokens alone: over its parent's 40
    results = {r.id: r for r in sup.wait([parent, kid], TIMEOUT)}
    assert results[parent].status == "budget_exceeded"
    assert results[kid].status == "budget_exceeded"
    sup.close()


def test_kill_mid_tool_cascades_and_leaves_no_process(model, tmp_path, approve_all):
    pids = tmp_path / "pids"
    pids.mkdir()
    def sleeping(name):
        return [("bash", {"command": f"echo $$ > {pids}/{name}; exec sleep 60"})]

    m = model({"parent": [sleeping("parent"), "never"], "kid": [sleeping("kid"), "never"]})
    sup = _root(m, tmp_path)
    parent = sup.fork("parent")
    kid = sup.fork("kid", caller=parent)
    deadline = time.monotonic() + TIMEOUT
    while len([p for p in pids.iterdir() if p.read_text().endswith("\n")]) < 2:
        assert time.monotonic() < deadline, "the tools never started"
        time.sleep(0.05)

    info = sup.kill(parent)

    assert info.status == "killed"
    assert [r.status for r in sup.wait([parent, kid], TIMEOUT)] == ["killed", "killed"]
    assert all(wait_gone(int(p.read_text()), timeout=10) for p in pids.iterdir())
    with pytest.raises(UsageError, match="killed; it takes no more messages"):
        sup.send(kid, "go on")
    sup.close()


def held(started, gate, name: str):
    """A turn calling bash that writes its pid to ``started/name`` and runs until the
    test creates ``gate``."""
    return [("bash", {"command": f"echo $$ > {started}/{name}; "
                      f"while [ ! -e {gate} ]; do sleep 0.05; done; echo {name} ran"})]


def test_killing_a_child_mid_tool_leaves_its_siblings_tool_running(model, tmp_path, approve_all):
    started, gate = tmp_path / "started", tmp_path / "gate"
    started.mkdir()
    m = model({"doomed": [held(started, gate, "doomed"), "never"],
               "sibling": [held(started, gate, "sibling"), "sibling done"]})
    sup = _root(m, tmp_path)
    doomed, sibling = sup.fork("doomed"), sup.fork("sibling")
    deadline = time.monotonic() + TIMEOUT
    while len([p for p in started.iterdir() if p.read_text().endswith("\n")]) < 2:
        assert time.monotonic() < deadline, "the tools never started"
        time.sleep(0.05)

    sup.kill(doomed)
    gate.touch()

    assert wait_gone(int((started / "doomed").read_text()), timeout=10)
    assert [(r.status, r.output) for r in sup.wait([sibling], TIMEOUT)] == [
        ("done", "sibling done")]
    [tool] = [msg for r in m.server.requests for msg in r.json["messages"]
              if msg["role"] == "tool"]  # the sibling's: the doomed asked nothing more
    assert '"tool_success": true' in tool["content"] and "sibling ran" in tool["content"]
    sup.close()


def test_send_gives_a_done_child_its_next_prompt_with_its_history(model, tmp_path):
    m = model({"first": ["one", "two"]})
    sup = _root(m, tmp_path)
    child = sup.fork("first")
    assert sup.wait([child], TIMEOUT)[0].output == "one"
    sup.send(child, "second")
    assert sup.wait([child], TIMEOUT)[0].output == "two"
    sent = m.server.requests[-1].json["messages"]
    assert [msg["content"] for msg in sent if msg["role"] == "user"] == ["first", "second"]
    sup.close()


def test_wait_any_returns_when_one_is_done_and_a_timeout_says_running(model, tmp_path):
    m = model({"fast": ["fast done"], "slow": [slowly("late", TIMEOUT)]})
    sup = _root(m, tmp_path)
    fast, slow = sup.fork("fast"), sup.fork("slow")
    results = {r.id: r.status for r in sup.wait([fast, slow], TIMEOUT, mode="any")}
    assert results == {fast: "done", slow: "running"}
    assert [r.status for r in sup.wait([slow], 0.1)] == ["running"]
    m.close()  # the slow answer comes now, however long the fast one took
    assert [(r.status, r.output) for r in sup.wait([slow], TIMEOUT)] == [("done", "late")]
    sup.close()


def test_a_long_answer_is_cut_with_head_tail_and_truncated(model, tmp_path):
    long = "A" * 5000 + "B" * 5000
    m = model({"long": [long]})
    sup = _root(m, tmp_path)
    [result] = sup.wait([sup.fork("long")], TIMEOUT, max_output=1000)
    assert result.truncated == {"total_bytes": 10000, "kept_bytes": len(result.output)}
    assert result.output.startswith("AAA") and result.output.endswith("BBB")
    assert len(result.output.encode()) <= 1000
    sup.close()


def test_an_agent_cannot_touch_another_agents_children(model, tmp_path):
    m = model({"a": ["a"], "b": ["b"], "a-kid": ["k"]})
    sup = _root(m, tmp_path)
    a, b = sup.fork("a"), sup.fork("b")
    kid = sup.fork("a-kid", caller=a)
    for action in (lambda: sup.kill(kid, caller=b), lambda: sup.send(kid, "x", caller=b),
                   lambda: sup.wait([kid], 1, caller=b), lambda: sup.kill(a, caller=a)):
        with pytest.raises(UsageError, match="below"):
            action()
    assert [i.id for i in sup.list(caller=a)] == [kid]
    assert sup.list(caller=b) == []
    sup.close()


def test_history_all_gives_the_child_the_answered_exchanges(model, tmp_path):
    m = model({"earlier": ["earlier answer", "child answer"]})  # the child's starts so
    sup = _root(m, tmp_path)
    sup.root.live.send("earlier")
    child = sup.fork("now", history="all")
    assert sup.wait([child], TIMEOUT)[0].output == "child answer"
    sent = m.server.requests[-1].json["messages"]
    assert [msg["content"] for msg in sent if msg["role"] != "system"] == [
        "earlier", "earlier answer", "now"]
    sup.close()


def _child_tools(sup: Supervisor, m: AgentModel, prompt: str, **fork) -> list[str]:
    """The tools the child forked with ``fork`` sends in its request."""
    child = sup.fork(prompt, **fork)
    assert sup.wait([child], TIMEOUT)[0].status == "done"
    return advertised("openai", m.server.requests[-1].json)


def test_a_child_has_the_tools_of_the_skills_its_history_carries_within_its_limit(
        model, tmp_path, isolated_home, make_tool):
    """A skill the parent loaded comes to a child with its instructions (history), its
    tools with it; the child's ``tools`` bound them, and never reach past the parent's."""
    greeter(isolated_home, make_tool)  # a skill bringing `greet`, a tool of its own
    loading = [[("load_skill", {"name": "greeter"})], "Loaded."]
    m = model({"load the greeter": [*loading, *["child answer"] * 3], "fresh": ["ok"]})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    sup = Supervisor(Session.open(app, "openai", tools="file_read,load_skill", log=False))
    sup.root.live.send("load the greeter")
    sends = ["file_read", "greet", "load_skill"]
    assert advertised("openai", m.server.requests[-1].json) == sends

    assert _child_tools(sup, m, "now", history="all") == sends
    assert _child_tools(sup, m, "fresh") == ["file_read", "load_skill"]  # no skill, no tools
    assert _child_tools(sup, m, "now", history="all", tools=["greet"]) == ["greet"]
    assert _child_tools(sup, m, "now", history="all", tools=["file_read", "bash"]) == [
        "file_read"]  # not greet: outside its limit; not bash: the parent cannot send it
    sup.close()


def test_a_skill_in_the_parents_system_prompt_brings_its_tools_to_a_child(
        model, tmp_path, isolated_home, make_tool):
    greeter(isolated_home, make_tool)
    m = model({"fresh": ["ok"]})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    session = Session.open(app, "openai", tools="file_read", skills=["greeter"], log=False)
    sup = Supervisor(session)  # a child given its parent's system prompt has the skill's text
    assert _child_tools(sup, m, "fresh") == ["file_read", "greet"]
    sup.close()


def test_cancelling_the_root_stops_the_children_of_its_turn(model, tmp_path):
    m = model({"kid": [slowly("late", 2)]})
    sup = _root(m, tmp_path)
    kid = sup.fork("kid")
    sup.root.live.cancel()
    assert sup.wait([kid], TIMEOUT)[0].status == "killed"
    sup.close()


def test_bad_arguments_are_one_line_errors(model, tmp_path):
    sup = _root(model({}), tmp_path)
    for call, message in [
        (lambda: sup.fork(""), "non-empty prompt"),
        (lambda: sup.fork("x", budget={"tokens": -1}), "budget.tokens must be a positive"),
        (lambda: sup.fork("x", budget={"dollars": 1}), "unknown key 'dollars'"),
        (lambda: sup.fork("x", history="some"), "history must be"),
        (lambda: sup.fork("x", history=-1), "history must be"),
        (lambda: sup.fork("x", history=True), "history must be"),
        (lambda: sup.wait(["nope"], 1), "no agent 'nope'"),
        (lambda: sup.wait([], 1, mode="most"), "mode must be"),
        (lambda: sup.fork("x", agent="reviewer"), "unknown agent 'reviewer'"),
        (lambda: sup.fork("x", tools=["bash", 3]), "fork tools must be a list of tool names"),
        (lambda: sup.wait([], -1), "wait timeout must be a number of seconds >= 0"),
        (lambda: sup.wait([], float("nan")), "wait timeout must be a number of seconds >= 0"),
        (lambda: sup.send("agent-1", " "), "send needs a non-empty message"),
        (lambda: sup.send("nope", "hi"), "no agent 'nope'"),
    ]:
        with pytest.raises(UsageError, match=message):
            call()
    assert parse_budget({"seconds": 1.5, "cost": None}).seconds == 1.5
    sup.close()
    with pytest.raises(UsageError, match="it cannot fork"):
        sup.fork("after the end")


def test_the_tree_keeps_the_last_ended_agents_and_still_counts_the_rest(
        model, tmp_path, monkeypatch):
    """A run that forks thousands keeps a bounded tree: past KEEP_ENDED ended agents the
    oldest are forgotten, and their tokens stay in every total."""
    from ikigai_core.orchestration import supervisor

    monkeypatch.setattr(supervisor, "KEEP_ENDED", 2)
    m = model({"kid": ["kid done"]})
    sup = _root(m, tmp_path)
    ids = []
    for _ in range(5):
        ids.append(sup.fork("kid"))
        sup.wait(ids[-1:], TIMEOUT)
        sup.kill(ids[-1])
    live = sup.fork("kid")
    sup.wait([live], TIMEOUT)

    assert [(a.id, a.status) for a in sup.list()] == [
        (ids[3], "killed"), (ids[4], "killed"), (live, "done")]
    assert sup.usage()["children"]["total"] == 6 * 15  # 15 tokens a scripted answer
    assert sup.root.live.usage.total == 6 * 15
    with pytest.raises(UsageError, match=f"no agent '{ids[0]}'"):
        sup.wait([ids[0]], 1)
    sup.close()


# -- Paths of the API no other test takes (issue 25's audit, gap 6) ---------------------------


def _for_session(model: AgentModel, tmp_path) -> Supervisor:
    """A supervisor as ``ask`` and ``chat`` make it: the settings and agent definitions of
    the test's ``$IKIGAI_HOME``."""
    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    return Supervisor.for_session(Session.open(app, "openai", log=False))


def test_send_with_interrupt_kills_the_tool_drops_the_exchange_and_answers_the_next(
        model, tmp_path, approve_all):
    pid_file = tmp_path / "pid"
    m = model({"slow": [[("bash", {"command": f"echo $$ > {pid_file}; exec sleep 60"})],
                        "never"],
               "next": ["next answered"]})
    sup = _root(m, tmp_path)
    child = sup.fork("slow")
    tool = pid_written(pid_file)

    sup.send(child, "next", interrupt=True)

    [result] = sup.wait([child], TIMEOUT)
    assert (result.status, result.output, result.error) == ("done", "next answered", None)
    assert wait_gone(tool, timeout=10), "the interrupted tool still runs"
    sent = m.server.requests[-1].json["messages"]  # the slow exchange is not in it
    assert [(msg["role"], msg["content"]) for msg in sent if msg["role"] != "system"] == [
        ("user", "next")]
    sup.close()


def test_kill_without_cascade_stops_the_child_and_its_own_child_runs_on(
        model, tmp_path, approve_all):
    started, gate = tmp_path / "started", tmp_path / "gate"
    started.mkdir()
    m = model({"parent": [held(started, gate, "parent"), "never"],
               "kid": [held(started, gate, "kid"), "kid done"]})
    sup = _root(m, tmp_path)
    parent = sup.fork("parent")
    kid = sup.fork("kid", caller=parent)
    pids = {name: pid_written(started / name) for name in ("parent", "kid")}

    info = sup.kill(parent, cascade=False)

    assert info.status == "killed"
    assert wait_gone(pids["parent"], timeout=10)
    assert {a.id: a.status for a in sup.list()} == {parent: "killed", kid: "running"}
    gate.touch()  # the kid's tool was never killed: it ends on its own
    [result] = sup.wait([kid], TIMEOUT)
    assert (result.status, result.output) == ("done", "kid done")
    assert sup.usage()["children"]["total"] == 3 * 15  # the parent's turn, the kid's two
    sup.close()


def test_history_n_gives_the_child_the_parents_last_n_answered_messages(model, tmp_path):
    m = model({"earlier": ["earlier answer", "second answer", "child of 4"],
               "second": ["unused", "child of 2"], "now": ["child of 0"]})
    sup = _root(m, tmp_path)
    sup.root.live.send("earlier")
    sup.root.live.send("second")

    def first_request(history: int) -> list[str]:
        child = sup.fork("now", history=history)
        assert sup.wait([child], TIMEOUT)[0].status == "done"
        return [msg["content"] for msg in m.server.requests[-1].json["messages"]
                if msg["role"] != "system"]

    assert first_request(2) == ["second", "second answer", "now"]
    assert first_request(3) == ["second", "second answer", "now"]  # it starts at a user's
    assert first_request(4) == ["earlier", "earlier answer", "second", "second answer", "now"]
    assert first_request(40) == first_request(4)  # more than there are: all of them
    assert first_request(0) == ["now"]
    sup.close()


def test_a_definition_gives_a_fork_its_system_prompt_tools_model_and_max_turns(
        model, tmp_path, isolated_home, approve_all):
    (isolated_home / "agents").mkdir()
    (isolated_home / "agents" / "reviewer.md").write_text(
        "---\ndescription: Reviews a file.\ntools: [file_read, glob]\nmodel: gpt-4.1-nano\n"
        "max_turns: 1\n---\nYou review files, briefly.\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    m = model({"review a.py": [[("file_read", {"file_path": "a.py"})], "never reached"]})
    sup = _for_session(m, tmp_path)

    [result] = sup.wait([sup.fork("review a.py", agent="reviewer")], TIMEOUT)

    [request] = [r.json for r in m.server.requests]  # max_turns 1: no second request
    assert request["messages"][0] == {"role": "system", "content": "You review files, briefly."}
    assert request["model"] == "gpt-4.1-nano"
    assert advertised("openai", request) == ["file_read", "glob"]
    assert result.status == "failed" and result.error.startswith("stopped after 1 turn")
    assert [a.name for a in sup.list()] == ["reviewer"]
    sup.close()


def test_the_settings_reach_the_runtime_through_for_session(model, tmp_path, isolated_home):
    (isolated_home / "config.json").write_text(json.dumps({
        "agents_max_running": 1, "agents_max_depth": 1, "agents_budget_turns": 1,
        "agents_budget_tokens": 20, "agents_budget_seconds": 0.5}))
    glob = [("glob", {"pattern": "*"})]
    m = model({"slow": [slowly("slow done", 0.5)], "work": [glob, glob, "never"],
               "late": [slowly("too late", TIMEOUT)]})
    sup = _for_session(m, tmp_path)
    slow = sup.fork("slow", budget={"seconds": TIMEOUT})
    turns = sup.fork("work")
    tokens = sup.fork("work", budget={"turns": 5})  # its own turns; the settings' tokens
    late = sup.fork("late")

    assert {a.id: a.status for a in sup.list()} == {
        slow: "running", turns: "queued", tokens: "queued", late: "queued"}
    with pytest.raises(UsageError, match="agents_max_depth is 1"):
        sup.fork("deeper", caller=slow)
    results = {r.id: r for r in sup.wait([slow, turns, tokens, late], TIMEOUT)}
    assert results[slow].status == "done"
    assert [results[i].status for i in (turns, tokens, late)] == ["budget_exceeded"] * 3
    assert "the turns limit of 1 turns" in results[turns].error
    assert "the tokens limit of 20 tokens" in results[tokens].error
    assert "the seconds limit of 0.5" in results[late].error
    sup.close()


def test_the_root_sessions_cost_limit_caps_its_children(model, tmp_path):
    """``--max-cost`` (the root session's budget) holds the sub-agents' dollars too: a child
    is stopped once the tree reaches it, and the root sends nothing more."""
    from ikigai_core.budget import Budget, BudgetExceeded
    from ikigai_core.conversation import Usage
    from ikigai_core.prices import cost_of

    m = model({"kid": [[("glob", {"pattern": "*"})]] * 10 + ["kid done"], "more": ["never"]})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    session = Session.open(app, "openai", log=False,
                           budget=Budget(cost=3.5 * cost_of("openai", "gpt-4o-mini",
                                                            Usage(10, 5))))
    sup = Supervisor(session)

    [result] = sup.wait([sup.fork("kid")], TIMEOUT)

    assert result.status == "budget_exceeded"
    assert result.error.startswith("BUDGET_EXCEEDED: the cost limit of $")
    assert result.error.endswith("(with its sub-agents)")
    assert result.usage.total <= 5 * 15  # stopped at its 4th or 5th turn, not its 11th
    with pytest.raises(BudgetExceeded, match="the cost limit"):
        session.send("more")
    assert "more" not in m.first_prompts()
    sup.close()


def test_a_child_stopped_by_its_turn_limit_is_told_what_sets_it(model, tmp_path, isolated_home):
    (isolated_home / "agents").mkdir()
    (isolated_home / "agents" / "scout.md").write_text(
        "---\ndescription: Scouts.\nmax_turns: 1\n---\nYou scout.\n")
    read = [("file_read", {"file_path": "missing.txt"})]
    m = model({"by definition": [read, "never"], "by setting": [read, read, "never"]})
    app = App(environ={**os.environ, **m.environ, "IKIGAI_MAX_TURNS": "2"}, cwd=tmp_path)
    sup = Supervisor.for_session(Session.open(app, "openai", max_turns=50, log=False))
    scout, plain = sup.fork("by definition", agent="scout"), sup.fork("by setting")
    results = {r.id: r for r in sup.wait([scout, plain], TIMEOUT)}
    sup.close()

    assert (results[scout].status, results[scout].error) == ("failed", (
        "stopped after 1 turn: the model still wants to call tools; raise max_turns in the "
        "agent definition 'scout'"))
    assert (results[plain].status, results[plain].error) == ("failed", (  # not the root's 50
        "stopped after 2 turns: the model still wants to call tools; raise the max_turns "
        "setting (IKIGAI_MAX_TURNS), or fork an agent definition with max_turns"))
