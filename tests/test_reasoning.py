"""``--reasoning low|medium|high`` (issue 26 section 4): each provider's wire asks for it in
its own terms (asserted on the bodies the local fake server received, which refuses what
the real API refuses), a model known not to reason is one line before anything is sent, and
the thinking the provider shows reaches the session's events (dimmed in chat, on a pty)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from ikigai_core import App, Session
from ikigai_core.errors import UsageError
from pytest_ikigai.fakeserver import sse_reply
from tests.support.replies import REPLIES
from tests.support.responses_replies import RESPONSES
from tests.support.vt import Screen
from tests.test_chat_terminal import IKIGAI

VARIABLES = {"openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
             "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
             "google": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL")}


class Thoughts:
    """Session events that keep the thinking and the text."""

    def __init__(self) -> None:
        self.thoughts: list[str] = []
        self.texts: list[str] = []

    def request(self):
        pass

    def text(self, piece):
        self.texts.append(piece)

    def thinking(self, piece):
        self.thoughts.append(piece)

    def tool_start(self, call):
        pass

    def tool_end(self, call, envelope):
        pass

    def turn(self):
        from contextlib import nullcontext

        return nullcontext()


def _session(fake_server, tmp_path, provider, model, effort, *, stream=False, events=None,
             **environ):
    key, url = VARIABLES[provider]
    app = App(environ={**os.environ, key: "sk-test", url: fake_server.url,
                       "IKIGAI_REASONING": effort, **environ}, cwd=tmp_path)
    return Session.open(app, provider, model, stream=stream, no_tools=True, events=events)


@pytest.mark.parametrize(("provider", "model", "effort", "environ", "expected"), [
    ("openai", "gpt-5", "low", {}, {"reasoning_effort": "low"}),
    ("openai", "o4-mini", "high", {"OPENAI_WIRE": "responses"},
     {"reasoning": {"effort": "high", "summary": "auto"}}),
    ("anthropic", "claude-sonnet-4-5", "medium", {},
     {"thinking": {"type": "enabled", "budget_tokens": 8192}, "max_tokens": 16384}),
    ("anthropic", "claude-opus-4-1", "high", {},
     {"thinking": {"type": "enabled", "budget_tokens": 16384}, "max_tokens": 24576}),
    ("google", "gemini-2.5-flash", "high", {},
     {"generationConfig": {"thinkingConfig": {"includeThoughts": True,
                                              "thinkingBudget": 24576}}}),
    ("google", "gemini-3-pro-preview", "medium", {},
     {"generationConfig": {"thinkingConfig": {"includeThoughts": True,
                                              "thinkingLevel": "high"}}}),
    ("google", "gemini-3-flash-preview", "medium", {},
     {"generationConfig": {"thinkingConfig": {"includeThoughts": True,
                                              "thinkingLevel": "medium"}}}),
])
def test_each_wire_asks_for_the_effort_in_its_own_terms(
        provider, model, effort, environ, expected, fake_server, tmp_path):
    replies = RESPONSES if environ else REPLIES[provider]
    fake_server.push(replies.reply("Done."))
    session = _session(fake_server, tmp_path, provider, model, effort, **environ)
    assert session.send("think").text == "Done."
    body = fake_server.requests[0].json
    assert {key: body.get(key) for key in expected} == expected
    assert "temperature" not in body


@pytest.mark.parametrize(("provider", "model", "line"), [
    ("openai", "gpt-4o", "model 'gpt-4o' of provider 'openai' takes no reasoning effort; "
                         "leave out --reasoning, or choose a reasoning model"),
    ("anthropic", "claude-3-5-haiku-latest",
     "model 'claude-3-5-haiku-latest' of provider 'anthropic' has no extended thinking; "),
    ("google", "gemini-2.0-flash", "model 'gemini-2.0-flash' of provider 'google' does not "
                                   "think; leave out --reasoning"),
])
def test_a_model_that_does_not_reason_is_one_line_and_nothing_is_sent(
        provider, model, line, fake_server, tmp_path):
    session = _session(fake_server, tmp_path, provider, model, "low")
    with pytest.raises(UsageError, match="^" + re.escape(line)):
        session.send("think")
    assert fake_server.requests == [] and session.conversation.messages == []


def _anthropic_thinking(thought: str, text: str) -> list:
    """A streamed Messages turn: a thinking block (with its signature), then text."""
    def block(index, start, deltas):
        return [("content_block_start", {"type": "content_block_start", "index": index,
                                         "content_block": start}),
                *(("content_block_delta", {"type": "content_block_delta", "index": index,
                                           "delta": delta}) for delta in deltas),
                ("content_block_stop", {"type": "content_block_stop", "index": index})]

    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
               "model": "claude-sonnet-4-5", "stop_reason": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    return [("message_start", {"type": "message_start", "message": message}),
            *block(0, {"type": "thinking", "thinking": ""},
                   [{"type": "thinking_delta", "thinking": thought[:5]},
                    {"type": "thinking_delta", "thinking": thought[5:]},
                    {"type": "signature_delta", "signature": "c2lnLTE="}]),
            *block(1, {"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 9},
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"})]


def _gemini_thinking(thought: str, text: str) -> list:
    def response(part, finish=None):
        candidate = {"content": {"role": "model", "parts": [part]}, "index": 0}
        return {"candidates": [{**candidate, "finishReason": finish} if finish else candidate],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}

    return [response({"text": thought, "thought": True}), response({"text": text}, "STOP")]


def test_the_thinking_each_provider_shows_reaches_the_events_and_goes_back(
        fake_server, tmp_path):
    streams = {"anthropic": ("claude-sonnet-4-5", {},
                             sse_reply(_anthropic_thinking("Weigh both sides.", "Yes."))),
               "google": ("gemini-2.5-pro", {},
                          sse_reply(_gemini_thinking("Weigh both sides.", "Yes."))),
               "openai": ("gpt-5", {"OPENAI_WIRE": "responses"},
                          RESPONSES.turn("Yes.", reasoning="Weigh both sides."))}
    for provider, (model, environ, reply) in streams.items():
        events = Thoughts()
        fake_server.push(reply, REPLIES[provider].reply("Sure.") if provider != "openai"
                         else RESPONSES.reply("Sure."))
        session = _session(fake_server, tmp_path, provider, model, "medium", stream=True,
                           events=events, **environ)
        assert session.send("should I?").text == "Yes."
        assert "".join(events.thoughts) == "Weigh both sides.", provider
        assert "".join(events.texts) == "Yes."
        assert len(events.thoughts) > 1 or provider == "google"  # as it streams
        session.send("sure?")
        again = str(fake_server.requests[-1].json)
        assert "Weigh both sides." in again or "opaque" in again, provider  # sent back


def test_ask_shows_thinking_only_when_asked_and_never_on_stdout(fake_server, tmp_path):
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake_server.url}

    def ask(*args):
        fake_server.push(sse_reply(_anthropic_thinking("Weigh both sides.", "Yes.")))
        return subprocess.run([IKIGAI, "ask", "--provider", "anthropic", "--no-tools",
                               "--reasoning", "low", *args, "should I?"], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60)

    hidden = ask()
    assert (hidden.returncode, hidden.stdout, hidden.stderr) == (0, "Yes.\n", "")
    assert fake_server.requests[0].json["thinking"]["budget_tokens"] == 2048
    shown = ask("--show-thinking")
    assert (shown.stdout, shown.stderr) == ("Yes.\n", "thinking: Weigh both sides.\n")
    refused = subprocess.run([IKIGAI, "ask", "--provider", "anthropic", "--reasoning", "huge",
                              "x"], capture_output=True, text=True, env=env, timeout=60)
    assert refused.returncode == 2 and "'huge' is not one of 'low', 'medium', 'high'" in \
        refused.stderr


def test_chat_shows_thinking_dimmed_on_a_terminal_and_a_setting_hides_it(
        fake_server, tmp_path, isolated_home):
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake_server.url,
           "IKIGAI_HOME": str(isolated_home), "TERM": "xterm-256color"}
    argv = [IKIGAI, "chat", "--provider", "anthropic", "--no-tools", "--reasoning", "high"]
    fake_server.push(sse_reply(_anthropic_thinking("Weigh both sides.", "Yes, go.")))
    with Screen(argv, env=env, cwd=tmp_path) as screen:
        screen.wait_for("tokens:")
        screen.write(b"should I?\r")
        shown = screen.wait_for("Yes, go.")
        row = next(y for y, line in enumerate(shown.splitlines()) if "Weigh both" in line)
        column = shown.splitlines()[row].index("Weigh")
        assert screen.screen.buffer[row][column].italics  # dim italic: pyte keeps the italic
        assert not screen.screen.buffer[shown.splitlines().index("Yes, go.")][0].italics
    fake_server.push(sse_reply(_anthropic_thinking("Weigh both sides.", "Yes, go.")))
    with Screen(argv, env={**env, "IKIGAI_SHOW_THINKING": "false"}, cwd=tmp_path) as screen:
        screen.wait_for("tokens:")
        screen.write(b"should I?\r")
        assert "Weigh" not in screen.wait_for("Yes, go.")


def test_thinking_in_a_whole_reply_reaches_the_events_once(fake_server, tmp_path):
    from pytest_ikigai.fakeserver import json_reply

    chat = REPLIES["openai"].body("Yes.")
    chat["choices"][0]["message"]["reasoning_content"] = "Weigh both sides."  # vLLM, llama.cpp
    anthropic = REPLIES["anthropic"].body("Yes.")
    anthropic["content"].insert(0, {"type": "thinking", "thinking": "Weigh both sides.",
                                    "signature": "c2ln"})
    replies = {("openai", "gpt-5", ()): json_reply(chat),
               ("openai", "o3", ("OPENAI_WIRE", "responses")):
                   RESPONSES.turn("Yes.", reasoning="Weigh both sides.", stream=False),
               ("anthropic", "claude-sonnet-4-5", ()): json_reply(anthropic),
               ("google", "gemini-2.5-flash", ()):
                   json_reply(_gemini_thinking("Weigh both sides.", "Yes.")[0] | {
                       "candidates": [{"content": {"role": "model", "parts": [
                           {"text": "Weigh both sides.", "thought": True}, {"text": "Yes."}]},
                           "finishReason": "STOP"}]})}
    for (provider, model, environ), reply in replies.items():
        events = Thoughts()
        fake_server.push(reply)
        session = _session(fake_server, tmp_path, provider, model, "low", events=events,
                           **dict([environ] if environ else []))
        assert session.send("should I?").text == "Yes."
        assert events.thoughts == ["Weigh both sides."], provider
