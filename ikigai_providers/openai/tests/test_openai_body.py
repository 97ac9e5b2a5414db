"""The Chat Completions request body for a whole conversation (pure functions)."""

from __future__ import annotations

import json

from ikigai_provider_openai.serializer import OpenAISerializer

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
from tests.support.schemas import builtin_tools

openai = OpenAISerializer()


def test_full_conversation_messages():
    body = openai.request_body(full_conversation(), builtin_tools(), model="gpt-x", stream=False)
    assert body["model"] == "gpt-x"
    assert "stream" not in body and "stream_options" not in body
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Summarize the README and list TODOs"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_read", "type": "function",
             "function": {"name": "file_read", "arguments": '{"file_path": "README.md"}'}},
            {"id": "call_grep", "type": "function",
             "function": {"name": "grep", "arguments": '{"pattern": "TODO", "path": "nowhere"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_read", "content": json.dumps(OK_ENVELOPE)},
        {"role": "tool", "tool_call_id": "call_grep", "content": json.dumps(ERROR_ENVELOPE)},
        {"role": "assistant", "content": "It is about ikigai; grep failed."},
        {"role": "user", "content": "Thanks"},
    ]
    assert [t["function"]["name"] for t in body["tools"]] == [
        "bash", "file_edit", "file_read", "file_write", "glob", "grep"
    ]
    assert all(t["type"] == "function" and t["function"]["strict"] for t in body["tools"])


def test_no_tools_leaves_the_key_out():
    body = openai.request_body(Conversation(), [], model="m", stream=True)
    assert "tools" not in body
    assert body["messages"] == []
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_parsed_turn_goes_back_as_the_model_sent_it():
    """Argument text is sent back verbatim, even when it was not valid JSON."""
    turn = openai.parse_response(REPLIES["openai"].body(
        "Hi", calls=[("c1", "bash", '{"command": "ls"'), ("c2", "bash", {"command": "pwd"})]
    ))
    assert turn.tool_calls[0].arguments is None
    results = ToolResultsMessage(tuple(
        ToolResult(call, {"tool_success": False, "error": "bad", "error_code": "INVALID_PARAMS"})
        for call in turn.tool_calls
    ))
    messages = openai.request_body(Conversation([turn, results]), [], model="m",
                                   stream=False)["messages"]
    assert messages[0] == {"role": "assistant", "content": "Hi", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"'}},
        {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pwd"}'}},
    ]}
    assert [m["tool_call_id"] for m in messages[1:]] == ["c1", "c2"]


def test_calls_with_broken_arguments_built_by_hand_send_an_empty_object():
    turn = AssistantMessage(tool_calls=(ToolCall("c1", "bash", None, "not JSON"),))
    [message] = openai.request_body(Conversation([turn]), [], model="m", stream=False)["messages"]
    assert message == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}


def test_empty_assistant_turns_are_left_out():
    empty = openai.parse_response(REPLIES["openai"].body())
    conversation = Conversation([UserMessage("a"), empty, AssistantMessage(), UserMessage("b")])
    messages = openai.request_body(conversation, [], model="m", stream=False)["messages"]
    assert messages == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


def test_refusal_is_the_text_when_there_is_no_content():
    body = REPLIES["openai"].body()
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    assert openai.parse_response(body).text == "I can't help with that."
