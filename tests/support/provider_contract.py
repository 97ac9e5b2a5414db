"""Wire tests every provider must pass, against the fake server (a real local HTTP server).

A provider's test module subclasses :class:`ProviderContract` as ``Test...``, sets
``provider`` and ``replies``, and says where requests go (``expected_path``) and where
the key travels (``sent_key``). Provider-specific shapes are tested in the provider's
own modules.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import pytest

from ikigai_core.conversation import AssistantMessage, Conversation, ToolCall, UserMessage
from ikigai_core.errors import ProviderError
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.providers import collect_providers
from ikigai_core.transport import send_turn
from tests.support.fakeserver import RecordedRequest, stall_reply, unused_url
from tests.support.replies import ProviderReplies
from tests.support.schemas import builtin_tools

KEY = "test-key-DO-NOT-LEAK-0123456789"
LS = ("call_ls", "bash", {"command": "ls -la"})
READ = ("call_read", "file_read", {"file_path": "a.txt", "limit": 3})


class ProviderContract:
    """Scripted turns through ``send_turn``: shapes, errors, retries, timeouts, secrecy."""

    provider: ClassVar[Any]
    replies: ClassVar[ProviderReplies]
    model: ClassVar[str] = "test-model"

    def expected_target(self, stream: bool) -> tuple[str, dict[str, list[str]]]:
        """The path and query a request for ``self.model`` goes to."""
        raise NotImplementedError

    def sent_key(self, request: RecordedRequest) -> str | None:
        """The API key as the request carried it."""
        raise NotImplementedError

    def environ(self, url: str, **extra: str) -> dict[str, str]:
        return {self.provider.api_key_env[0]: KEY, self.provider.base_url_env: url, **extra}

    def send(self, url: str, *, stream: bool = False, on_text: Any = None,
             extra_env: dict[str, str] | None = None, **kwargs: Any) -> AssistantMessage:
        return send_turn(
            self.provider, Conversation([UserMessage("hi")], system="Be brief."),
            builtin_tools(), model=self.model, stream=stream,
            environ=self.environ(url, **(extra_env or {})), on_text=on_text, **kwargs,
        )

    def failure(self, url: str, **kwargs: Any) -> str:
        with pytest.raises(ProviderError) as info:
            self.send(url, **kwargs)
        message = str(info.value)
        assert "\n" not in message
        assert KEY not in message
        return message

    def calls(self, message: AssistantMessage) -> list[tuple[str, str, Any]]:
        return [(call.id, call.name, call.arguments) for call in message.tool_calls]

    def test_installed_plugin_provides_it(self):
        providers = collect_providers(get_plugin_manager())
        assert type(providers[self.provider.name]) is type(self.provider)

    # -- Successful turns -----------------------------------------------------

    @pytest.mark.parametrize("stream", [False, True])
    def test_request_goes_to_the_model_url_with_the_key(self, fake_server, stream):
        fake_server.push(self.replies.reply("ok", stream=stream))
        self.send(fake_server.url, stream=stream)
        [request] = fake_server.requests
        assert request.method == "POST"
        assert (request.path, request.query) == self.expected_target(stream)
        assert self.sent_key(request) == KEY
        assert KEY not in str(request.json)

    def test_text_turn(self, fake_server):
        fake_server.push(self.replies.reply("Hello there, human."))
        message = self.send(fake_server.url)
        assert message.text == "Hello there, human."
        assert message.tool_calls == ()

    def test_streamed_text_arrives_in_pieces(self, fake_server):
        fake_server.push(self.replies.reply("Hello there, human.", stream=True))
        seen: list[str] = []
        message = self.send(fake_server.url, stream=True, on_text=seen.append)
        assert len(seen) > 1
        assert "".join(seen) == message.text == "Hello there, human."

    @pytest.mark.parametrize("stream", [False, True])
    def test_parallel_tool_calls(self, fake_server, stream):
        fake_server.push(self.replies.reply(calls=[LS, READ], stream=stream))
        message = self.send(fake_server.url, stream=stream)
        assert self.calls(message) == [LS, READ]
        assert message.text == ""

    @pytest.mark.parametrize("stream", [False, True])
    def test_text_then_tool_call(self, fake_server, stream):
        fake_server.push(self.replies.reply("Let me list.", calls=[LS], stream=stream))
        seen: list[str] = []
        message = self.send(fake_server.url, stream=stream, on_text=seen.append)
        assert message.text == "Let me list."
        assert self.calls(message) == [LS]
        assert "".join(seen) == ("Let me list." if stream else "")

    @pytest.mark.parametrize("stream", [False, True])
    def test_usage_is_read_from_the_reply(self, fake_server, stream):
        """The tokens the provider reports (10 in, 5 out; Anthropic's stream ends with
        a cumulative 15 out) reach the status line and the session log."""
        fake_server.push(self.replies.reply("Hi.", stream=stream))
        usage = self.send(fake_server.url, stream=stream).usage
        assert usage is not None and usage.input_tokens == 10
        assert usage.output_tokens in (5, 15)

    def test_stream_answered_with_one_json_body(self, fake_server):
        """Some proxies answer a streaming request with the whole response as JSON."""
        fake_server.push(self.replies.reply("Let me list.", calls=[LS]))
        seen: list[str] = []
        message = self.send(fake_server.url, stream=True, on_text=seen.append)
        assert message.text == "Let me list." and self.calls(message) == [LS]
        assert seen == ["Let me list."]

    def test_call_without_arguments(self, fake_server):
        fake_server.push(self.replies.reply(calls=[("call_x", "bash", {})], stream=True))
        assert self.send(fake_server.url, stream=True).tool_calls == (
            ToolCall("call_x", "bash", {}),
        )

    # -- Broken streams -------------------------------------------------------

    def test_error_event_in_the_middle_of_a_stream(self, fake_server):
        events = self.replies.events("partial answer")
        fake_server.push(self.replies.stream([*events[:2], self.replies.error_event("Overloaded")]))
        message = self.failure(fake_server.url, stream=True)
        assert message.startswith(f"Provider '{self.provider.name}' reported an error mid-stream: ")
        assert "Overloaded" in message

    def test_stream_cut_before_its_end(self, fake_server):
        fake_server.push(self.replies.stream(self.replies.events("partial answer", calls=[LS])[:-1]))
        message = self.failure(fake_server.url, stream=True)
        assert message.startswith(f"Provider '{self.provider.name}' ended the stream before ")

    def test_connection_dropped_mid_stream(self, fake_server):
        fake_server.push(self.replies.stream(self.replies.events("partial answer")[:2], drop=True))
        message = self.failure(fake_server.url, stream=True)
        assert message.startswith(f"Provider '{self.provider.name}' broke off the response: ")

    def test_broken_event(self, fake_server):
        fake_server.push(self.replies.stream([*self.replies.events("partial")[:1],
                                              self.replies.broken_event]))
        message = self.failure(fake_server.url, stream=True)
        assert message.startswith(f"Provider '{self.provider.name}' sent a broken stream event")

    # -- HTTP errors ----------------------------------------------------------

    def test_rejected_key_names_the_variable(self, fake_server):
        fake_server.push(self.replies.error(401, f"invalid x-api-key {KEY}"))
        assert self.failure(fake_server.url) == (
            f"Provider '{self.provider.name}' rejected the API key (HTTP 401): "
            f"set a valid {self.provider.api_key_env[0]}"
        )

    def test_bad_request_quotes_the_provider(self, fake_server):
        fake_server.push(self.replies.error(400, "messages: field required"))
        assert self.failure(fake_server.url) == (
            f"Provider '{self.provider.name}' rejected the request (HTTP 400): "
            "messages: field required"
        )

    @pytest.mark.parametrize("where", [
        "tools.1.custom.input_schema: input_schema does not support oneOf",  # Anthropic
        "Invalid schema for function 'x': tools[1].function.parameters",  # OpenAI
        "Unknown name \"x\" at 'tools[0].function_declarations[1].parameters'",  # Gemini
    ])
    def test_bad_request_naming_a_tool_by_index_names_the_tool(self, fake_server, where):
        fake_server.push(self.replies.error(400, where))
        second = builtin_tools()[1].name
        assert self.failure(fake_server.url).endswith(
            f"{where} (tool 1 is '{second}'; see `ikigai tool check {second}`)")

    def test_unknown_model(self, fake_server):
        fake_server.push(self.replies.error(404, "model not found"))
        assert self.failure(fake_server.url) == (
            f"Model '{self.model}' not found at provider '{self.provider.name}' (HTTP 404): "
            "check --model"
        )

    @pytest.mark.parametrize("stream", [False, True])
    def test_rate_limit_is_retried_after_the_wait_the_server_asks(self, fake_server, stream):
        fake_server.push(self.replies.error(429, "slow down", headers={"retry-after": "0"}),
                         self.replies.reply("finally", stream=stream))
        assert self.send(fake_server.url, stream=stream).text == "finally"
        assert len(fake_server.requests) == 2
        assert fake_server.requests[0].json == fake_server.requests[1].json

    def test_server_errors_exhaust_the_retries(self, fake_server):
        failing = self.replies.error(503, "backend unavailable", headers={"retry-after": "0"})
        fake_server.push(*[failing] * 3)
        assert self.failure(fake_server.url, max_retries=2) == (
            f"Provider '{self.provider.name}' failed (HTTP 503): backend unavailable"
        )
        assert len(fake_server.requests) == 3

    def test_key_echoed_by_the_server_never_appears(self, fake_server):
        fake_server.push(self.replies.error(400, f"key {KEY} is not allowed here"))
        message = self.failure(fake_server.url)
        assert message.endswith("key [redacted] is not allowed here")

    def test_key_echoed_in_a_stream_error_never_appears(self, fake_server):
        fake_server.push(self.replies.stream([self.replies.error_event(f"quota exceeded for {KEY}")]))
        assert "quota exceeded for [redacted]" in self.failure(fake_server.url, stream=True)

    # -- Network --------------------------------------------------------------

    def test_stalled_server_hits_the_read_timeout(self, fake_server):
        fake_server.push(stall_reply(30))
        started = time.monotonic()
        message = self.failure(fake_server.url, extra_env={"IKIGAI_HTTP_TIMEOUT": "0.3"})
        assert time.monotonic() - started < 10
        assert "(read timeout)" in message and "IKIGAI_HTTP_TIMEOUT" in message

    def test_unreachable_base_url(self):
        url = unused_url()
        message = self.failure(url, max_retries=0)
        assert message.startswith(f"Cannot reach provider '{self.provider.name}' at {url}: ")
        assert message.endswith(f"; check {self.provider.base_url_env}")

