"""Sub-agents in ``ikigai chat`` on a real terminal (issue 25): ``/fork``, ``/agents``,
``/send``, ``/kill``, the status line, and a child's approval question asked over the
prompt, labelled with the child, answered to that child only. ``pyte`` plays the terminal;
every wait has a timeout that fires."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.support.agents import AgentModel, scripted_models
from tests.support.vt import Screen as VirtualScreen

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


@pytest.fixture
def model():
    with scripted_models() as make:
        yield make


def chat_on_terminal(model: AgentModel, home: Path, cwd: Path, *args: str) -> VirtualScreen:
    env = {**os.environ, **model.environ, "IKIGAI_HOME": str(home), "TERM": "xterm-256color"}
    return VirtualScreen([IKIGAI, "chat", *args], env=env, cwd=cwd, columns=110, lines=40)


def test_a_childs_approval_is_labelled_and_answered_to_that_child_only(model, isolated_home,
                                                                       tmp_path):
    m = model({"make a": [[("bash", {"command": "touch a.txt"})], "made a"],
               "make b": [[("bash", {"command": "touch b.txt"})], "made b"]})
    with chat_on_terminal(m, isolated_home, tmp_path) as chat:
        chat.wait_for("tokens:")
        chat.write(b"/fork make a\r")
        first = chat.wait_for(re.compile(r"^\[agent agent \(agent-1\)\] Allow bash \{$",
                                         re.M).search)
        assert "Forked agent-1 (agent): running. /agents agent-1 shows its answer." in first
        chat.write(b"y\r")
        chat.wait_for("agent agent (agent-1) done")
        chat.write(b"/fork make b\r")
        second = chat.wait_for(re.compile(r"^\[agent agent \(agent-2\)\] Allow bash \{$",
                                          re.M).search)
        assert '"command": "touch b.txt"' in second.split("(agent-2)] Allow bash")[1]
        chat.write(b"n\r")
        chat.wait_for("agent agent (agent-2) done")
        chat.write(b"/agents\r")
        shown = chat.wait_for(re.compile(r"^  agent-2  agent  done  \d+ tokens$", re.M).search)
        assert re.search(r"^  agent-1  agent  done  \d+ tokens$", shown, re.M)
        # the children's tokens and dollars count in the chat's
        chat.wait_for(re.compile(r"chat 60 · <\$0\.0001 · agents: none running · 60 tokens")
                      .search)
        chat.write(b"/agents agent-1\r")
        shown = chat.wait_for("made a")
        assert re.search(r"^agent-1: done, \d+ tokens$", shown, re.M)
    assert (tmp_path / "a.txt").exists()
    assert not (tmp_path / "b.txt").exists()  # the "n" reached agent-2, and only it
    [answered] = [r.json for r in m.server.requests
                  if r.json["messages"][1]["content"] == "make b" and len(r.json["messages"]) > 2]
    assert "the user declined the call" in str(answered["messages"][-1])



def test_the_status_line_counts_a_running_childs_tokens_with_nothing_typed(
        model, isolated_home, tmp_path):
    """Sitting at the prompt, the user sees a child's tokens rise on the status line as
    each of its turns is counted, while it still runs; once no child runs, nothing is
    drawn."""
    import select
    import threading

    gates = [threading.Event(), threading.Event()]

    def gated(gate: threading.Event, turn):
        def reply(request):
            gate.wait(30)  # the test opens it (or the turn comes anyway, and it fails)
            return turn(request)
        return reply

    from pytest_ikigai.replies import REPLIES

    def tool(request):
        return REPLIES["openai"].reply("", [("c1", "bash", {"command": "true"})],
                                       stream=request.json.get("stream") is True)

    def answer(request):
        return REPLIES["openai"].reply("worked", stream=request.json.get("stream") is True)

    m = model({"work": [gated(gates[0], tool), gated(gates[1], answer)]})
    try:
        with chat_on_terminal(m, isolated_home, tmp_path, "--yes") as chat:
            chat.wait_for("tokens:")
            chat.write(b"/fork work\r")
            chat.wait_for("agents: 1 running · 0 tokens")  # the prompt is back, drawn
            gates[0].set()  # its first turn is answered: a tool call, then it waits
            shown = chat.wait_for("agents: 1 running · 15 tokens", timeout=10)
            assert "chat 15 · " in shown and "agent-1) done" not in shown
            gates[1].set()
            chat.wait_for("agent agent (agent-1) done")
            chat.wait_for(re.compile(r"chat 30 · \S+ · agents: none running · 30 tokens").search)
            chat.pump(0.5)  # the prompt's last drawing
            drawn = select.select([chat.terminal.fd], [], [], 1)[0]
            assert not drawn, f"the idle prompt was drawn again:\n{chat.text}"
    finally:
        for gate in gates:
            gate.set()


def test_approve_in_chat_reaches_a_running_childs_next_call(model, isolated_home, tmp_path):
    """``/approve yes`` and ``/approve ask`` change the chat session's grants, which its
    children read as each call is judged: the running child's next call obeys them."""
    import threading
    import time

    from pytest_ikigai.replies import REPLIES

    gates = [threading.Event(), threading.Event()]

    def once_opened(gate: threading.Event, command: str):
        def turn(request):
            gate.wait(30)  # the test opens it (or the call comes anyway, and it fails)
            return REPLIES["openai"].reply("", [(command, "bash", {"command": command})],
                                           stream=request.json.get("stream") is True)
        return turn

    m = model({"work": [once_opened(gates[0], "touch yes.txt"),
                        once_opened(gates[1], "touch ask.txt"), "worked"]})
    with chat_on_terminal(m, isolated_home, tmp_path) as chat:
        chat.wait_for("tokens:")
        chat.write(b"/fork work\r")
        chat.wait_for("Forked agent-1 (agent): running.")
        chat.write(b"/approve yes\r")
        chat.wait_for("approvals: --yes, every call runs unless a rule denies it")
        chat.wait_for("approve: yes")  # the status line shows the chat's grants
        gates[0].set()
        deadline = time.monotonic() + 20
        while not (tmp_path / "yes.txt").exists():
            assert time.monotonic() < deadline, f"the child's call never ran:\n{chat.text}"
            chat.pump(0.05)
        assert "Allow bash" not in chat.text  # nobody was asked
        chat.write(b"/approve ask\r")
        chat.wait_for("approvals: ask before tools")
        gates[1].set()
        asked = chat.wait_for(re.compile(r"^\[agent agent \(agent-1\)\] Allow bash \{$",
                                         re.M).search)
        assert '"command": "touch ask.txt"' in asked
        chat.write(b"n\r")
        chat.wait_for("agent agent (agent-1) done")
    assert not (tmp_path / "ask.txt").exists()

