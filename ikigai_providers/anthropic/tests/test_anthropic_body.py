"""Anthropic tool declarations and the Messages request body (pure functions)."""

from __future__ import annotations

import json

import pytest
from ikigai_provider_anthropic.serializer import AnthropicSerializer

from ikigai_core import Attachment
from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from tests.support.conversations import ERROR_ENVELOPE, OK_ENVELOPE, full_conversation
from tests.support.replies import REPLIES
from tests.support.schemas import BUILTIN, NESTED, NO_PARAMETERS, builtin_tool, builtin_tools, tool

anthropic = AnthropicSerializer()


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_schemas_pass_through_unchanged(name):
    assert anthropic.fit_tool(builtin_tool(name)).declaration == {
        "name": name, "description": BUILTIN[name]["description"],
        "input_schema": BUILTIN[name]["parameters"],
    }


@pytest.mark.parametrize("parameters", [NESTED, NO_PARAMETERS])
def test_nested_optional_enum_and_array_schemas_pass_through_unchanged(parameters):
    assert anthropic.fit_tool(tool("t", parameters)).declaration["input_schema"] == parameters


def test_a_top_level_any_of_of_required_sets_moves_into_the_description():
    schema = {"type": "object", "required": ["id"],
              "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                             "body": {"type": "string"}},
              "anyOf": [{"required": ["title"]}, {"required": ["body"]}]}
    fit = anthropic.fit_tool(tool("t", schema))
    assert fit.status == "rewritten"
    assert fit.declaration["input_schema"] == {
        "type": "object", "required": ["id"], "properties": schema["properties"],
        "description": "Give at least one of these sets of properties: (title); (body)."}


def test_top_level_one_of_alternatives_become_one_object():
    schema = {"oneOf": [
        {"type": "object", "properties": {"script": {"type": "string"}, "n": {"type": "integer"}},
         "required": ["script", "n"]},
        {"type": "object", "properties": {"image": {"type": "string"}, "n": {"type": "integer"}},
         "required": ["image", "n"]}]}
    out = anthropic.fit_tool(tool("t", schema)).declaration["input_schema"]
    assert out == {"type": "object", "required": ["n"],
                   "properties": {"script": {"type": "string"}, "n": {"type": "integer"},
                                  "image": {"type": "string"}},
                   "description": "Give exactly one of these sets of properties: "
                                  "(script, n); (image, n)."}


def test_a_top_level_all_of_is_merged():
    schema = {"allOf": [{"$ref": "#/definitions/base"},
                        {"properties": {"text": {"type": "string"}}, "required": ["text"]}],
              "definitions": {"base": {"type": "object", "required": ["channel"],
                                       "properties": {"channel": {"type": "string"}}}}}
    out = anthropic.fit_tool(tool("t", schema)).declaration["input_schema"]
    assert out["type"] == "object" and "allOf" not in out
    assert out["required"] == ["channel", "text"]
    assert set(out["properties"]) == {"channel", "text"}


def test_property_names_the_api_rejects_leave_the_tool_out():
    schema = {"type": "object", "properties": {"$top": {"type": "integer"},
                                               "ok.name-1": {"type": "string"}}}
    fit = anthropic.fit_tool(tool("t", schema))
    assert fit.declaration is None
    assert fit.reason == "property names must be 1-64 of a-z A-Z 0-9 _ . -: $top"


def test_full_conversation_body():
    body = anthropic.request_body(full_conversation(), builtin_tools(), model="claude-x",
                                  stream=True)
    assert body["model"] == "claude-x"
    assert body["max_tokens"] == 8192
    assert body["system"] == "You are terse."
    assert body["stream"] is True
    assert [t["name"] for t in body["tools"]] == [
        "bash", "file_edit", "file_read", "file_write", "glob", "grep"
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Summarize the README and list TODOs"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "call_read", "name": "file_read",
             "input": {"file_path": "README.md"}},
            {"type": "tool_use", "id": "call_grep", "name": "grep",
             "input": {"pattern": "TODO", "path": "nowhere"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_read", "content": json.dumps(OK_ENVELOPE)},
            {"type": "tool_result", "tool_use_id": "call_grep", "content": json.dumps(ERROR_ENVELOPE),
             "is_error": True},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is about ikigai; grep failed."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ]


def test_text_after_results_joins_their_user_message_after_them():
    call = ToolCall("t1", "bash", {"command": "ls"})
    conversation = Conversation([
        UserMessage("go"),
        AssistantMessage(tool_calls=(call,)),
        ToolResultsMessage((ToolResult(call, OK_ENVELOPE),)),
        UserMessage("stop there"),
    ])
    messages = anthropic.request_body(conversation, [], model="m", stream=False)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]


def test_empty_assistant_turns_are_left_out():
    empty = anthropic.parse_response(REPLIES["anthropic"].body())
    conversation = Conversation([UserMessage("a"), empty, AssistantMessage(), UserMessage("b")])
    messages = anthropic.request_body(conversation, [], model="m", stream=False)["messages"]
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                     {"type": "text", "text": "b"}]}]


def test_no_system_no_tools_no_stream():
    body = anthropic.request_body(Conversation([UserMessage("hi")]), [], model="m", stream=False)
    assert set(body) == {"model", "max_tokens", "messages"}


def test_a_parsed_turn_goes_back_with_its_blocks():
    turn = anthropic.parse_response(REPLIES["anthropic"].body("Checking.", calls=[
        ("toolu_1", "bash", {"command": "ls"})]))
    assert turn.stop_reason == "tool_use"
    [message] = anthropic.request_body(Conversation([turn]), [], model="m", stream=False)["messages"]
    assert message == {"role": "assistant", "content": [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
    ]}


def test_tool_use_input_that_is_not_an_object():
    body = REPLIES["anthropic"].body(calls=[("toolu_1", "bash", "[1]"), ("toolu_2", "bash", 3)])
    first, second = anthropic.parse_response(body).tool_calls
    assert first.arguments is None and first.arguments_error == "arguments are not a JSON object: [1]"
    assert second.arguments is None and second.arguments_error == "arguments are not a JSON object"


def test_hand_built_calls_with_broken_arguments_send_an_empty_input():
    turn = AssistantMessage(tool_calls=(ToolCall("t1", "bash", None, "broken"),))
    [message] = anthropic.request_body(Conversation([turn]), [], model="m", stream=False)["messages"]
    assert message["content"] == [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]


def test_prepare_arguments_is_the_identity():
    assert anthropic.prepare_arguments(builtin_tool("bash"), {"command": None}) == {"command": None}


def test_images_go_in_the_tool_result_other_types_only_as_the_envelopes_line():
    call = ToolCall("t1", "snap", {})
    png, svg = Attachment("image/png", b"\x89PNG"), Attachment("image/svg+xml", b"<svg/>")
    conversation = Conversation([ToolResultsMessage((
        ToolResult(call, OK_ENVELOPE, attachments=(png, svg)),
        ToolResult(call, ERROR_ENVELOPE, attachments=(svg,)),
    ))])
    [message] = anthropic.request_body(conversation, [], model="m", stream=False)["messages"]
    with_image, without = message["content"]
    assert with_image["content"] == [
        {"type": "text", "text": json.dumps(OK_ENVELOPE)},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBORw=="}},
    ]
    assert without == {"type": "tool_result", "tool_use_id": "t1",
                       "content": json.dumps(ERROR_ENVELOPE), "is_error": True}
