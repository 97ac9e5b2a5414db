"""The agents API (issue 25): JSON-RPC 2.0 over HTTP on a Unix socket, called by a real
bash tool with curl, by the Python client, scoped by each agent's token, checked against
the published schema, and gone at exit."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from contextlib import ExitStack
from pathlib import Path

import jsonschema
import pytest

from ikigai_core import App, Session
from ikigai_core.conversation import ToolResultsMessage
from ikigai_core.orchestration import serving
from ikigai_toolkit.agents_api import AgentsApiError, AgentsClient
from tests.support.agents import AgentModel, first_prompt
from tests.test_cli_agent import advertised

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "agents-api.schema.json").read_text())
TIMEOUT = 30
CURL = ('curl -s --unix-socket "$IKIGAI_API" -H "Authorization: Bearer $IKIGAI_API_TOKEN" '
        "-d '{body}' http://ikigai/")


def curl(method: str, **params) -> str:
    """A bash command calling the API."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    return CURL.format(body=body)


@pytest.fixture
def served(tmp_path, approve_all):
    """``served(scripts)``: a root session on a scripted model, serving the API."""
    with ExitStack() as stack:

        def make(scripts, environ=None):
            model = AgentModel(scripts)
            stack.callback(model.close)
            app = App(environ={**os.environ, **model.environ, **(environ or {})}, cwd=tmp_path)
            return model, stack.enter_context(serving(Session.open(app, "openai", log=False)))

        yield make


def _outputs(session: Session) -> list[str]:
    return [result.envelope.get("result", {}).get("output", "")
            for message in session.exchange if isinstance(message, ToolResultsMessage)
            for result in message.results]


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_a_bash_tool_forks_and_waits_with_curl(served):
    model, sup = served({
        "parent": [[("bash", {"command": curl("fork", prompt="kid")})],
                   [("bash", {"command": curl("wait", ids=["agent-1"], timeout=20)})],
                   "the kid said hello"],
        "kid": ["hello from the kid"]})

    reply = sup.root.live.send("parent")

    assert reply.text == "the kid said hello"
    forked, waited = (json.loads(o) for o in _outputs(sup.root.live))
    assert forked == {"jsonrpc": "2.0", "id": 1, "result": {"id": "agent-1"}}
    [kid] = waited["result"]["agents"]
    assert (kid["status"], kid["output"]) == ("done", "hello from the kid")
    assert sup.root.live.usage.total == 4 * 15  # three turns of its own and the kid's


def test_a_token_reaches_only_its_own_agents_descendants(served):
    _, sup = served({"a": ["a"], "b": ["b"], "a's kid": ["k"]})
    a, b = sup.fork("a"), sup.fork("b")
    path = sup.environ["IKIGAI_API"]
    as_a = AgentsClient(path, sup.token_of(a))
    as_b = AgentsClient(path, sup.token_of(b))
    kid = as_a.fork("a's kid")

    for call in (lambda: as_b.kill(kid), lambda: as_b.send(kid, "x"),
                 lambda: as_b.wait([kid], 1), lambda: as_a.kill(b), lambda: as_a.kill(a)):
        with pytest.raises(AgentsApiError, match=f"no agent '.*' below '{b}'|below '{a}'") as err:
            call()
        assert err.value.code == -32002
    assert [i["id"] for i in as_a.list()] == [kid] and as_b.list() == []
    assert as_a.wait([kid], TIMEOUT)[0]["output"] == "k"
    for token in ("not-a-token", ""):
        with pytest.raises(AgentsApiError, match="no valid token") as err:
            AgentsClient(path, token or "x").call("list") if token else _no_header(path)
        assert err.value.code == -32001


def _no_header(path: str) -> None:
    out = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", "--unix-socket", path, "-d",
                          '{"jsonrpc": "2.0", "id": 1, "method": "list"}', "http://ikigai/"],
                         capture_output=True, text=True, timeout=TIMEOUT).stdout
    body, _, status = out.rpartition("\n")
    assert status == "401"
    error = json.loads(body)["error"]
    raise AgentsApiError(error["message"], error["code"])


