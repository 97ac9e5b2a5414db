"""Byte-stable prompt prefixes (issue 26 §2): what a provider caches — tools, system prompt,
messages, in the order the API reads them — is sent byte for byte the same on the next
request of a tool loop, and again when the conversation is reloaded from sessions.db by
``ask --continue``, for all three providers. Anthropic's ``cache_control`` breakpoints sit
on the system prompt and on the newest two user messages; OpenAI's ``prompt_cache_key``
stays the same across the session; a change of the tools sent is reported. What changes
between turns stays out of the prefix: a skill loaded mid-session goes after the history,
a resumed conversation keeps the date and directory it was recorded with. Through
``ikigai ask`` (and a Session) against the local fake server."""

from __future__ import annotations

import datetime
import functools
import json
import os
from typing import Any

import pytest

from ikigai_core import App, Session
from ikigai_core.defaults import system_prompt
from tests.support.replies import REPLIES
from tests.support.responses_replies import RESPONSES
from tests.test_sessions import invoke, offline
from tests.test_skills import write_skill

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


def assert_prefixes_kept(bodies: list[dict[str, Any]]) -> None:
    """Each request of ``bodies`` starts with every cached part of the one before."""
    for earlier, later in zip(bodies, bodies[1:], strict=False):
        before, after = cached_parts(earlier), cached_parts(later)
        assert len(after) > len(before)
        assert after[:len(before)] == before


def serve(wire: str, monkeypatch: pytest.MonkeyPatch, url: str) -> tuple[str, Any]:
    """Point ``wire``'s provider at the fake server at ``url``; its name and its replies."""
    provider, environ, replies = WIRES[wire]
    for var, value in {**environ, "GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": url}.items():
        monkeypatch.setenv(var, value)
    return provider, replies


WIRES = {
    "anthropic": ("anthropic", {}, REPLIES["anthropic"]),
    "openai-chat": ("openai", {"OPENAI_WIRE": "chat"}, REPLIES["openai"]),
    "openai-responses": ("openai", {"OPENAI_WIRE": "responses"}, RESPONSES),
    "google": ("google", {}, REPLIES["google"]),
}


@pytest.mark.parametrize("wire", list(WIRES))
def test_each_request_starts_with_the_last_ones_bytes_also_after_reload(
        wire, fake_server, monkeypatch, tmp_path):
    provider, replies = serve(wire, monkeypatch, fake_server.url)
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_server.push(replies.reply("Reading.", [CALL]), replies.reply("It says alpha."),
                     replies.reply("Yes."))
    args = ("ask", "--provider", provider, "--no-stream", "--system", "Be brief.")
    assert invoke(*args, "What is in a.txt?").exit_code == 0
    assert invoke(*args, "--continue", "Sure?").exit_code == 0

    bodies = [request.json for request in fake_server.requests]
    assert len(bodies) == 3
    assert_prefixes_kept(bodies)
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


SKILL = "Answer every question in one haiku."


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text of each user message of a request body, on any of the four wires."""
    texts = []
    for message in body.get("messages", body.get("input", body.get("contents", ()))):
        if message.get("role") != "user":
            continue
        content = message.get("content", message.get("parts"))
        parts = [content] if isinstance(content, str) else content
        texts.append("".join(p if isinstance(p, str) else p.get("text", "") for p in parts))
    return texts


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_skill_loaded_mid_session_keeps_every_earlier_prefix_also_after_reload(
        wire, fake_server, monkeypatch, tmp_path, isolated_home):
    """``Session.load_skill`` once the conversation has begun: the skill's instructions
    reach the model in the trailing part (with the next prompt), never in the system
    prompt, so each request still starts with the one before; the same after the
    conversation is reloaded from sessions.db."""
    provider, replies = serve(wire, monkeypatch, fake_server.url)
    write_skill(isolated_home / "skills", "haiku", "Answers in haiku.", body=SKILL)
    fake_server.push(replies.reply("One."), replies.reply("Two."), replies.reply("Three."))
    session = Session.open(App(cwd=tmp_path), provider, system="Be brief.", stream=False)
    session.send("first")
    session.load_skill("haiku")
    session.send("second")
    again = Session.open(App(cwd=tmp_path), provider, system="Be brief.", stream=False)
    assert again.resume(session.id) and again.toolset.loaded == ["haiku"]
    again.send("third")

    bodies = [request.json for request in fake_server.requests]
    assert_prefixes_kept(bodies)
    assert SKILL not in json.dumps([body.get(key) for body in bodies for key in (
        "system", "instructions", "systemInstruction")])
    first, second, third = map(user_texts, bodies)
    assert first == ["first"] and third[:2] == second
    assert second[1].startswith("[The user loaded the skill haiku")
    assert SKILL in second[1] and second[1].endswith("second")


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_later_day_and_another_directory_keep_the_resumed_prefix(
        wire, fake_server, monkeypatch, tmp_path):
    """The default system prompt names the date and the working directory: a conversation
    resumed on another day from another directory is sent the system prompt it was
    recorded with, so the cached prefix holds (a new conversation gets today's)."""
    provider, replies = serve(wire, monkeypatch, fake_server.url)
    fake_server.push(replies.reply("One."), replies.reply("Two."), replies.reply("Three."))
    for where in ("first", "second"):
        (tmp_path / where).mkdir()
    args = ("ask", "--provider", provider, "--no-stream")
    monkeypatch.chdir(tmp_path / "first")
    assert invoke(*args, "one").exit_code == 0
    monkeypatch.chdir(tmp_path / "second")
    monkeypatch.setattr(system_prompt, "default_prompt", functools.partial(
        system_prompt.default_prompt, today=datetime.date(2031, 1, 2)))
    [session] = json.loads(invoke("sessions", "list", "--json").stdout)
    assert invoke(*args, "--resume", session["id"], "two").exit_code == 0
    assert invoke(*args, "three").exit_code == 0

    first, resumed, fresh = (request.json for request in fake_server.requests)
    assert_prefixes_kept([first, resumed])
    assert "2031-01-02" not in json.dumps(resumed) and "2031-01-02" in json.dumps(fresh)
    assert str(tmp_path / "second") in json.dumps(fresh)
