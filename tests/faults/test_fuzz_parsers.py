"""Parsers fed by strangers, fuzzed with hypothesis: tool stdout, ``--schema`` output, SSE,
each provider's stream and response parser, and the transport against a real local server.

Every failure must be a clear error (``ValueError``/``ProviderError`` with a message, or a
reason string) — never another exception. Budgets are small by default; ``-m slow`` runs
bigger ones.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ikigai_core.conversation import AssistantMessage, Conversation, TextDelta, UserMessage
from ikigai_core.errors import ProviderError
from ikigai_core.execution import validate_arguments
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.providers import collect_providers
from ikigai_core.sse import ServerSentEvent, iter_lines, iter_sse
from ikigai_core.strictjson import loads_object
from ikigai_core.tool_schema import validate_schema
from ikigai_core.transport import send_turn
from tests.faults.support import as_tool
from tests.support.fakeserver import Reply, json_reply, sse_event
from tests.support.replies import REPLIES

FAST = settings(max_examples=60, deadline=None)
SLOW = settings(max_examples=2000, deadline=None)
PROVIDERS = sorted(REPLIES)
READ_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError)
"""What the transport turns into a one-line ProviderError while it reads a response."""

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=16,
)


@st.composite
def mangled(draw, value_strategy=json_values) -> bytes:
    """JSON text, then maybe cut, spliced with junk, or wrapped in deep nesting."""
    text = json.dumps(draw(value_strategy)).encode()
    how = draw(st.sampled_from(["whole", "cut", "junk", "deep", "bytes"]))
    if how == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if how == "junk":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.binary(max_size=8)) + text[at:]
    if how == "deep":
        depth = draw(st.integers(1, 200_000))
        return b"[" * depth + text + b"]" * draw(st.integers(0, depth))
    return text if how == "whole" else draw(st.binary(max_size=64))


# --- tool stdout ---------------------------------------------------------------------------

def check_loads(data: bytes) -> None:
    try:
        value = loads_object(data)
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(value, dict)


@FAST
@given(mangled())
@example(b"{" * 100_000)
@example(b'{"a": 1e999}')
@example(b'{"a": "\xed\xa0\x80"}')  # an encoded surrogate is not UTF-8
def test_tool_stdout_is_an_object_or_a_clear_error(data):
    check_loads(data)


@pytest.mark.slow
@SLOW
@given(mangled())
def test_tool_stdout_big_budget(data):
    check_loads(data)


# --- --schema output -----------------------------------------------------------------------

subschemas = st.recursive(
    st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["string", "integer", "object", "array", "nope", 3]),
        "pattern": st.sampled_from(["^a+$", "(", "[", "\\", "a{2,1}", "(?P<x>a)"]),
        "$ref": st.sampled_from(["#", "#/properties", "#/definitions/x", "http://127.0.0.1:9/s",
                                 "other.json", ""]),
        "minimum": st.one_of(st.integers(), st.text(max_size=2)),
        "enum": st.lists(json_values, max_size=3),
        "format": st.sampled_from(["regex", "date", "email", "nonsense"]),
    }),
    lambda inner: st.fixed_dictionaries({}, optional={
        "properties": st.dictionaries(st.text(max_size=3), inner, max_size=3),
        "items": inner, "additionalProperties": inner | st.booleans(),
        "patternProperties": st.dictionaries(st.sampled_from(["^a", "(", "x*"]), inner,
                                             max_size=2),
        "anyOf": st.lists(inner, max_size=2),
        "definitions": st.dictionaries(st.just("x"), inner, max_size=1),
    }),
    max_leaves=8,
)
tool_schemas = st.fixed_dictionaries({
    "name": st.one_of(st.text(max_size=5), st.integers()),
    "description": st.one_of(st.text(max_size=5), st.none()),
    "parameters": st.one_of(
        subschemas.map(lambda s: {**s, "type": "object"}), json_values),
}, optional={"$schema": st.one_of(st.text(max_size=4), st.lists(st.integers(), max_size=2))})


def check_schema(schema: dict[str, Any], arguments: Any) -> None:
    """A schema is usable or has a reason; a usable one checks any arguments without raising."""
    if "$schema" in schema and isinstance(schema["parameters"], dict):
        schema["parameters"]["$schema"] = schema.pop("$schema")
    problem = validate_schema(schema)
    if problem is not None:
        assert isinstance(problem, str) and problem
        return
    tool = as_tool(__import__("pathlib").Path("/nonexistent/fuzz-tool"), schema["parameters"])
    result = validate_arguments(tool, arguments)
    assert result is None or (isinstance(result, str) and "\n" not in result)


@FAST
@given(tool_schemas, json_values)
@example({"name": "x", "description": "d", "parameters": {"type": "object", "$ref": "#"}}, {})
def test_schema_output_is_usable_or_skipped_with_a_reason(schema, arguments):
    check_schema(schema, arguments)


@pytest.mark.slow
@SLOW
@given(tool_schemas, json_values)
def test_schema_output_big_budget(schema, arguments):
    check_schema(schema, arguments)


# --- server-sent events --------------------------------------------------------------------

sse_lines = st.lists(st.one_of(
    st.sampled_from([b"data: x", b"data:", b"event: e", b"id: 1", b"id: \x00", b": note",
                     b"retry: 5", b"", b"\r", b"\xef\xbb\xbf", b"\xff", b"data: {\"a\"", b"field"]),
    st.binary(max_size=12),
), max_size=30)


@FAST
@given(sse_lines, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.integers(1, 7))
def test_sse_never_raises_and_yields_only_events(lines, newline, chunk):
    stream = newline.join(lines)
    chunks = [stream[i:i + chunk] for i in range(0, len(stream), chunk)]
    for event in iter_sse(iter_lines(chunks)):
        assert isinstance(event, ServerSentEvent) and isinstance(event.data, str)


# --- provider parsers ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def providers():
    return collect_providers(get_plugin_manager(environ={}))


calls = st.lists(st.tuples(
    st.sampled_from(["c1", "c2", ""]), st.sampled_from(["bash", "grep", ""]),
    st.one_of(st.dictionaries(st.text(max_size=3), json_values, max_size=2),
              st.sampled_from(['{"a": ', "[1]", "", "null", "{" * 5000, '{"a": NaN}', "}{"])),
), max_size=3)


def wire_chunks(items: list) -> list[bytes]:
    """The bytes of each stream item of tests/support/replies.py."""
    return [item if isinstance(item, bytes) else item.encode() if isinstance(item, str)
            else sse_event(item[1], item[0]) if isinstance(item, tuple) else sse_event(item)
            for item in items]


@st.composite
def hostile_stream(draw, provider: str) -> bytes:
    """A provider's real stream, then cut, interleaved with unknown or broken events."""
    chunks = wire_chunks(REPLIES[provider].events(draw(st.text(max_size=10)), draw(calls)))
    for _ in range(draw(st.integers(0, 3))):
        chunks.insert(draw(st.integers(0, len(chunks))), draw(st.sampled_from([
            sse_event({"type": "mystery", "x": 1}, "mystery"), sse_event("{broken"),
            sse_event([1, 2]), sse_event({"choices": [{"delta": {"tool_calls": [{"index": 9}]}}]}),
            sse_event({"type": "content_block_delta", "index": 7, "delta": {}}),
            sse_event({"candidates": [{"content": {"parts": [{"functionCall": {}}]}}]}),
            sse_event({"error": "boom"}), b": comment\n\n", b"event: ping\ndata: {}\n\n",
            sse_event("[" * 50_000),
        ])))
    stream = b"".join(chunks)
    if draw(st.booleans()):
        stream = stream[: draw(st.integers(0, len(stream)))]
    return stream


