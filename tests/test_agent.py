"""The agent loop against a real local HTTP server, the real transport and real tools.

A scripted provider speaking a toy wire format keeps these tests about the loop
(each reply names the calls to make); tests/test_cli_agent.py runs the real providers.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ikigai_core.agent import Agent, TurnLimitReached
from ikigai_core.app import App
from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    TextDelta,
    ToolCall,
    UserMessage,
)
from ikigai_core.providers import Provider, ProviderRequest
from ikigai_core.record import Record
from ikigai_core.sse import ServerSentEvent
from ikigai_core.toolset import Toolset
from tests.support.fakeserver import json_reply, sse_reply
from tests.support.procs import wait_gone


class ScriptedProvider(Provider):
    """Sends the whole conversation as plain JSON; a reply is ``{"text", "calls"}``.

    A call whose arguments are a string stands for arguments the provider could not
    parse. ``prepare_arguments`` drops nulls, as the OpenAI provider does.
    """

    name = "scripted"
    default_model = "scripted-1"
    api_key_env = ("SCRIPTED_KEY",)
    base_url_env = "SCRIPTED_URL"

    def tool_schema(self, tool):
        return {"name": tool.name}

    def request_body(self, conversation, tools, *, model, stream):
        return {"tools": [self.tool_schema(tool) for tool in tools],
                "messages": [_plain(message) for message in conversation.messages]}

    def http_request(self, body, *, model, stream, api_key, environ):
        return ProviderRequest(environ[self.base_url_env], {}, body)

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        calls = []
        for call_id, name, arguments in body.get("calls", []):
            if isinstance(arguments, str):
                calls.append(ToolCall(call_id, name, None, f"not JSON: {arguments!r}"))
            else:
                calls.append(ToolCall(call_id, name, arguments))
        return AssistantMessage(text=body.get("text", ""), tool_calls=tuple(calls))

    def parse_stream(self, events: Iterable[ServerSentEvent]) -> Iterator[Any]:
        for event in events:
            data = json.loads(event.data)
            if "delta" in data:
                yield TextDelta(data["delta"])
            else:
                yield self.parse_response(data)

    def error_message(self, status, body, *, model, key_env):
        return f"HTTP {status}"

    def prepare_arguments(self, tool, arguments):
        return {key: value for key, value in arguments.items() if value is not None}


def _plain(message: Any) -> dict[str, Any]:
    return {"type": type(message).__name__, **_fields(message)}


def _fields(value: Any) -> Any:
    """A record's fields as plain data, records inside it too (``dataclasses.asdict``'s job)."""
    if isinstance(value, Record):
        return {name: _fields(item) for name, item in vars(value).items()}
    if isinstance(value, tuple | list):
        return [_fields(item) for item in value]
    return value


def reply(text: str = "", *calls: tuple[str, str, Any]) -> Any:
    return json_reply({"text": text, "calls": [list(call) for call in calls]})


SLEEP_SCHEMA = {
    "name": "sleep",
    "description": "Sleep, then echo the arguments",
    "parameters": {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "tag": {"type": "string"}},
        "required": ["seconds"],
        "additionalProperties": False,
    },
}
SLEEP_BODY = """
args = json.load(sys.stdin)
time.sleep(args["seconds"])
print(json.dumps({"tag": args.get("tag")}))
"""


@pytest.fixture
def project(approve_all, tmp_path, isolated_home, fake_server, make_tool):
    """A user tools dir with a ``sleep`` tool; returns ``make_agent(**overrides)``."""
    make_tool(isolated_home / "tools", "sleep-tool", schema=SLEEP_SCHEMA, body=SLEEP_BODY)
    environ = {**os.environ, "SCRIPTED_KEY": "k", "SCRIPTED_URL": fake_server.url}
    app = App(environ=environ, cwd=tmp_path)

    def make_agent(**overrides: Any) -> Agent:
        events: list[tuple[str, Any]] = []
        options: dict[str, Any] = dict(
            registry=app.registry(), stream=False,
            on_text=lambda text: events.append(("text", text)),
        )
        agent = Agent(app, ScriptedProvider(), "scripted-1", **{**options, **overrides})
        agent.boundary.on_start = lambda call: events.append(("start", call.id))
        agent.boundary.on_end = lambda call, envelope: events.append(("end", call.id))
        agent.events = events  # type: ignore[attr-defined]
        return agent

    return make_agent


def sent_results(request: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(call id, envelope) of the last message the loop sent, in order."""
    last = request.json["messages"][-1]
    assert last["type"] == "ToolResultsMessage"
    return [(result["call"]["id"], result["envelope"]) for result in last["results"]]


def test_calls_of_one_turn_run_concurrently(project, fake_server):
    fake_server.push(
        reply("", ("a", "sleep", {"seconds": 1.5}), ("b", "sleep", {"seconds": 1.5})),
        reply("done"),
    )
    agent = project()
    start = time.monotonic()
    answer = agent.run(Conversation(), "sleep twice")
    elapsed = time.monotonic() - start
    assert answer.text == "done"
    assert elapsed < 2.7, f"two 1.5 s tools took {elapsed:.2f} s: they did not run in parallel"
    assert [code for code, _ in sent_results(fake_server.requests[1])] == ["a", "b"]


