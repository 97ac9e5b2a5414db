"""Loaded skills are part of the session (issue 22 item 14): ``ask --continue``,
``chat --continue`` and ``--resume`` load them again, so their tools are advertised and
``/toolset`` shows them; a skill gone since is said once and the conversation goes on."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from ikigai_core.cli import cli
from tests.support.replies import REPLIES
from tests.test_cache_prefix import assert_prefixes_kept
from tests.test_cli_agent import advertised
from tests.test_system_prompt import greeter, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)
REPLY = REPLIES["openai"]


def run(*args: str, input: str | None = None):
    result = CliRunner().invoke(cli, [*args[:1], "--provider", "openai", "--no-stream",
                                      *args[1:]], input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result


def test_a_skill_the_model_loaded_comes_back_with_continue(isolated_home, make_tool,
                                                           fake_server):
    greeter(isolated_home, make_tool)
    fake_server.push(REPLY.reply(calls=[("c1", "load_skill", {"name": "greeter"})]),
                     REPLY.reply("Loaded."), REPLY.reply("Again."), REPLY.reply("Chat."))
    run("ask", "load the greeter")
    run("ask", "--continue", "--skill", "greeter", "greet Ada")  # loaded once, not twice
    again = fake_server.requests[2].json
    assert "greet" in advertised("openai", again)
    assert "## Skill: greeter" not in again["messages"][0]["content"]  # its text: a result
    chat = run("chat", "--continue", input="/toolset\nhi\n")
    (toolset,) = [line for line in chat.stdout.splitlines() if line.startswith("Tools sent:")]
    assert "greet" in toolset and toolset.endswith("(skills loaded: greeter)")
    assert "greet" in advertised("openai", fake_server.requests[3].json)


def test_a_skill_loaded_in_chat_comes_back_with_resume_text_and_tools(isolated_home, make_tool,
                                                                      fake_server):
    greeter(isolated_home, make_tool)
    fake_server.push(*(REPLY.reply(text) for text in ("One.", "Two.", "Three.", "Four.")))
    run("chat", input="hello\n/load greeter\nsecond\n")
    listed = CliRunner().invoke(cli, ["sessions", "list", "--json"], catch_exceptions=False)
    (session,) = json.loads(listed.stdout)
    run("chat", "--resume", session["id"], "--skill", "notes", input="third\n/clear\nfourth\n")
    first, body = fake_server.requests[0].json, fake_server.requests[2].json
    # loaded once the conversation had begun: sent after it, the system prompt left as it was
    assert body["messages"][0] == first["messages"][0]
    assert "greet" in advertised("openai", body)
    hello, second, third = [m["content"] for m in body["messages"] if m["role"] == "user"]
    assert hello == "hello"
    assert second.startswith("[The user loaded the skill greeter: apply its instructions ")
    assert "Call greet with the person's name." in second and second.endswith("\n\nsecond")
    assert "Keep notes tidy." in third and third.endswith("\n\nthird")
    assert_prefixes_kept([fake_server.requests[1].json, body])  # --skill on a resumed one
    cleared = fake_server.requests[3].json  # as the command line started: --skill notes only
    assert "greet" not in advertised("openai", cleared)
    assert "Keep notes tidy." in cleared["messages"][0]["content"]
    assert "Call greet" not in cleared["messages"][0]["content"]


def test_a_skill_gone_since_is_said_once(isolated_home, make_tool, fake_server):
    skill = greeter(isolated_home, make_tool)
    fake_server.push(REPLY.reply("One."), REPLY.reply("Two."))
    run("ask", "--skill", "greeter", "hello")
    shutil.rmtree(skill.parent)
    again = run("ask", "--continue", "again")
    assert again.stderr.count("skill 'greeter' of session") == 1
    assert "is not available now; its tools are not sent" in again.stderr
    assert "greet" not in advertised("openai", fake_server.requests[1].json)