def read_stream(provider, stream: bytes) -> None:
    events = iter_sse(iter_lines([stream[i:i + 97] for i in range(0, len(stream), 97)]))
    try:
        items = list(provider.parse_stream(events))
    except ProviderError as exc:
        assert str(exc) and "\n" not in str(exc)
    except READ_ERRORS as exc:  # the transport reports these as "sent a response ikigai cannot read"
        assert type(exc).__name__
    else:
        assert all(isinstance(i, TextDelta) for i in items[:-1])
        assert not items or isinstance(items[-1], (AssistantMessage, TextDelta))


@pytest.mark.parametrize("name", PROVIDERS)
@FAST
@given(data=st.data())
def test_provider_stream_parser_fails_only_clearly(providers, name, data):
    read_stream(providers[name], data.draw(hostile_stream(name)))


@pytest.mark.slow
@pytest.mark.parametrize("name", PROVIDERS)
@SLOW
@given(data=st.data())
def test_provider_stream_parser_big_budget(providers, name, data):
    read_stream(providers[name], data.draw(hostile_stream(name)))


def mutate(value: Any, data: st.DataObject) -> Any:
    """``value`` with one nested member replaced by arbitrary JSON or removed."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        if data.draw(st.booleans()):
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: mutate(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(value) - 1))
        return [*value[:at], mutate(value[at], data), *value[at + 1:]]
    return data.draw(json_values)


def read_response(provider, body: Any) -> None:
    try:
        message = provider.parse_response(body)
    except ProviderError as exc:
        assert str(exc) and "\n" not in str(exc)
    except READ_ERRORS:
        pass
    else:
        assert isinstance(message, AssistantMessage)


@pytest.mark.parametrize("name", PROVIDERS)
@FAST
@given(data=st.data())
def test_provider_response_parser_fails_only_clearly(providers, name, data):
    body = REPLIES[name].body(data.draw(st.text(max_size=5)), data.draw(calls))
    for _ in range(data.draw(st.integers(1, 3))):
        body = mutate(body, data)
    if isinstance(body, dict):
        read_response(providers[name], body)


# --- through the transport, against a real local server --------------------------------------

def turn(provider, server_url: str, *, stream: bool, timeout: str = "5") -> AssistantMessage:
    conversation = Conversation()
    conversation.add(UserMessage("hi"))
    environ = {**{var: "sk-fuzz" for var in provider.api_key_env},
               provider.base_url_env: server_url, "IKIGAI_HTTP_TIMEOUT": timeout}
    return send_turn(provider, conversation, [], model="m", stream=stream, environ=environ,
                     max_retries=0)


@pytest.mark.parametrize("name", PROVIDERS)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_transport_turns_any_cut_or_dropped_stream_into_a_provider_error(
    providers, fake_server, name, data
):
    stream = data.draw(hostile_stream(name))
    cut = data.draw(st.integers(0, len(stream)))
    fake_server.push(Reply(200, {"Content-Type": "text/event-stream"},
                           chunks=[stream[:cut], stream[cut:]] if cut < len(stream) else [stream],
                           drop=data.draw(st.booleans())))
    try:
        message = turn(providers[name], fake_server.url, stream=True)
    except ProviderError as exc:
        assert str(exc) and "\n" not in str(exc) and "sk-fuzz" not in str(exc)
    else:
        assert isinstance(message, AssistantMessage)


@pytest.mark.parametrize("name", PROVIDERS)
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=mangled())
def test_transport_turns_any_json_body_into_a_turn_or_a_provider_error(
    providers, fake_server, name, body
):
    fake_server.push(json_reply(body))
    try:
        message = turn(providers[name], fake_server.url, stream=False)
    except ProviderError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(message, AssistantMessage)


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_server_that_stalls_mid_body_hits_the_read_timeout(providers, fake_server, name, stream):
    whole = (b"".join(wire_chunks(REPLIES[name].events("hi"))) if stream
             else json.dumps(REPLIES[name].body("hi")).encode())
    kind = "text/event-stream" if stream else "application/json"
    fake_server.push(Reply(200, {"Content-Type": kind}, chunks=[whole[: len(whole) // 2]],
                           stall=3))
    with pytest.raises(ProviderError, match="read timeout|stalled"):
        turn(providers[name], fake_server.url, stream=stream, timeout="0.3")
    assert os.environ.get("IKIGAI_HTTP_TIMEOUT") is None