def test_fork_send_kill_and_agents_from_a_piped_chat(model, isolated_home, tmp_path,
                                                     monkeypatch):
    """In this process (the coverage gate sees the commands); the tools, the children's
    too, are processes all the same."""
    import time

    from click.testing import CliRunner

    from ikigai_core.cli import cli
    from pytest_ikigai.replies import REPLIES

    def slow(request):
        time.sleep(2)
        return REPLIES["openai"].reply("too late")

    m = model({"slow": [slow], "quick": ["quick answer"], "again": ["second answer"]})
    (isolated_home / "agents").mkdir()
    (isolated_home / "agents" / "helper.md").write_text(
        "---\ndescription: Helps.\n---\nYou help.\n")
    lines = ["/agents", "/fork", "/fork --agent nobody x", "/kill", "/send agent-1",
             "/fork slow", "/kill agent-1", "/send agent-1 more", "/agents nope",
             "/fork --agent helper quick", "/agents"]
    for name, value in m.environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["chat"], input="\n".join(lines) + "\n",
                              catch_exceptions=False)
    assert done.stdout.splitlines()[:4] == [
        "No sub-agents yet: /fork [--agent NAME] PROMPT starts one (agents: helper).",
        "Forked agent-1 (agent): running. /agents agent-1 shows its answer.",
        "agent-1 killed.",
        "Forked agent-2 (helper): running. /agents agent-2 shows its answer."]
    assert re.search(r"^  agent-1  agent  killed  0 tokens\n  agent-2  helper  (running|done)",
                     done.stdout, re.M)
    errors = [line for line in done.stderr.splitlines() if line.startswith("ikigai: /")
              or "agent" in line]
    assert errors[:6] == [
        "ikigai: /fork needs a prompt: /fork [--agent NAME] PROMPT",
        "ikigai: unknown agent 'nobody'; known: helper",
        "ikigai: /kill needs an agent id: /kill [--no-cascade] ID; /agents lists them",
        "ikigai: /send needs an agent and a message: /send [--interrupt] ID MESSAGE",
        "ikigai: agent agent (agent-1) killed: killed by root",
        "ikigai: agent 'agent-1' is killed; it takes no more messages"]
    assert "ikigai: no agent 'nope' below 'root'; `list` shows yours" in done.stderr