def test_every_request_and_reply_matches_the_published_schema(served):
    _, sup = served({"kid": ["done"], "other": ["x"]})
    path, token = sup.environ["IKIGAI_API"], sup.root.token
    calls = [("fork", {"prompt": "kid", "budget": {"tokens": 1000, "seconds": 30}}),
             ("wait", {"ids": ["agent-1"], "timeout": 20, "mode": "all", "max_output": 100}),
             ("send", {"id": "agent-1", "message": "again"}),
             ("list", None), ("usage", {}), ("kill", {"id": "agent-1"}),
             ("fork", {"prompt": ""}), ("kill", {"id": "agent-9"}), ("nope", {}),
             ("fork", {"prompt": "x", "colour": "red"}), ("wait", {"timeout": "soon"}),
             ("fork", {"prompt": "x", "history": True}), ("fork", {"prompt": "x", "history": -1}),
             ("fork", {"prompt": "x", "history": 2.5})]
    validator = jsonschema.Draft202012Validator
    for number, (method, params) in enumerate(calls):
        request = {"jsonrpc": "2.0", "id": number, "method": method}
        if params is not None:
            request["params"] = params
        reply = _post(path, token, request)
        assert reply["id"] == number
        if "error" in reply:
            validator({**SCHEMA, "$ref": "#/$defs/error_response"}).validate(reply)
            assert "\n" not in reply["error"]["message"]
        else:
            validator(SCHEMA).validate(request)
            validator({**SCHEMA, "$ref": f"#/$defs/result/{method}"}).validate(reply["result"])
    assert _post(path, token, b"{not json")["error"]["code"] == -32700
    assert _post(path, token, [1, 2])["error"]["code"] == -32600


def _post(path: str, token: str, request) -> dict:
    data = request if isinstance(request, bytes) else json.dumps(request).encode()
    out = subprocess.run(["curl", "-s", "--unix-socket", path, "-H",
                          f"Authorization: Bearer {token}", "--data-binary", "@-",
                          "http://ikigai/"], input=data, capture_output=True, timeout=TIMEOUT)
    return json.loads(out.stdout)


def test_the_socket_is_private_reaches_tool_processes_only_and_goes_at_exit(
        tmp_path, approve_all):
    model = AgentModel({"parent": [[("bash", {"command": "echo ${IKIGAI_API:-none}"})], "ok"]})
    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    with serving(Session.open(app, "openai", log=False)) as sup:
        path = Path(sup.environ["IKIGAI_API"])
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        sup.root.live.send("parent")
        assert _outputs(sup.root.live) == [str(path)]
        assert "IKIGAI_API" not in app.environ
        assert app.served_environ == {}  # an MCP server gets neither variable by default
    model.close()
    assert not path.parent.exists()


def test_the_client_says_in_one_line_when_no_api_is_served(tmp_path):
    with pytest.raises(AgentsApiError, match="IKIGAI_API is not set"):
        AgentsClient(environ={})
    out = subprocess.run([str(Path(os.sys.executable).with_name("agent-list-tool"))],
                         input=b"{}", capture_output=True, env={"PATH": os.environ["PATH"]},
                         timeout=TIMEOUT)
    assert out.returncode == 0
    assert json.loads(out.stdout)["error_code"] == "AGENTS_API"


def test_a_child_at_the_depth_limit_is_not_sent_agent_fork(served):
    """Depth 2 (the default) allows grandchildren: a child may fork, so it is sent
    ``agent_fork``; a grandchild may not, so it is not (the other ``agent_*`` tools it is)."""
    model, sup = served({"kid": ["kid done"], "grandkid": ["grandkid done"]})
    kid = sup.fork("kid")
    sup.wait([kid], TIMEOUT)
    grandkid = sup.fork("grandkid", caller=kid)
    sup.wait([grandkid], TIMEOUT)

    sent = {first_prompt(r.json): advertised("openai", r.json) for r in model.server.requests}
    agent_tools = ["agent_fork", "agent_kill", "agent_list", "agent_send", "agent_wait"]
    assert set(agent_tools) <= set(sent["kid"])
    assert "agent_fork" not in sent["grandkid"]
    assert set(sent["kid"]) - set(sent["grandkid"]) == {"agent_fork"}
