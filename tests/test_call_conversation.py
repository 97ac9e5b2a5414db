"""``ToolCallRequest.conversation``: a call the model made shows its plugins the conversation
it comes from, up to the turn that made it; a call from no conversation shows ``None``
(issue 24: the web plugin's URL rule and ``web.max_uses`` read it)."""

from __future__ import annotations

from ikigai_core import AssistantMessage, Conversation, ToolResultsMessage, UserMessage, hookimpl
from tests import test_agent
from tests.test_agent import reply

project = test_agent.project  # the agent's fixture: a user tool ``sleep``, a scripted model


class Watcher:
    """Keeps what each call's ``ikigai_before_tool_call`` saw of the conversation."""

    def __init__(self):
        self.seen = {}

    @hookimpl
    def ikigai_before_tool_call(self, request):
        self.seen[request.call_id] = request.conversation


def test_a_call_sees_its_conversation_up_to_its_own_turn(project, fake_server):
    agent = project()
    watcher = Watcher()
    agent.app.pm.register(watcher, name="watcher")
    fake_server.push(reply("", ("c1", "sleep", {"seconds": 0})),
                     reply("", ("c2", "sleep", {"seconds": 0}), ("c3", "sleep", {"seconds": 0})),
                     reply("done"))
    conversation = Conversation()
    agent.run(conversation, "go")
    first, second, third = (watcher.seen[c] for c in ("c1", "c2", "c3"))
    assert [type(m) for m in first] == [UserMessage, AssistantMessage]
    assert first[0].text == "go" and [c.id for c in first[1].tool_calls] == ["c1"]
    assert second == third and second[:2] == first and len(second) == 4
    assert isinstance(second[2], ToolResultsMessage) and second[2].results[0].call.id == "c1"
    assert [c.id for c in second[3].tool_calls] == ["c2", "c3"]
    assert isinstance(second, tuple) and len(conversation.messages) == 6  # a snapshot


def test_a_call_from_no_conversation_sees_none(project):
    agent = project()
    watcher = Watcher()
    agent.app.pm.register(watcher, name="watcher")
    agent.app.executor.call(agent.registry, "sleep", {"seconds": 0}, call_id="by-hand")
    assert watcher.seen == {"by-hand": None}