def test_ctrl_c_stops_the_children_the_turn_forked_and_their_tools(model, isolated_home,
                                                                   tmp_path):
    from tests.support.procs import pid_written, wait_gone

    pids = tmp_path / "pid"
    m = model({"delegate": [[("agent_fork", {"prompt": "long job"})],
                            [("agent_wait", {"timeout": 60})], "never reached"],
               "long job": [[("bash", {"command": f"echo $$ > {pids}; exec sleep 60"})],
                            "never reached"]})
    with chat_on_terminal(m, isolated_home, tmp_path, "--yes") as chat:
        chat.wait_for("tokens:")
        chat.write(b"delegate\r")
        pid = pid_written(pids)
        chat.wait_for("agent_wait")
        chat.write(b"\x03")
        chat.wait_for("ikigai: interrupted")
        assert wait_gone(pid), "the child's tool outlived Ctrl-C"
        chat.wait_for("ikigai: agent agent (agent-1) killed: cancelled with its parent's turn")
        chat.write(b"/agents\r")
        chat.wait_for(re.compile(r"^  agent-1  agent  killed  \d+ tokens$", re.M).search)


def test_kill_no_cascade_in_chat_stops_the_child_and_its_grandchild_runs_on(
        model, isolated_home, tmp_path):
    from tests.support.procs import pid_written

    pid, gate = tmp_path / "pid", tmp_path / "gate"
    m = model({"parent": [[("agent_fork", {"prompt": "grandchild"})],
                          [("agent_wait", {"timeout": 60})], "never reached"],
               "grandchild": [[("bash", {"command": f"echo $$ > {pid}; "
                                                    f"until [ -e {gate} ]; do sleep 0.05; done"})],
                              "grandchild done"]})
    with chat_on_terminal(m, isolated_home, tmp_path, "--yes") as chat:
        chat.wait_for("tokens:")
        chat.write(b"/fork parent\r")
        pid_written(pid)  # the grandchild's tool runs
        chat.write(b"/kill --no-cascade agent-1\r")
        chat.wait_for("agent-1 killed; the 1 agent below it runs on.")
        gate.touch()
        chat.wait_for("ikigai: agent agent (agent-2) done")
        chat.write(b"/agents\r")
        chat.wait_for(re.compile(r"^  agent-1  agent  killed  \d+ tokens\n"
                                 r"    agent-2  agent  done  \d+ tokens$", re.M).search)


# -- The plain chat on a terminal (--plain, NO_COLOR, TERM=dumb) ------------------------------
# readline's prompt waits on the main thread; a child's question comes up over it, asked and
# read by the main thread (no second reader of the terminal), and the prompt comes back.

QUESTION = re.compile(r"^\[agent agent \(agent-(\d)\)\] Allow bash \{$", re.M)
ANSWERS = "[y]es once, [a]lways, [n]o (or type why not):"


def slowly(seconds: float, command: str):
    """A model turn calling bash ``command`` after ``seconds`` (time to type at the prompt)."""
    import time

    from pytest_ikigai.replies import REPLIES

    def turn(request):
        time.sleep(seconds)
        return REPLIES["openai"].reply("", [("c1", "bash", {"command": command})],
                                       stream=request.json.get("stream") is True)

    return turn


def plain_chat(model: AgentModel, home: Path, cwd: Path, **environ: str) -> VirtualScreen:
    env = {**os.environ, **model.environ, "IKIGAI_HOME": str(home), "TERM": "xterm-256color",
           **environ}
    args = [] if environ else ["--plain"]
    return VirtualScreen([IKIGAI, "chat", *args], env=env, cwd=cwd, columns=100, lines=40)


def prompt_waits(chat: VirtualScreen) -> str:
    """The screen once the chat's prompt is up, empty, on its last line."""
    return chat.wait_for(lambda text: text.rstrip().splitlines()[-1] == ">")


