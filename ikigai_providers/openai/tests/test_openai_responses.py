"""The OpenAI Responses wire: the provider contract, the request's shape, and recorded
traffic (tests/support/responses_replies.py) through ``ikigai ask`` against the fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ikigai_provider_openai.serializer import OpenAISerializer

from ikigai_core.conversation import Conversation, UserMessage
from ikigai_core.errors import ConfigError
from tests.support import cli
from tests.support.conversations import ERROR_ENVELOPE, OK_ENVELOPE, full_conversation
from tests.support.fakeserver import RecordedRequest
from tests.support.provider_contract import KEY, LS, READ, ProviderContract
from tests.support.responses_replies import RESPONSES
from tests.support.schemas import builtin_tools

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
openai = OpenAISerializer()


class TestOpenAIResponsesWire(ProviderContract):
    provider = openai
    replies = RESPONSES

    def environ(self, url: str, **extra: str) -> dict[str, str]:
        return super().environ(url, OPENAI_WIRE="responses", **extra)

    def expected_target(self, stream):
        return "/responses", {}

    def sent_key(self, request: RecordedRequest):
        return request.headers["authorization"].removeprefix("Bearer ")

    def test_request_shape(self, fake_server):
        fake_server.push(self.replies.reply("ok", stream=True))
        self.send(fake_server.url, stream=True)
        body = fake_server.requests[0].json
        assert body["instructions"] == "Be brief."
        assert body["input"] == [{"role": "user", "content": "hi"}]
        assert (body["store"], body["include"]) == (False, ["reasoning.encrypted_content"])
        assert body["stream"] is True
        assert not {"messages", "stream_options", "previous_response_id"} & set(body)
        bash = body["tools"][0]
        assert (bash["type"], bash["name"], bash["strict"]) == ("function", "bash", True)
        assert bash["parameters"]["additionalProperties"] is False

    def test_reasoning_items_are_kept_as_they_came(self, fake_server):
        fake_server.push(self.replies.turn("Let me list.", [LS, READ], reasoning="Plan."))
        message = self.send(fake_server.url, stream=True)
        assert self.calls(message) == [LS, READ]
        assert message.raw["output"] == RESPONSES.items("Let me list.", [LS, READ], "Plan.")
        assert message.raw["response_id"] == "resp_1"

    def test_items_missing_a_call_are_not_kept(self, fake_server):
        """A stream that never finished its call's item goes back in chat form, calls and
        all: replaying only the reasoning would lose the call."""
        events = self.replies.events(calls=[LS], reasoning="Plan.")
        *head, (name, last) = [(n, e) for n, e in events if not (
            n == "response.output_item.done" and e["item"]["type"] == "function_call")]
        fake_server.push(self.replies.stream([*head, (name, {
            **last, "response": {**last["response"], "output": []}})]))
        message = self.send(fake_server.url, stream=True)
        assert self.calls(message) == [LS] and "output" not in message.raw

    def test_failed_response_is_an_error(self, fake_server):
        events = self.replies.events("partial")
        fake_server.push(self.replies.stream([*events[:3], self.replies.failed_event("Boom")]))
        assert self.failure(fake_server.url, stream=True) == (
            "Provider 'openai' reported an error mid-stream: server_error: Boom; try again")

    def test_incomplete_response_keeps_its_text(self, fake_server):
        fake_server.push(self.replies.turn("Cut sh", stream=True, incomplete="max_output_tokens"))
        message = self.send(fake_server.url, stream=True)
        assert message.text == "Cut sh"
        assert message.stop_reason == "incomplete (max_output_tokens)"


@pytest.mark.parametrize(("environ", "path"), [
    ({}, "https://api.openai.com/v1/responses"),
    ({"OPENAI_BASE_URL": "https://api.openai.com/v1/"}, "https://api.openai.com/v1/responses"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, "http://127.0.0.1:8080/v1/chat/completions"),
    ({"OPENAI_WIRE": "chat"}, "https://api.openai.com/v1/chat/completions"),
    ({"OPENAI_WIRE": "responses", "OPENAI_BASE_URL": "http://h/v1"}, "http://h/v1/responses"),
])
def test_auto_wire_is_responses_for_openai_and_chat_elsewhere(environ, path):
    body = openai.request_body(Conversation([UserMessage("hi")]), [], model="m", stream=False)
    assert openai.http_request(body, model="m", stream=False, api_key="k",
                               environ=environ).url == path


@pytest.mark.parametrize(("var", "value"), [("OPENAI_WIRE", "respones"),
                                            ("OPENAI_PREVIOUS_RESPONSE_ID", "yes")])
def test_a_bad_setting_stops_the_call(var, value):
    with pytest.raises(ConfigError, match=f"environment variable {var} must be .*got '{value}'"):
        openai.http_request({"model": "m", "messages": []}, model="m", stream=False,
                            api_key="k", environ={"OPENAI_WIRE": "responses", var: value})


def test_a_whole_conversation_as_responses_input():
    """Turns without Responses items (made on the chat wire, or by hand) go as messages and
    ``function_call`` items; results as ``function_call_output`` by ``call_id``."""
    body = openai.request_body(full_conversation(), builtin_tools(), model="m", stream=False)
    sent = openai.http_request(body, model="m", stream=False, api_key=None,
                               environ={"OPENAI_WIRE": "responses"}).body
    assert sent["instructions"] == "You are terse."
    assert sent["input"] == [
        {"role": "user", "content": "Summarize the README and list TODOs"},
        {"role": "assistant", "content": "Let me look."},
        {"type": "function_call", "call_id": "call_read", "name": "file_read",
         "arguments": '{"file_path": "README.md"}'},
        {"type": "function_call", "call_id": "call_grep", "name": "grep",
         "arguments": '{"pattern": "TODO", "path": "nowhere"}'},
        {"type": "function_call_output", "call_id": "call_read", "output": json.dumps(OK_ENVELOPE)},
        {"type": "function_call_output", "call_id": "call_grep",
         "output": json.dumps(ERROR_ENVELOPE)},
        {"role": "assistant", "content": "It is about ikigai; grep failed."},
        {"role": "user", "content": "Thanks"},
    ]
    assert "stream" not in sent and [t["name"] for t in sent["tools"]][:2] == ["bash", "file_edit"]


def test_a_responses_turn_goes_on_over_chat_without_its_items():
    turn = openai.parse_response(RESPONSES.body("Hi", [LS], reasoning="Plan."))
    body = openai.request_body(Conversation([UserMessage("a"), turn]), [], model="m",
                               stream=False)
    sent = openai.http_request(body, model="m", stream=False, api_key=None,
                               environ={"OPENAI_WIRE": "chat"}).body
    assert sent["messages"][1] == {"role": "assistant", "content": "Hi", "tool_calls": [
        {"id": "call_ls", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls -la"}'}}]}


def test_previous_response_id_is_opt_in():
    turn = openai.parse_response(RESPONSES.body("Hi", reasoning="Plan."))
    conversation = Conversation([UserMessage("a"), turn, UserMessage("b")], system="S")
    body = openai.request_body(conversation, builtin_tools(), model="m", stream=False)
    sent = openai.http_request(body, model="m", stream=False, api_key=None, environ={
        "OPENAI_WIRE": "responses", "OPENAI_PREVIOUS_RESPONSE_ID": "true"}).body
    assert (sent["previous_response_id"], sent["store"]) == ("resp_1", True)
    assert sent["input"] == [{"role": "user", "content": "b"}]
    assert sent["instructions"] == "S" and "include" not in sent


# -- Recorded traffic through `ikigai ask` ----------------------------------------------


@pytest.fixture
def ask(fake_server, tmp_path, monkeypatch):
    """``ask(*args)``: ``ikigai ask --provider openai`` as a real process (in this one with
    ``real=False``, for a single ask), on the Responses wire at the fake server, in
    ``tmp_path`` (which holds ``a.txt``)."""
    (tmp_path / "a.txt").write_text("alpha\n")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake_server.url, "OPENAI_WIRE": "responses"}

    def run(*args: str, real: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
        if real:
            return subprocess.run([IKIGAI, "ask", "--provider", "openai", *args], cwd=tmp_path,
                                  env={**os.environ, **env, **extra}, capture_output=True,
                                  text=True, timeout=60)
        for name, value in {**env, **extra}.items():
            monkeypatch.setenv(name, value)
        return cli.run("ask", "--provider", "openai", *args, cwd=tmp_path, real=False)
    return run


CALL_A = ("call_a", "file_read", {"file_path": "a.txt"})
CALL_B = ("call_b", "file_read", {"file_path": "b.txt"})


def test_tool_loop_replays_reasoning_byte_exact_also_after_continue(fake_server, ask):
    """Turn 1: reasoning + two parallel calls; turn 2: reasoning + the answer; then
    ``--continue``: every item goes back unchanged and in order, stateless."""
    first = RESPONSES.items("Reading both.", [CALL_A, CALL_B], "Read a and b.")
    answer = RESPONSES.items("a holds alpha.", reasoning="Summarise.")
    fake_server.push(RESPONSES.turn("Reading both.", [CALL_A, CALL_B], reasoning="Read a and b."),
                     RESPONSES.turn("a holds alpha.", reasoning="Summarise."),
                     RESPONSES.turn("Yes.", reasoning="Recall."))
    done = ask("What is in a.txt and b.txt?")
    assert done.returncode == 0, done.stderr
    assert "a holds alpha." in done.stdout
    second = fake_server.requests[1].json
    assert second["store"] is False
    assert second["input"][0] == {"role": "user", "content": "What is in a.txt and b.txt?"}
    assert second["input"][1:5] == first
    outputs = second["input"][5:]
    assert [(o["type"], o["call_id"]) for o in outputs] == [
        ("function_call_output", "call_a"), ("function_call_output", "call_b")]
    assert json.loads(outputs[0]["output"])["tool_success"] is True
    assert "FILE_NOT_FOUND" in outputs[1]["output"]

    again = ask("--continue", "Sure?")
    assert again.returncode == 0, again.stderr
    third = fake_server.requests[2].json
    assert third["input"][:-1] == [*second["input"], *answer]
    assert third["input"][-1] == {"role": "user", "content": "Sure?"}
    encrypted = [item["encrypted_content"] for item in third["input"]
                 if item.get("type") == "reasoning"]
    assert encrypted == [first[0]["encrypted_content"], answer[0]["encrypted_content"]]


def test_error_mid_stream_is_one_line_and_nothing_runs(fake_server, ask):
    events = RESPONSES.events("partial", calls=[CALL_A])
    fake_server.push(RESPONSES.stream([*events[:4], RESPONSES.error_event("Overloaded")]))
    done = ask("hi", real=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "ikigai: Provider 'openai' reported an error mid-stream: server_error: Overloaded; "
        "try again"]
    assert len(fake_server.requests) == 1


def test_incomplete_response_is_shown_with_its_reason(fake_server, ask):
    fake_server.push(RESPONSES.turn(incomplete="max_output_tokens"))
    done = ask("hi", real=False)
    assert done.returncode == 0, done.stderr
    assert "(stop reason: incomplete (max_output_tokens))" in done.stderr


def test_bad_wire_setting_is_one_line_before_any_request(fake_server, ask):
    done = ask("hi", OPENAI_WIRE="respones")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "ikigai: environment variable OPENAI_WIRE must be one of responses, chat, auto, got "
        "'respones'; fix or unset it"]
    assert fake_server.requests == []


def test_chat_resume_replays_the_reasoning_items(fake_server, ask, tmp_path):
    """``chat --resume ID`` sends the recorded turn's items back as they came."""
    fake_server.push(RESPONSES.turn("Noted.", reasoning="Think it over."),
                     RESPONSES.turn("Still noted.", reasoning="Again."))
    first = ask("--json", "Remember 7.")
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["session"]
    chat = subprocess.run([IKIGAI, "chat", "--plain", "--resume", session], cwd=tmp_path,
                          env={**os.environ, "OPENAI_API_KEY": KEY, "IKIGAI_PROVIDER": "openai",
                               "OPENAI_BASE_URL": fake_server.url, "OPENAI_WIRE": "responses"},
                          input="What was it?\n", capture_output=True, text=True, timeout=60)
    assert chat.returncode == 0, chat.stderr
    assert "Still noted." in chat.stdout
    assert fake_server.requests[1].json["input"] == [
        {"role": "user", "content": "Remember 7."},
        *RESPONSES.items("Noted.", reasoning="Think it over."),
        {"role": "user", "content": "What was it?"}]
