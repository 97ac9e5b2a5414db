"""The Gemini request body for a whole conversation (pure functions)."""

from __future__ import annotations

import pytest
from ikigai_provider_google.serializer import GoogleSerializer

from ikigai_core import Attachment, ToolResult, ToolResultsMessage
from ikigai_core.conversation import AssistantMessage, Conversation, ToolCall, UserMessage
from tests.support.conversations import ERROR_ENVELOPE, OK_ENVELOPE, full_conversation
from tests.support.replies import REPLIES
from tests.support.schemas import builtin_tools

google = GoogleSerializer()


def test_full_conversation_body():
    body = google.request_body(full_conversation(), builtin_tools(), model="gemini-x", stream=True)
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    [tools] = body["tools"]
    assert [d["name"] for d in tools["functionDeclarations"]] == [
        "bash", "file_edit", "file_read", "file_write", "glob", "grep"
    ]
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Summarize the README and list TODOs"}]},
        {"role": "model", "parts": [
            {"text": "Let me look."},
            {"functionCall": {"id": "call_read", "name": "file_read",
                              "args": {"file_path": "README.md"}}},
            {"functionCall": {"id": "call_grep", "name": "grep",
                              "args": {"pattern": "TODO", "path": "nowhere"}}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "call_read", "name": "file_read", "response": OK_ENVELOPE}},
            {"functionResponse": {"id": "call_grep", "name": "grep", "response": ERROR_ENVELOPE}},
        ]},
        {"role": "model", "parts": [{"text": "It is about ikigai; grep failed."}]},
        {"role": "user", "parts": [{"text": "Thanks"}]},
    ]
    assert "model" not in body and "stream" not in body


def test_no_system_no_tools():
    body = google.request_body(Conversation([UserMessage("hi")]), [], model="m", stream=False)
    assert set(body) == {"contents"}


def test_the_model_turn_goes_back_unchanged_with_its_thought_signature():
    reply = REPLIES["google"].body("Sure.", calls=[("", "bash", {"command": "ls"})])
    reply["candidates"][0]["content"]["parts"].insert(0, {"text": "plan", "thought": True,
                                                          "thoughtSignature": "abc"})
    turn = google.parse_response(reply)
    assert turn.text == "Sure."
    [content] = google.request_body(Conversation([turn]), [], model="m", stream=False)["contents"]
    assert content == reply["candidates"][0]["content"]
    assert content["parts"][2]["thoughtSignature"] == REPLIES["google"].signature


def test_hand_built_turns():
    broken = AssistantMessage(tool_calls=(ToolCall("c1", "bash", None, "broken"),))
    contents = google.request_body(Conversation([broken]), [], model="m", stream=False)["contents"]
    assert contents == [
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "bash", "args": {}}}]},
    ]


def test_empty_model_turns_are_left_out():
    thought_only = google.parse_response(
        {"candidates": [{"content": {"role": "model", "parts": [
            {"text": "hmm", "thought": True}]}, "finishReason": "STOP"}]})
    conversation = Conversation([UserMessage("a"), AssistantMessage(), thought_only,
                                 UserMessage("b")])
    contents = google.request_body(conversation, [], model="m", stream=False)["contents"]
    assert [c["role"] for c in contents] == ["user", "user"]


def test_prepare_arguments_is_the_identity():
    assert google.prepare_arguments(builtin_tools()[0], {"command": "ls"}) == {"command": "ls"}


@pytest.mark.parametrize("model, sent", [
    ("gemini-3-pro-preview", [{"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}}]),
    ("models/gemini-2.5-flash", None),
])
def test_images_go_in_the_function_response_from_gemini_3_on(model, sent):
    call = ToolCall("c1", "snap", {})
    attachments = (Attachment("image/png", b"\x89PNG"), Attachment("image/gif", b"GIF89a"))
    conversation = Conversation([ToolResultsMessage((ToolResult(call, OK_ENVELOPE,
                                                                attachments=attachments),))])
    [content] = google.request_body(conversation, [], model=model, stream=False)["contents"]
    [part] = content["parts"]
    assert part["functionResponse"]["response"] == OK_ENVELOPE
    assert part["functionResponse"].get("parts") == sent
