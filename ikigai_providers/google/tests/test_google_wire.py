"""Google Gemini on the wire, against a real local HTTP server."""

from __future__ import annotations

import pytest
from ikigai_provider_google.serializer import SYNTHETIC_ID, GoogleSerializer

from ikigai_core.conversation import Conversation, ToolCall, ToolResult, ToolResultsMessage
from ikigai_core.errors import ProviderError
from ikigai_core.transport import send_turn
from tests.support.fakeserver import RecordedRequest, json_reply, sse_reply
from tests.support.provider_contract import KEY, LS, READ, ProviderContract
from tests.support.replies import REPLIES


class TestGoogleWire(ProviderContract):
    provider = GoogleSerializer()
    replies = REPLIES["google"]

    def expected_target(self, stream):
        if stream:
            return "/v1beta/models/test-model:streamGenerateContent", {"alt": ["sse"]}
        return "/v1beta/models/test-model:generateContent", {}

    def sent_key(self, request: RecordedRequest):
        return request.headers["x-goog-api-key"]

    def test_google_api_key_wins_over_gemini_api_key(self, fake_server):
        fake_server.push(self.replies.reply("ok"))
        environ = {"GEMINI_API_KEY": "gemini-key", "GOOGLE_API_KEY": KEY,
                   "GOOGLE_GEMINI_BASE_URL": fake_server.url}
        send_turn(self.provider, Conversation(), [], model="m", stream=False, environ=environ)
        assert fake_server.requests[0].headers["x-goog-api-key"] == KEY

    def test_invalid_key_answered_with_400(self, fake_server):
        fake_server.push(json_reply({"error": {
            "code": 400, "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                         "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}},
            status=400))
        assert self.failure(fake_server.url) == (
            "Provider 'google' rejected the API key (HTTP 400): set a valid GOOGLE_API_KEY"
        )

    def test_rejected_key_names_gemini_api_key_when_only_it_is_set(self, fake_server):
        fake_server.push(json_reply({"error": {"code": 400, "message": "API key not valid.",
                                               "details": [{"reason": "API_KEY_INVALID"}]}},
                                    status=400))
        with pytest.raises(ProviderError) as info:
            send_turn(self.provider, Conversation(), [], model="m", stream=False, max_retries=0,
                      environ={"GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": fake_server.url})
        assert str(info.value) == (
            "Provider 'google' rejected the API key (HTTP 400): set a valid GEMINI_API_KEY"
        )

    def test_calls_without_ids_get_stable_ids_that_are_never_sent_back(self, fake_server):
        first = self.replies.reply(calls=[("", "bash", {"command": "ls"}),
                                          ("", "bash", {"command": "pwd"})])
        fake_server.push(first, first)
        turn = self.send(fake_server.url)
        again = self.send(fake_server.url)
        ids = [call.id for call in turn.tool_calls]
        assert all(i.startswith(SYNTHETIC_ID) for i in ids) and len(set(ids)) == 2
        assert ids == [call.id for call in again.tool_calls]

        results = ToolResultsMessage(tuple(ToolResult(c, {"tool_success": True, "result": {}})
                                           for c in turn.tool_calls))
        body = self.provider.request_body(Conversation([turn, results]), [], model="m", stream=False)
        sent_calls = [p["functionCall"] for p in body["contents"][0]["parts"]]
        answers = [p["functionResponse"] for p in body["contents"][1]["parts"]]
        assert all("id" not in c for c in sent_calls + answers)

    def test_streamed_turn_keeps_every_part_with_its_signature(self, fake_server):
        fake_server.push(self.replies.reply("Listing.", calls=[LS, READ], stream=True))
        message = self.send(fake_server.url, stream=True)
        parts = message.raw["parts"]
        assert message.raw["role"] == "model"
        assert "".join(p.get("text", "") for p in parts) == "Listing."
        calls = [p for p in parts if "functionCall" in p]
        assert calls[0]["thoughtSignature"] == self.replies.signature
        assert message.stop_reason == "STOP"
        assert message.tool_calls == (ToolCall(*LS), ToolCall(*READ))

    def test_thought_parts_are_not_shown(self, fake_server):
        fake_server.push(sse_reply([
            {"candidates": [{"content": {"role": "model", "parts": [
                {"text": "thinking about it", "thought": True}]}}]},
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Answer."}]},
                             "finishReason": "STOP"}]},
        ]))
        seen: list[str] = []
        message = self.send(fake_server.url, stream=True, on_text=seen.append)
        assert seen == ["Answer."] and message.text == "Answer."
        assert len(message.raw["parts"]) == 2

    def test_blocked_prompt(self, fake_server):
        blocked = {"promptFeedback": {"blockReason": "SAFETY"}}
        fake_server.push(json_reply(blocked), sse_reply([blocked]))
        expected = "Provider 'google' returned no answer: the prompt was blocked (SAFETY)"
        assert self.failure(fake_server.url) == expected
        assert self.failure(fake_server.url, stream=True) == expected

    def test_empty_candidates_and_usage_only_chunks(self, fake_server):
        fake_server.push(json_reply({"candidates": []}), sse_reply([
            {"usageMetadata": {"promptTokenCount": 1}},
            {"candidates": [{"finishReason": "MAX_TOKENS"}]},
        ]))
        assert self.failure(fake_server.url) == "Provider 'google' returned no answer"
        message = self.send(fake_server.url, stream=True)
        assert (message.text, message.raw, message.stop_reason) == ("", None, "MAX_TOKENS")

    def test_arguments_that_are_not_an_object(self, fake_server):
        fake_server.push(json_reply(self.replies._response(
            [{"functionCall": {"id": "c1", "name": "bash", "args": [1, 2]}}], "STOP")))
        [call] = self.send(fake_server.url).tool_calls
        assert (call.id, call.arguments, call.arguments_error) == (
            "c1", None, "arguments are not a JSON object")

    def test_default_base_url_and_model_prefix(self):
        request = self.provider.http_request({}, model="models/gemini-x", stream=True,
                                             api_key="k", environ={})
        assert request.url == (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-x:"
            "streamGenerateContent?alt=sse"
        )