def test_plain_a_childs_question_comes_up_at_the_waiting_prompt(model, isolated_home,
                                                                tmp_path):
    m = model({"make a": [slowly(1, "touch a.txt"), "made a"],
               "make b": [[("bash", {"command": "touch b.txt"})], "made b"],
               "draft more": ["chat goes on"]})
    with plain_chat(m, isolated_home, tmp_path) as chat:
        chat.wait_for("/help for commands")
        prompt_waits(chat)
        chat.write(b"/fork make a\r")
        chat.wait_for(lambda text: text.rstrip().endswith("shows its answer.\n>"))
        chat.write(b"draft")  # typed at the prompt (not ahead of it) before the question
        asked = chat.wait_for(lambda text: text.rstrip().endswith(ANSWERS))
        assert QUESTION.search(asked) and "\n> draft\n" in asked
        chat.write(b"y\r")  # answers the question, not the prompt
        shown = chat.wait_for(lambda text: text.rstrip().endswith(
            "ikigai: agent agent (agent-1) done\n> draft"))  # the prompt, as it was
        assert f"{ANSWERS} y\n" in shown
        chat.write(b" more\r")
        chat.wait_for("chat goes on")
        prompt_waits(chat)
        chat.write(b"/fork make b\r")
        chat.wait_for(lambda text: QUESTION.findall(text) == ["1", "2"])
        chat.write(b"n\r")
        chat.wait_for("ikigai: agent agent (agent-2) done")
        prompt_waits(chat)
    assert (tmp_path / "a.txt").exists()
    assert not (tmp_path / "b.txt").exists()
    [root] = [r.json for r in m.server.requests if r.json["messages"][1]["content"] ==
              "draft more"]  # what was typed before the question went to the chat, whole
    [declined] = [r.json for r in m.server.requests
                  if r.json["messages"][1]["content"] == "make b" and len(r.json["messages"]) > 2]
    assert "the user declined the call" in str(declined["messages"][-1])


@pytest.mark.parametrize("key", [b"\x03", b"\x04"], ids=["ctrl-c", "ctrl-d"])
def test_plain_ctrl_c_at_a_childs_question_says_no_to_it_and_the_chat_goes_on(
        key, model, isolated_home, tmp_path):
    m = model({"make a": [[("bash", {"command": "touch a.txt"})], "gave up"],
               "hello": ["hi there"]})
    with plain_chat(m, isolated_home, tmp_path, NO_COLOR="1") as chat:  # plain, unasked
        chat.wait_for("/help for commands")
        prompt_waits(chat)
        chat.write(b"/fork make a\r")
        chat.wait_for(QUESTION.search)
        chat.write(key)  # answers the question; the chat is not left
        chat.wait_for("ikigai: agent agent (agent-1) done")
        chat.write(b"hello\r")
        chat.wait_for("hi there")
        prompt_waits(chat)
    assert not (tmp_path / "a.txt").exists()
    [declined] = [r.json for r in m.server.requests
                  if r.json["messages"][1]["content"] == "make a" and len(r.json["messages"]) > 2]
    assert "the user declined the call" in str(declined["messages"][-1])
    decisions = (isolated_home / "approvals.jsonl").read_text()
    assert "user (Ctrl-C)" in decisions


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rendered"])
def test_a_child_stopped_while_it_asks_takes_its_question_away(plain, model, isolated_home,
                                                               tmp_path):
    m = model({"make a": [[("bash", {"command": "touch a.txt"})], "never reached"]})
    (isolated_home / "agents").mkdir()
    (isolated_home / "agents" / "brief.md").write_text(
        "---\ndescription: Short-lived.\nbudget:\n  seconds: 1\n---\nYou hurry.\n")
    start = plain_chat(m, isolated_home, tmp_path, TERM="dumb") if plain else (
        chat_on_terminal(m, isolated_home, tmp_path))
    with start as chat:
        chat.wait_for("/help for commands" if plain else "tokens:")
        chat.write(b"/fork --agent brief make a\r")
        chat.wait_for(re.compile(r"^\[agent brief \(agent-1\)\] Allow bash \{$", re.M).search)
        chat.wait_for("ikigai: agent brief (agent-1) budget_exceeded: BUDGET_EXCEEDED: the "
                      "seconds limit", timeout=10)
        chat.write(b"/agents\r")  # the question is gone: the next line is the chat's
        chat.wait_for(re.compile(r"^  agent-1  brief  budget_exceeded  \d+ tokens$",
                                 re.M).search)
    assert not (tmp_path / "a.txt").exists()


