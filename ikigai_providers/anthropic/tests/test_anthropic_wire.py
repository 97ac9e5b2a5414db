"""Anthropic Messages on the wire, against a real local HTTP server."""

from __future__ import annotations

from ikigai_provider_anthropic.serializer import AnthropicSerializer

from ikigai_core.conversation import ToolCall
from tests.support.fakeserver import RecordedRequest, sse_reply
from tests.support.provider_contract import LS, ProviderContract
from tests.support.replies import REPLIES


class TestAnthropicWire(ProviderContract):
    provider = AnthropicSerializer()
    replies = REPLIES["anthropic"]

    def expected_target(self, stream):
        return "/v1/messages", {}

    def sent_key(self, request: RecordedRequest):
        assert request.headers["anthropic-version"] == "2023-06-01"
        return request.headers["x-api-key"]

    def test_overloaded_529_is_retried(self, fake_server):
        fake_server.push(self.replies.error(529, "Overloaded", headers={"retry-after": "0"}),
                         self.replies.reply("ok"))
        assert self.send(fake_server.url).text == "ok"
        assert len(fake_server.requests) == 2

    def test_broken_input_json_is_reported_on_the_call(self, fake_server):
        fake_server.push(self.replies.reply(calls=[("toolu_1", "bash", '{"command": "ls'), LS],
                                            stream=True))
        broken, fine = self.send(fake_server.url, stream=True).tool_calls
        assert (broken.id, broken.arguments) == ("toolu_1", None)
        assert broken.arguments_error.startswith("arguments are not valid JSON")
        assert fine == ToolCall(*LS)

    def test_unknown_events_and_thinking_blocks(self, fake_server):
        """Unknown event types are ignored; thinking blocks are kept for the next request."""
        fake_server.push(sse_reply([
            ("message_start", {"type": "message_start", "message": {"content": []}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "thinking", "thinking": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "thinking_delta", "thinking": "Hmm."}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "signature_delta", "signature": "sig=="}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("brand_new_event", {"type": "brand_new_event", "whatever": 1}),
            ("content_block_start", {"type": "content_block_start", "index": 1,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                     "delta": {"type": "text_delta", "text": "Done."}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                     "delta": {"type": "citations_delta", "citation": {}}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            ("message_stop", {"type": "message_stop"}),
        ]))
        message = self.send(fake_server.url, stream=True)
        assert message.text == "Done."
        assert message.stop_reason == "end_turn"
        assert message.raw == [
            {"type": "thinking", "thinking": "Hmm.", "signature": "sig=="},
            {"type": "text", "text": "Done."},
        ]

    def test_default_base_url(self):
        request = self.provider.http_request({}, model="m", stream=True, api_key="k", environ={})
        assert request.url == "https://api.anthropic.com/v1/messages"
