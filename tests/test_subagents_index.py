"""The model learns the agent definitions it may fork (issue 25: a definition's
``description`` is "shown to the model to choose"): every agent whose requests carry
``agent_fork`` has the definitions' index in its system prompt, the same on every turn;
an agent that cannot fork (the depth limit, a toolset without ``agent_fork``) has none.
Only the user's and a trusted project's definitions are named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ikigai_core import App, Session
from ikigai_core.orchestration import serving
from ikigai_core.trust import TrustStore
from tests.support.agents import AgentModel, first_prompt
from tests.test_agent_definitions import write_agent

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
REVIEWER = "- reviewer: Reviews diffs for bugs."


def _sent(model: AgentModel) -> dict[str, list[tuple[str, list[str]]]]:
    """Each conversation's requests (by first prompt): the system prompt and the tools."""
    sent: dict[str, list[tuple[str, list[str]]]] = {}
    for request in model.server.requests:
        body = request.json
        system = body["messages"][0]
        assert system["role"] == "system"
        sent.setdefault(first_prompt(body), []).append(
            (system["content"], [tool["function"]["name"] for tool in body.get("tools", ())]))
    return sent


def test_agents_that_can_fork_are_told_the_definitions_and_one_at_the_depth_limit_is_not(
        isolated_home, tmp_path):
    write_agent(isolated_home / "agents", "reviewer",
                "---\ndescription: Reviews diffs\n  for bugs.\n---\nYou review diffs.\n")
    project = tmp_path / "project"
    write_agent(project / ".ikigai" / "agents", "intruder",
                "---\ndescription: Untrusted text steering the model.\n---\nx\n")
    model = AgentModel({
        "plan": [[("agent_fork", {"prompt": "kid"}),
                  ("agent_fork", {"prompt": "review it", "agent": "reviewer"})],
                 [("agent_wait", {"timeout": 20})], "planned", "continued"],
        "kid": [[("agent_fork", {"prompt": "grandkid"})], [("agent_wait", {"timeout": 20})],
                "kid done"],
        "grandkid": ["grandkid done"],
        "review it": ["reviewed"]})
    try:
        env = {**os.environ, **model.environ, "IKIGAI_HOME": str(isolated_home)}
        ran = subprocess.run([IKIGAI, "ask", "--yes", "plan"], env=env, cwd=project,
                             capture_output=True, text=True, timeout=60)
        assert (ran.returncode, ran.stdout) == (0, "planned\n"), ran.stderr
        ran = subprocess.run([IKIGAI, "ask", "--continue", "go on"], env=env, cwd=project,
                             capture_output=True, text=True, timeout=60)
        assert (ran.returncode, ran.stdout) == (0, "continued\n"), ran.stderr
        sent = _sent(model)
    finally:
        model.close()

    root = sent["plan"]
    assert len(root) == 4 and all("agent_fork" in tools for _, tools in root)
    assert REVIEWER in root[0][0].splitlines()
    assert "intruder" not in root[0][0]  # an untrusted project's text reaches no model
    assert {system for system, _ in root} == {root[0][0]}  # also --continue'd: cached
    [(kid, kid_tools), *_] = sent["kid"]
    assert "agent_fork" in kid_tools and kid == root[0][0]
    [(review, _)] = sent["review it"]
    assert review.startswith("You review diffs.\n\n## Agents\n") and REVIEWER in review
    [(grandkid, grandkid_tools)] = sent["grandkid"]  # depth 2, the limit: it cannot fork
    assert "agent_fork" not in grandkid_tools and "## Agents" not in grandkid
    assert root[0][0].startswith(grandkid + "\n\n## Agents\n")  # the rest is its parent's


def _system(session: Session) -> str:
    return str(session.next_request("hi").request.body["messages"][0]["content"])


def test_a_trusted_projects_definitions_are_told_and_none_without_agent_fork(
        isolated_home, tmp_path):
    project = tmp_path / "project"
    write_agent(project / ".ikigai" / "agents", "scout")
    TrustStore(isolated_home).trust(project)
    environ = {**os.environ, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9"}

    with serving(Session.open(App(environ=environ, cwd=project), "openai", log=False)) as sup:
        session = sup.root.live
        assert "- scout: The scout agent." in _system(session).splitlines()
        session.clear()  # a conversation /clear starts is told too
        assert "- scout: The scout agent." in _system(session).splitlines()
    with serving(Session.open(App(environ=environ, cwd=project), "openai", log=False,
                              tools="file_read")) as sup:
        assert "## Agents" not in _system(sup.root.live)