def test_results_go_back_in_call_order_whatever_finishes_first(project, fake_server):
    fake_server.push(
        reply("Looking.", ("slow", "sleep", {"seconds": 0.8, "tag": "slow"}),
              ("fast", "sleep", {"seconds": 0, "tag": "fast"})),
        reply("both done"),
    )
    agent = project()
    conversation = Conversation()
    agent.run(conversation, "go")
    results = sent_results(fake_server.requests[1])
    assert results == [
        ("slow", {"tool_success": True, "result": {"tag": "slow"}}),
        ("fast", {"tool_success": True, "result": {"tag": "fast"}}),
    ]
    assert agent.events == [("text", "Looking."), ("start", "slow"), ("start", "fast"),
                            ("end", "fast"), ("end", "slow"), ("text", "both done")]
    kinds = [type(message).__name__ for message in conversation.messages]
    assert kinds == ["UserMessage", "AssistantMessage", "ToolResultsMessage", "AssistantMessage"]


def test_unparseable_arguments_get_invalid_params_without_running(project, fake_server, tmp_path):
    fake_server.push(reply("", ("x", "sleep", "{seconds: oops")), reply("sorry"))
    project().run(Conversation(), "go")
    [(call_id, envelope)] = sent_results(fake_server.requests[1])
    assert envelope == {
        "tool_success": False,
        "error": "Invalid arguments for tool 'sleep': not JSON: '{seconds: oops'",
        "error_code": "INVALID_PARAMS",
    }


def test_unknown_tool_gets_tool_not_found(project, fake_server):
    fake_server.push(reply("", ("x", "teleport", {})), reply("no such tool"))
    project().run(Conversation(), "go")
    [(_, envelope)] = sent_results(fake_server.requests[1])
    assert envelope["error_code"] == "TOOL_NOT_FOUND"
    assert envelope["error"] == "Tool 'teleport' not found. Available tools: " + ", ".join(
        sorted(project().registry))


def test_prepare_arguments_runs_before_validation(project, fake_server):
    # "tag" is a string: a null would fail validation unless the provider drops it first.
    fake_server.push(reply("", ("x", "sleep", {"seconds": 0, "tag": None})), reply("ok"))
    project().run(Conversation(), "go")
    assert sent_results(fake_server.requests[1]) == [
        ("x", {"tool_success": True, "result": {"tag": None}})]


def test_turn_limit_is_reported_and_the_conversation_restored(project, fake_server):
    again = reply("", ("x", "sleep", {"seconds": 0}))
    fake_server.push(again, again, again)
    conversation = Conversation([UserMessage("earlier")])
    with pytest.raises(TurnLimitReached) as info:
        project(max_turns=2).run(conversation, "loop forever")
    assert str(info.value) == (
        "stopped after 2 turns: the model still wants to call tools; "
        "raise --max-turns (or IKIGAI_MAX_TURNS)")
    assert len(fake_server.requests) == 2
    assert conversation.messages == [UserMessage("earlier")]


def test_no_tools_registry_advertises_nothing(project, fake_server):
    fake_server.push(reply("plain answer"))
    assert project(registry={}).run(Conversation(), "hi").text == "plain answer"
    assert fake_server.requests[0].json["tools"] == []


def test_request_advertises_every_registry_tool(project):
    registry = project().registry
    tools = Toolset().tools(registry)
    body = ScriptedProvider().request_body(Conversation(), tools, model="m", stream=True)
    assert [tool["name"] for tool in body["tools"]] == list(registry) and "sleep" in registry


def test_streamed_text_arrives_in_pieces(project, fake_server):
    fake_server.push(sse_reply([{"delta": "Hel"}, {"delta": "lo"}, {"text": "Hello"}]))
    agent = project(stream=True)
    assert agent.run(Conversation(), "hi").text == "Hello"
    assert agent.events == [("text", "Hel"), ("text", "lo")]


def test_ctrl_c_kills_running_tools_and_restores_the_conversation(
    project, fake_server, make_tool, isolated_home, tmp_path
):
    pids = tmp_path / "pids"
    make_tool(isolated_home / "tools", "hang-tool", body=f"""
        import subprocess
        child = subprocess.Popen(["sleep", "60"])
        with open({str(pids)!r}, "a") as f:
            f.write(f"{{os.getpid()}} {{child.pid}}\\n")
        time.sleep(60)
    """)
    fake_server.push(reply("", ("a", "hang", {}), ("b", "hang", {})))
    agent = project()
    conversation = Conversation()
    interrupt = threading.Thread(target=_interrupt_when, args=(pids, 2), daemon=True)
    interrupt.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        agent.run(conversation, "hang")
    assert time.monotonic() - start < 20
    interrupt.join()
    assert conversation.messages == []
    for pid in pids.read_text().split():
        assert wait_gone(int(pid)), f"process {pid} survived Ctrl-C"


def _interrupt_when(pids: Path, count: int) -> None:
    """Send SIGINT to this process once ``count`` tools wrote their pids."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if pids.exists() and len(pids.read_text().splitlines()) >= count:
            break
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)


def test_a_plugin_saying_its_tools_changed_gets_a_new_registry_before_the_next_turn(
        project, fake_server, isolated_home, make_tool):
    from ikigai_core import hookimpl

    agent = project()
    changed = threading.Event()

    class Watcher:
        @hookimpl
        def ikigai_tools_changed(self):
            if changed.is_set():
                changed.clear()
                return True
            return False

    agent.app.pm.register(Watcher(), name="watcher")
    make_tool(isolated_home / "tools", "late-tool")
    fake_server.push(reply("", ("c1", "sleep", {"seconds": 0})), reply("done"))
    agent.run(Conversation(), "first")
    assert "late" not in agent.registry  # nothing said the tools changed
    changed.set()
    fake_server.push(reply("again"))
    agent.run(Conversation(), "second")
    assert "late" in agent.registry
    assert {"name": "late"} in fake_server.requests[-1].json["tools"]
