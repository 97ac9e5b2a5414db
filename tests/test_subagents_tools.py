"""The agent_* tools and approvals of sub-agents (issue 25): ``ikigai ask`` whose model
forks three children in one turn, waits for all and answers with their outputs; a child's
approval question reaching the root's asker labelled, answered to that child only; the
socket under a real bubblewrap sandbox, bound in or kept out by the setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_core import App, Session
from ikigai_core.conversation import ToolResultsMessage, Usage
from ikigai_core.orchestration import serving
from ikigai_core.prices import cost_of
from pytest_ikigai.replies import REPLIES
from tests.support.agents import AgentModel, scripted_models
from tests.support.procs import pid_written, wait_gone
from tests.test_sandbox import needs_bwrap
from tests.test_subagents_api import curl
from tests.test_subagents_runtime import held

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
TIMEOUT = 60


@pytest.fixture
def model():
    with scripted_models() as make:
        yield make


def _answer_with_outputs(request):
    """The parent's last turn: the children's outputs, read from agent_wait's result."""
    last = request.json["messages"][-1]
    agents = json.loads(last["content"])["result"]["agents"]
    outputs = sorted(agent["output"] for agent in agents if agent["status"] == "done")
    return REPLIES["openai"].reply("children said: " + ", ".join(outputs),
                                   stream=request.json.get("stream") is True)


def test_ask_forks_three_children_in_one_turn_waits_and_answers_with_their_outputs(
        model, tmp_path):
    m = model({
        "plan": [[("agent_fork", {"prompt": f"task {i}"}) for i in range(3)],
                 [("agent_wait", {"timeout": 20})],
                 _answer_with_outputs],
        **{f"task {i}": [f"answer {i}"] for i in range(3)}})

    ran = subprocess.run([IKIGAI, "ask", "--yes", "--json", "plan"], capture_output=True,
                         text=True, env={**os.environ, **m.environ}, cwd=tmp_path,
                         timeout=TIMEOUT)

    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["text"] == "children said: answer 0, answer 1, answer 2"
    assert sorted(m.first_prompts()).count("plan") == 3
    assert [c["name"] for c in answer["tool_calls"]] == ["agent_fork"] * 3 + ["agent_wait"]
    assert ran.stderr.count("ikigai: → agent_fork") == 3
    # the prompt's figures hold the children's turns too: 3 of the root's, 1 of each child's
    per_turn = cost_of("openai", answer["model"], Usage(10, 5))
    assert (answer["usage"]["input_tokens"], answer["usage"]["output_tokens"]) == (60, 30)
    assert answer["cost"] == pytest.approx(6 * per_turn)


def test_a_childs_question_reaches_the_root_asker_labelled_and_only_it_gets_the_answer(
        model, tmp_path):
    m = model({"yes-kid": [[("bash", {"command": "echo allowed"})], "ran"],
               "no-kid": [[("bash", {"command": "echo refused"})], "not run"]})
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return "y" if "echo allowed" in question else "n"

    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    with serving(Session.open(app, "openai", ask=ask, log=False)) as sup:
        yes, no = sup.fork("yes-kid"), sup.fork("no-kid")
        results = {r.id: r for r in sup.wait([yes, no], TIMEOUT)}
        envelopes = {i: _envelopes(m, p) for i, p in ((yes, "yes-kid"), (no, "no-kid"))}

    assert sorted(asked) == sorted([
        f"[agent agent ({yes})] Allow bash {{\n \"command\": \"echo allowed\"\n}}?\n"
        "[y]es once, [a]lways, [n]o (or type why not): ",
        f"[agent agent ({no})] Allow bash {{\n \"command\": \"echo refused\"\n}}?\n"
        "[y]es once, [a]lways, [n]o (or type why not): "])
    assert results[yes].output == "ran" and results[no].output == "not run"
    assert "allowed" in envelopes[yes] and "TOOL_DENIED" in envelopes[no]


def _envelopes(m: AgentModel, prompt: str) -> str:
    """What the last request of conversation ``prompt`` sent back as tool results."""
    bodies = [r.json for r in m.server.requests if r.json["messages"][1]["content"] == prompt]
    return json.dumps([msg for msg in bodies[-1]["messages"] if msg["role"] == "tool"])


