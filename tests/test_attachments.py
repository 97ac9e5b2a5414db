"""Binary content a tool gives beside its result (issue 11): carried from the outcome to
the conversation, bounded per call, and sent only where the provider takes it."""

from __future__ import annotations

import json

from ikigai_provider_anthropic.serializer import AnthropicSerializer

from ikigai_core import Attachment, ToolCandidate, ToolOutcome, ToolScan, hookimpl
from ikigai_core.agent import Agent
from ikigai_core.app import App
from ikigai_core.attachments import MAX_ATTACHMENT_BYTES, within_limit
from ikigai_core.conversation import Conversation
from tests.support.replies import REPLIES

BIG = Attachment("image/png", b"\x89PNG" + b"0" * (MAX_ATTACHMENT_BYTES - 1004))
SMALL = Attachment("image/gif", b"GIF89a" + b"1" * 994)
TOO_MANY = Attachment("image/jpeg", b"\xff\xd8" + b"2" * 10)


class Camera:
    """A plugin whose long-lived ``snap`` tool returns three images and a line for each."""

    name, precedence = "camera", 15

    @hookimpl
    def ikigai_tool_sources(self):
        return [self]

    def scan(self):
        schema = {"name": "snap", "description": "take pictures",
                  "parameters": {"type": "object", "properties": {}}}
        return ToolScan([ToolCandidate("snap", ("camera:snap",), schema=schema, runner=self)])

    def call(self, tool, arguments, *, timeout, cancelled):
        return ToolOutcome(tool.name, result={"text": "three pictures"},
                           attachments=(BIG, SMALL, TOO_MANY))


def test_within_limit_keeps_attachments_in_order_while_they_fit():
    assert within_limit([BIG, SMALL, TOO_MANY]) == (BIG, SMALL)
    assert within_limit([SMALL, TOO_MANY], limit=1000) == (SMALL,)
    assert within_limit([]) == ()
    assert SMALL.base64.startswith("R0lGODlh")


def test_an_agent_turn_sends_at_most_the_limit_of_images(approve_all, isolated_home, tmp_path,
                                                         fake_server):
    app = App(environ={"IKIGAI_HOME": str(isolated_home), "ANTHROPIC_API_KEY": "k",
                       "ANTHROPIC_BASE_URL": fake_server.url}, cwd=tmp_path)
    app.pm.register(Camera(), name="camera")
    replies = REPLIES["anthropic"]
    fake_server.push(replies.reply(calls=[("toolu_1", "snap", {})]), replies.reply("Nice."))
    agent = Agent(app, AnthropicSerializer(), "claude-x", registry=app.registry(), stream=False)
    conversation = Conversation()
    assert agent.run(conversation, "take pictures").text == "Nice."
    [result] = conversation.messages[2].results
    assert result.attachments == (BIG, SMALL)
    assert "attachments" not in result.envelope
    [block] = fake_server.requests[1].json["messages"][-1]["content"]
    text, *images = block["content"]
    assert json.loads(text["text"]) == {"tool_success": True, "result": {"text": "three pictures"}}
    assert [image["source"]["media_type"] for image in images] == ["image/png", "image/gif"]
    assert images[1]["source"]["data"] == SMALL.base64
