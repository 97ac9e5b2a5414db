"""The pure wire helpers every provider shares: error lines, events, tool-call arguments."""

from __future__ import annotations

import pytest

from ikigai_core.conversation import ToolCall
from ikigai_core.errors import ProviderError
from ikigai_core.wire import (
    TurnBuilder,
    base_url,
    error_body_message,
    http_error_message,
    load_object,
    one_line,
    parse_tool_call,
    stream_error,
    stream_incomplete,
)


class Named:
    name = "acme"
    api_key_env = ("ACME_KEY", "ACME_OTHER_KEY")


def line(status: int, body: bytes = b"", key_env: str | None = "ACME_KEY", **kwargs) -> str:
    return http_error_message(Named(), status, body, model="m-1", key_env=key_env, **kwargs)


@pytest.mark.parametrize("body, expected", [
    (b'{"error": {"message": "Invalid  model\\n name", "type": "x"}}', "Invalid model name"),
    (b'{"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}', "bad"),
    (b'[{"error": {"code": 400, "message": "gemini says no", "status": "INVALID_ARGUMENT"}}]',
     "gemini says no"),
    (b'{"error": "plain string"}', "plain string"),
    (b'{"message": "top level"}', "top level"),
    (b"<html><body>Bad Gateway</body></html>", "<html><body>Bad Gateway</body></html>"),
    (b"", None),
    (b"[]", None),
    (b"42", None),
    (b'{"error": {"message": "  "}}', None),
    (b'{"error": {"code": 3}}', None),
])
def test_error_body_message(body, expected):
    assert error_body_message(body) == expected


def test_long_messages_are_cut():
    assert one_line("x" * 400) == "x" * 297 + "..."
    assert one_line("a\n b\tc", limit=10) == "a b c"


def test_401_names_the_key_variable_never_the_body():
    body = b'{"error": {"message": "Incorrect API key provided: sk-abc***xyz"}}'
    assert line(401, body) == "Provider 'acme' rejected the API key (HTTP 401): set a valid ACME_KEY"


def test_401_without_a_key_names_every_variable():
    assert line(401, key_env=None) == (
        "Provider 'acme' wants an API key (HTTP 401): set ACME_KEY or ACME_OTHER_KEY"
    )
    assert line(403, key_env=None).endswith("check that ACME_KEY or ACME_OTHER_KEY may use model 'm-1'")


def test_other_status_marked_as_key_rejection():
    assert line(400, b"{}", key_rejected=True) == (
        "Provider 'acme' rejected the API key (HTTP 400): set a valid ACME_KEY"
    )


def test_403_404_400_429_and_others():
    assert line(403, b'{"error": {"message": "no access"}}') == (
        "Provider 'acme' refused the request (HTTP 403): no access; "
        "check that ACME_KEY may use model 'm-1'"
    )
    assert line(403).startswith("Provider 'acme' refused the request (HTTP 403): permission denied;")
    assert line(404) == "Model 'm-1' not found at provider 'acme' (HTTP 404): check --model"
    assert line(400, b'{"error": {"message": "max_tokens too big"}}') == (
        "Provider 'acme' rejected the request (HTTP 400): max_tokens too big"
    )
    assert line(400) == "Provider 'acme' rejected the request (HTTP 400): no reason given"
    assert line(429) == (
        "Provider 'acme' is rate limiting (HTTP 429): too many requests; try again later"
    )
    assert line(503, b"Service Unavailable") == (
        "Provider 'acme' failed (HTTP 503): Service Unavailable"
    )
    assert line(500) == "Provider 'acme' failed (HTTP 500): no reason given"


def test_base_url_default_override_and_trailing_slash():
    assert base_url({}, "ACME_BASE_URL", "https://api.acme.test/v1/") == "https://api.acme.test/v1"
    assert base_url({"ACME_BASE_URL": ""}, "ACME_BASE_URL", "https://d") == "https://d"
    assert base_url({"ACME_BASE_URL": "http://h:1/"}, "ACME_BASE_URL", "https://d") == "http://h:1"


def test_load_object():
    assert load_object("acme", '{"a": 1}') == {"a": 1}
    with pytest.raises(ProviderError, match=r"^Provider 'acme' sent a broken stream event \(.*\): \{\"a\":$"):
        load_object("acme", '{"a":')
    with pytest.raises(ProviderError, match="^Provider 'acme' sent a stream event that is not a JSON object: 3$"):
        load_object("acme", "3")


def test_stream_errors():
    assert str(stream_error("acme", {"error": {"type": "overloaded_error", "message": "Overloaded"}})) == (
        "Provider 'acme' reported an error mid-stream: overloaded_error: Overloaded; try again"
    )
    assert str(stream_error("acme", {"error": {"code": 500, "status": "INTERNAL"}})) == (
        "Provider 'acme' reported an error mid-stream: INTERNAL: no message; try again"
    )
    assert str(stream_error("acme", {"error": {"message": "m"}})).endswith("mid-stream: m; try again")
    assert str(stream_error("acme", {"error": "text"})).endswith("mid-stream: text; try again")
    assert str(stream_error("acme", {})).endswith("mid-stream: no message; try again")
    assert str(stream_incomplete("acme", "message_stop")) == (
        "Provider 'acme' ended the stream before message_stop: the response is incomplete; try again"
    )


def test_parse_tool_call():
    assert parse_tool_call("c1", "bash", '{"command": "ls"}') == ToolCall("c1", "bash", {"command": "ls"})
    assert parse_tool_call("c1", "bash", "  ") == ToolCall("c1", "bash", {})
    broken = parse_tool_call("c1", "bash", '{"command": "ls"')
    assert broken.arguments is None
    assert broken.arguments_error.startswith("arguments are not valid JSON (")
    assert parse_tool_call("c1", "bash", "[1]").arguments_error == "arguments are not a JSON object: [1]"
    assert parse_tool_call("c1", "bash", {"command": "ls"}) == ToolCall("c1", "bash", {"command": "ls"})
    assert parse_tool_call("c1", "bash", 3).arguments_error == "arguments are not a JSON object"


def test_turn_builder_gathers_text_and_calls_in_fragments():
    """A stream's pieces make one turn: text handed on as it came, a call's id and name
    from its first fragment, its argument text joined, calls in index order."""
    turn = TurnBuilder(("in", "out"))
    turn.add_text("Let ")
    turn.add_call(1, "c2", "file_read", '{"file_path"')
    assert [d.text for d in turn.deltas()] == ["Let "]
    turn.add_text("me.")
    turn.add_text(None)
    turn.add_call(1, "ignored", None, ': "a"}')
    turn.add_call(0, "c1", "bash", {"command": "ls"})
    turn.stop("tool_use")
    turn.stop(None)
    turn.add_usage({"in": 10, "out": 1})
    turn.add_usage({"out": 5})
    turn.add_usage("not usage")
    assert [d.text for d in turn.deltas()] == ["me."]
    assert turn.call_texts() == [("c1", "bash", ""), ("c2", "file_read", '{"file_path": "a"}')]
    message = turn.message(raw="as sent")
    assert (message.text, message.raw, message.stop_reason) == ("Let me.", "as sent", "tool_use")
    assert message.tool_calls == (ToolCall("c1", "bash", {"command": "ls"}),
                                  ToolCall("c2", "file_read", {"file_path": "a"}))
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 5)


def test_a_turn_without_usage_says_none():
    assert TurnBuilder(("in", "out")).message().usage is None
