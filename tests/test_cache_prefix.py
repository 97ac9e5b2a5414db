"""Byte-stable prompt prefixes (issue 26 §2): what a provider caches — tools, system prompt,
messages, in the order the API reads them — is sent byte for byte the same on the next
request of a tool loop, and again when the conversation is reloaded from sessions.db by
``ask --continue``, for all three providers. Anthropic's ``cache_control`` breakpoints sit
on the system prompt and on the newest two user messages; OpenAI's ``prompt_cache_key``
stays the same across the session; a change of the tools sent is reported. Through
``ikigai ask`` (and a Session) against the local fake server."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from ikigai_core import App, Session
from tests.support.replies import REPLIES
from tests.support.responses_replies import RESPONSES
from tests.test_sessions import invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)

CALL = ("c1", "file_read", {"file_path": "a.txt"})


def _unmarked(value: Any) -> Any:
    """``value`` without ``cache_control`` marks (they move as the conversation grows)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def cached_parts(body: dict[str, Any]) -> list[bytes]:
    """The parts of a request body in the order the API caches them (tools, system,
    messages), each as the bytes it is sent as."""
    parts = [*body.get("tools", ()), body.get("system"), body.get("instructions"),
             body.get("systemInstruction"),
             *body.get("messages", body.get("input", body.get("contents", ())))]
    return [json.dumps(_unmarked(p), ensure_ascii=False).encode() for p in parts]


WIRES = {
    "anthropic": ("anthropic", {}, REPLIES["anthropic"]),
    "openai-chat": ("openai", {"OPENAI_WIRE": "chat"}, REPLIES["openai"]),
    "openai-responses": ("openai", {"OPENAI_WIRE": "responses"}, RESPONSES),
    "google": ("google", {}, REPLIES["google"]),
}


@pytest.mark.parametrize("wire", list(WIRES))
def test_each_request_starts_with_the_last_ones_bytes_also_after_reload(
        wire, fake_server, monkeypatch, tmp_path):
    provider, environ, replies = WIRES[wire]
    for var, value in {**environ, "GEMINI_API_KEY": "k",
                       "GOOGLE_GEMINI_BASE_URL": fake_server.url}.items():
        monkeypatch.setenv(var, value)
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_server.push(replies.reply("Reading.", [CALL]), replies.reply("It says alpha."),
                     replies.reply("Yes."))
    args = ("ask", "--provider", provider, "--no-stream", "--system", "Be brief.")
    assert invoke(*args, "What is in a.txt?").exit_code == 0
    assert invoke(*args, "--continue", "Sure?").exit_code == 0

    bodies = [request.json for request in fake_server.requests]
    assert len(bodies) == 3
    for earlier, later in zip(bodies, bodies[1:], strict=False):
        before, after = cached_parts(earlier), cached_parts(later)
        assert len(after) > len(before)
        assert after[:len(before)] == before
    if provider == "openai":
        assert len({body["prompt_cache_key"] for body in bodies}) == 1
    if provider == "anthropic":
        for body in bodies:
            assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
            marked = [i for i, m in enumerate(body["messages"])
                      if "cache_control" in m["content"][-1]]
            users = [i for i, m in enumerate(body["messages"]) if m["role"] == "user"]
            assert marked == users[-2:]
            assert json.dumps(body).count("cache_control") <= 4


def test_the_anthropic_cache_ttl_is_a_setting(fake_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_CACHE_TTL", "1h")
    fake_server.push(REPLIES["anthropic"].reply("Hi."))
    assert invoke("ask", "--provider", "anthropic", "--no-stream", "--system", "S", "q"
                  ).exit_code == 0
    body = fake_server.requests[0].json
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}

    monkeypatch.setenv("ANTHROPIC_CACHE_TTL", "2h")
    ran = invoke("ask", "--provider", "anthropic", "q")
    assert ran.exit_code == 1
    assert "ANTHROPIC_CACHE_TTL must be one of 5m, 1h, got '2h'" in ran.stderr
    assert len(fake_server.requests) == 1


def test_a_change_of_the_tools_sent_is_reported_as_busting_the_cache(fake_server, tmp_path):
    app = App(environ={**os.environ, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_server.url},
              cwd=tmp_path)
    fake_server.push(REPLIES["openai"].reply("One."), REPLIES["openai"].reply("Two."),
                     REPLIES["openai"].reply("Three."))
    session = Session.open(app, "openai", log=False)
    session.send("one")
    session.send("two")
    assert not [n for n in app.notices if "prompt cache" in n.message]
    session.use_tools({name: tool for name, tool in session.tools().items() if name != "grep"})
    session.send("three")
    [notice] = [n for n in app.notices if "prompt cache" in n.message]
    assert notice.message == ("the tools sent changed (-grep): the provider's prompt cache "
                              "starts again from here")
    assert notice.kind == "info"