def test_without_an_asker_the_rules_decide_and_a_denial_names_the_child(
        model, tmp_path, isolated_home):
    (isolated_home / "permissions.json").write_text(
        '{"rules": [{"id": 1, "tool": "bash", "decision": "allow", '
        '"when": [{"pointer": "/command", "equals": "echo ruled"}]}]}')
    m = model({"kid": [[("bash", {"command": "echo ruled"}), ("bash", {"command": "touch x"})],
                       "done"]})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    with serving(Session.open(app, "openai", log=False)) as sup:
        kid = sup.fork("kid")
        assert sup.wait([kid], TIMEOUT)[0].status == "done"
    assert "ruled" in _envelopes(m, "kid") and not (tmp_path / "x").exists()
    assert any(n.message.startswith(f"agent agent ({kid}): bash was not run: it needs approval")
               for n in app.notices)


@needs_bwrap
@pytest.mark.parametrize("allowed", [True, False])
def test_under_bubblewrap_the_socket_is_bound_in_only_when_the_setting_allows(
        model, tmp_path, isolated_home, approve_all, allowed):
    (isolated_home / "config.json").write_text(json.dumps(
        {"sandbox": "workspace-write", "agents_api_sandbox": allowed}))
    command = 'echo "api=${IKIGAI_API:-none}"; ' + curl("list")
    m = model({"root": [[("bash", {"command": command})], "ok"]})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    with serving(Session.open(app, "openai", log=False)) as sup:
        sup.root.live.send("root")
        [output] = [r.envelope["result"]["output"] for msg in sup.root.live.exchange
                    if isinstance(msg, ToolResultsMessage) for r in msg.results]
    first, _, rest = output.partition("\n")
    if allowed:
        assert first.startswith("api=/") and json.loads(rest)["result"] == {"agents": []}
    else:
        assert first == "api=none" and "result" not in rest


def test_agent_kill_offers_cascade_and_without_it_the_grandchild_and_its_tool_run_on(
        model, tmp_path, approve_all):
    started, gate = tmp_path / "started", tmp_path / "gate"
    started.mkdir()
    names = ("a", "a-kid", "b", "b-kid")
    m = model({name: [held(started, gate, name), f"{name} done"] for name in names})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    with serving(Session.open(app, "openai", log=False)) as sup:
        a = sup.fork("a")
        a_kid = sup.fork("a-kid", caller=a)
        b = sup.fork("b")
        b_kid = sup.fork("b-kid", caller=b)
        pids = {name: pid_written(started / name) for name in names}
        m.scripts["root"] = [[("agent_kill", {"id": a, "cascade": False}),
                              ("agent_kill", {"id": b})], "killed"]

        sup.root.live.send("root")  # the model's agent_kill calls: real tool processes

        killed = [r.envelope["result"] for msg in sup.root.live.exchange
                  if isinstance(msg, ToolResultsMessage) for r in msg.results]
        assert sorted((k["id"], k["status"]) for k in killed) == [(a, "killed"), (b, "killed")]
        assert {i.id: i.status for i in sup.list()} == {
            a: "killed", a_kid: "running", b: "killed", b_kid: "killed"}
        assert all(wait_gone(pids[name], timeout=10) for name in ("a", "b", "b-kid"))
        gate.touch()  # a-kid's tool was never killed: it ends on its own
        [result] = sup.wait([a_kid], TIMEOUT)
        assert (result.status, result.output) == ("done", "a-kid done")
    [kill] = [t["function"] for t in m.server.requests[-1].json["tools"]
              if t["function"]["name"] == "agent_kill"]
    assert kill["parameters"]["properties"]["cascade"]["type"] in ("boolean", ["boolean", "null"])


def test_the_model_interrupts_a_child_mid_tool_with_agent_send(model, tmp_path):
    """``agent_send`` with ``interrupt``: the child's slow tool is stopped and the new
    message answered at once (without it, the wait would end on a child still running)."""
    pid_file = tmp_path / "pid"

    def once_the_tool_runs(request):
        pid_written(pid_file)
        return REPLIES["openai"].reply("", [("c1", "agent_send", {
            "id": "agent-1", "message": "instead", "interrupt": True})],
            stream=request.json.get("stream") is True)

    m = model({
        "boss": [[("agent_fork", {"prompt": "slow"})], once_the_tool_runs,
                 [("agent_wait", {"timeout": 20})], _answer_with_outputs],
        "slow": [[("bash", {"command": f"echo $$ > {pid_file}; exec sleep 60"})], "never"],
        "instead": ["the new answer"]})

    ran = subprocess.run([IKIGAI, "ask", "--yes", "boss"], capture_output=True, text=True,
                         env={**os.environ, **m.environ}, cwd=tmp_path, timeout=TIMEOUT)

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "children said: the new answer"
    [child] = [r.json for r in m.server.requests if r.json["messages"][1]["content"] == "instead"]
    assert "sleep 60" not in str(child["messages"])  # the interrupted exchange is gone
