"""OpenAI Chat Completions on the wire, against a real local HTTP server."""

from __future__ import annotations

import pytest
from ikigai_provider_openai.serializer import OpenAISerializer

from ikigai_core.conversation import ToolCall
from tests.support.fakeserver import RecordedRequest, sse_reply
from tests.support.provider_contract import LS, ProviderContract
from tests.support.replies import REPLIES


class TestOpenAIWire(ProviderContract):
    provider = OpenAISerializer()
    replies = REPLIES["openai"]

    def expected_target(self, stream):
        return "/chat/completions", {}

    def sent_key(self, request: RecordedRequest):
        return request.headers["authorization"].removeprefix("Bearer ")

    def test_streaming_asks_for_usage(self, fake_server):
        fake_server.push(self.replies.reply("ok", stream=True))
        self.send(fake_server.url, stream=True)
        body = fake_server.requests[0].json
        assert body["stream"] is True
        assert body["stream_options"] == {"include_usage": True}

    @pytest.mark.parametrize("stream", [False, True])
    def test_broken_argument_json_is_reported_on_the_call(self, fake_server, stream):
        fake_server.push(self.replies.reply(calls=[("call_1", "bash", '{"command": "ls'),
                                                   LS], stream=stream))
        broken, fine = self.send(fake_server.url, stream=stream).tool_calls
        assert (broken.id, broken.name, broken.arguments) == ("call_1", "bash", None)
        assert broken.arguments_error.startswith("arguments are not valid JSON")
        assert fine == ToolCall(*LS)

    def test_stream_with_finish_reason_but_no_done_is_incomplete(self, fake_server):
        fake_server.push(sse_reply(self.replies.events("hi")[:-1]))
        assert self.failure(fake_server.url, stream=True) == (
            "Provider 'openai' ended the stream before data: [DONE]: "
            "the response is incomplete; try again"
        )

    def test_default_base_url(self):
        request = self.provider.http_request({}, model="m", stream=False, api_key="k",
                                             environ={"OPENAI_WIRE": "chat"})
        assert request.url == "https://api.openai.com/v1/chat/completions"
        assert "Accept" not in request.headers