def test_a_piped_chat_asks_nobody_its_rules_decide_and_a_denial_names_the_child(
        model, isolated_home, tmp_path):
    import subprocess

    m = model({"go": [[("agent_fork", {"prompt": "make a"}),
                       ("agent_fork", {"prompt": "make b"})],
                      [("agent_wait", {"timeout": 20})], "both ended"],
               "make a": [[("bash", {"command": "touch a.txt"})], "made a"],
               "make b": [[("bash", {"command": "touch b.txt"})], "made b"]})
    done = subprocess.run(
        [IKIGAI, "chat", "--allow", "agent_*", "--allow", "bash:/command~^touch a"],
        input="go\n", text=True, capture_output=True, timeout=60, cwd=tmp_path,
        env={**os.environ, **m.environ, "IKIGAI_HOME": str(isolated_home)})
    assert done.returncode == 0, done.stderr
    assert "both ended" in done.stdout
    assert (tmp_path / "a.txt").exists()  # the parent's --allow covers the child's call
    assert not (tmp_path / "b.txt").exists()
    assert re.search(r"^ikigai: agent agent \(agent-\d\): bash was not run: it needs approval",
                     done.stderr, re.M), done.stderr
    assert "Allow bash" not in done.stderr  # nobody was asked


def test_a_first_fork_waits_for_the_chats_discovery_instead_of_running_another(
        model, isolated_home, tmp_path, make_shell_tool):
    """A ``/fork`` typed while the chat still discovers its tools (a new home: nothing
    cached) shares that discovery: each tool's ``--schema`` runs once, not once more for
    the child (a first fork took seconds so on a loaded machine)."""
    import subprocess

    asked = tmp_path / "asked"
    make_shell_tool(isolated_home / "tools", "slow-tool", f"""
        if [ "$1" = --schema ]; then
          echo x >> {asked}
          sleep 0.5
          echo '{{"name": "slow", "description": "Slow to describe.", "parameters": {{"type": "object"}}}}'
          exit 0
        fi
        echo '{{}}'
    """)
    import time

    m = model({"kid": ["kid answer"]})
    chat = subprocess.Popen([IKIGAI, "chat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, **m.environ, "IKIGAI_HOME": str(isolated_home)})
    chat.stdin.write("/fork kid\n")
    chat.stdin.flush()
    deadline = time.monotonic() + 30
    while "kid" not in m.seen and chat.poll() is None:
        assert time.monotonic() < deadline, "the child never asked the model"
        time.sleep(0.05)
    out, err = chat.communicate("", timeout=30)
    assert "Forked agent-1 (agent): running." in out, err
    assert m.first_prompts() == ["kid"]
    assert "slow" in [tool["function"]["name"] for tool in m.server.requests[0].json["tools"]], err
    assert asked.read_text() == "x\n"


def test_send_interrupt_in_chat_stops_the_childs_tool_and_it_answers_the_new_message(
        model, isolated_home, tmp_path):
    from tests.support.procs import pid_written, wait_gone

    pids = tmp_path / "pid"
    m = model({"slow": [[("bash", {"command": f"echo $$ > {pids}; exec sleep 60"})],
                        "never reached"],
               "instead": ["the new answer"]})
    with chat_on_terminal(m, isolated_home, tmp_path, "--yes") as chat:
        chat.wait_for("tokens:")
        chat.write(b"/fork slow\r")
        pid = pid_written(pids)
        chat.write(b"/send --interrupt agent-1 instead\r")
        chat.wait_for("Sent to agent-1.")
        assert wait_gone(pid, timeout=10), "the interrupted tool still runs"
        chat.wait_for("agent agent (agent-1) done")
        chat.write(b"/agents agent-1\r")
        shown = chat.wait_for("the new answer")
        assert re.search(r"^agent-1: done, \d+ tokens$", shown, re.M)
    [last] = [r.json for r in m.server.requests if r.json["messages"][1]["content"] == "instead"]
    assert "slow" not in str(last["messages"])  # the interrupted exchange was dropped
