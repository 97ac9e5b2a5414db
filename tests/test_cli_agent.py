"""``ikigai request``, ``ask`` and ``chat`` through the CLI, for each provider, end to end.

The installed provider plugins talk over real HTTP to the fake server (a local server
replaying each provider's own wire format, tests/support/replies.py); the tools the model
asks for are the real installed ones or test tools, run by the real executor.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.commands.chat import wait_for_tools
from ikigai_core.providers import collect_providers
from tests.support.fakeserver import RecordedRequest
from tests.support.procs import pid_written, wait_gone
from tests.support.replies import REPLIES
from tests.support.terminal import Terminal
from tests.support.tools import write_hang_tool

PROVIDERS = ("openai", "anthropic", "google")
KEY_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
            "google": "GEMINI_API_KEY"}
URL_VARS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL",
            "google": "GOOGLE_GEMINI_BASE_URL"}
SECRET = "sk-test-NEVER-PRINTED-0123456789"
IKIGAI = str(Path(sys.executable).with_name("ikigai"))
BUILTIN = {"bash", "file_edit", "file_read", "file_write", "glob", "grep"}


@pytest.fixture(autouse=True)
def offline(monkeypatch, fake_server, tmp_path):
    """No real key from the caller's shell; every base URL at the fake server; cwd tmp_path."""
    for var in (*KEY_VARS.values(), "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    for var in URL_VARS.values():
        monkeypatch.setenv(var, fake_server.url)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def keys(monkeypatch):
    """A dummy key for every provider."""
    for var in KEY_VARS.values():
        monkeypatch.setenv(var, SECRET)


def registry_names() -> list[str]:
    """Every tool discovered here: the built-ins and any installed tool plugin's."""
    names = list(App().registry())
    assert BUILTIN <= set(names)
    return names


def chat_tools() -> int:
    """How many tools a chat has: these, and the agent_* ones it serves (issue 25)."""
    from ikigai_tools_builtin.builtin import AGENT_SCRIPTS

    return len(registry_names()) + len(AGENT_SCRIPTS)


def served_names() -> list[str]:
    """What ``ask`` sends: every tool discovered here and the ``agent_*`` tools of the agents
    API it serves (issue 25)."""
    from ikigai_tools_builtin.agent_tools import SCHEMAS

    return sorted([*registry_names(), *SCHEMAS])


def invoke(*args: str, input: str | None = None) -> Any:
    """The CLI in-process; ``stdout`` and ``stderr`` apart."""
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def advertised(provider: str, body: Mapping[str, Any]) -> list[str]:
    """Tool names a request body advertises, in that provider's format."""
    if provider == "openai":
        return [tool["function"]["name"] for tool in body.get("tools", [])]
    if provider == "anthropic":
        return [tool["name"] for tool in body.get("tools", [])]
    return [declaration["name"] for group in body.get("tools", [])
            for declaration in group["functionDeclarations"]]


def sent_results(provider: str, body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(call id, envelope)`` of the tool results ending a request body, in call order."""
    if provider == "openai":
        results = []
        for message in reversed(body["messages"]):
            if message["role"] != "tool":
                break
            results.insert(0, (message["tool_call_id"], json.loads(message["content"])))
        return results
    if provider == "anthropic":
        last = body["messages"][-1]
        assert last["role"] == "user"
        return [(block["tool_use_id"], json.loads(block["content"])) for block in last["content"]]
    last = body["contents"][-1]
    assert last["role"] == "user"
    return [(part["functionResponse"]["id"], part["functionResponse"]["response"])
            for part in last["parts"]]


def prompts(provider: str, request: RecordedRequest) -> list[str]:
    """The user's text messages in a request, oldest first."""
    body = request.json
    if provider == "google":
        return [part["text"] for content in body["contents"] if content["role"] == "user"
                for part in content["parts"] if "text" in part]
    texts = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                texts.append(content)
            else:
                texts += [block["text"] for block in content if block["type"] == "text"]
    return texts


# -- The full loop, for each provider -----------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_ask_runs_the_tool_the_model_calls_and_sends_the_envelope_back(
    provider, stream, keys, fake_server, tmp_path
):
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    arguments: dict[str, Any] = {"file_path": "notes.txt"}
    if provider == "openai":  # strict mode: optional properties arrive as nulls
        arguments.update(offset=None, limit=None)
    replies = REPLIES[provider]
    fake_server.push(
        replies.reply("Let me read it.", [("call_1", "file_read", arguments)], stream=stream),
        replies.reply("The file says 42.", stream=stream),
    )
    args = ["ask", "--provider", provider, "What does notes.txt say?"]
    result = invoke(*args, *([] if stream else ["--no-stream"]))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Let me read it.\nThe file says 42.\n"
    assert 'ikigai: → file_read {"file_path": "notes.txt"' in result.stderr
    assert "ikigai: ← file_read ok" in result.stderr
    assert SECRET not in result.output
    first, second = fake_server.requests
    assert advertised(provider, first.json) == served_names()
    assert prompts(provider, first) == ["What does notes.txt say?"]
    assert sent_results(provider, second.json) == [
        ("call_1", {"tool_success": True, "result": {"output": "the answer is 42\n"}})]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_parallel_calls_with_a_failure_go_back_in_call_order(
    approve_all, provider, keys, fake_server, isolated_home, make_tool
):
    make_tool(isolated_home / "tools", "boom-tool", body="sys.exit(3)")
    replies = REPLIES[provider]
    fake_server.push(
        replies.reply(calls=[("c1", "boom", {}), ("c2", "bash", {"command": "echo hi"}),
                             ("c3", "nosuch", {})]),
        replies.reply("Done."),
    )
    result = invoke("ask", "--provider", provider, "--no-stream", "go")
    assert result.exit_code == 0, result.stderr
    assert "ikigai: ← boom TOOL_CRASHED" in result.stderr
    assert "ikigai: ← nosuch TOOL_NOT_FOUND" in result.stderr
    results = sent_results(provider, fake_server.requests[1].json)
    assert [call_id for call_id, _ in results] == ["c1", "c2", "c3"]
    assert [envelope.get("error_code") for _, envelope in results] == [
        "TOOL_CRASHED", None, "TOOL_NOT_FOUND"]
    assert results[1][1]["result"]["output"].strip() == "hi"


def test_real_ikigai_subprocess_runs_the_loop(keys, fake_server, tmp_path):
    (tmp_path / "notes.txt").write_text("subprocess ok\n")
    replies = REPLIES["anthropic"]
    fake_server.push(
        replies.reply(calls=[("toolu_1", "file_read", {"file_path": "notes.txt"})], stream=True),
        replies.reply("It says: subprocess ok", stream=True),
    )
    done = subprocess.run([IKIGAI, "ask", "--provider", "anthropic", "read notes.txt"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says: subprocess ok\n"
    assert done.stderr.splitlines() == [
        'ikigai: → file_read {"file_path": "notes.txt"}', "ikigai: ← file_read ok"]
    assert sent_results("anthropic", fake_server.requests[1].json)[0][1]["tool_success"] is True


# -- ikigai request -----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_request_prints_the_body_with_every_tool_and_no_key(provider, stream, fake_server):
    result = invoke("request", "--provider", provider, *([] if stream else ["--no-stream"]),
                    "list the files")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    assert advertised(provider, body) == registry_names()
    assert "list the files" in result.stdout
    assert fake_server.requests == []


UNFIT = {  # a tool the provider's API rejects, and the reason ikigai gives
    "anthropic": ("odata", "property names must be 1-64 of a-z A-Z 0-9 _ . -: $top"),
    "google": ("9lives", "the name must start with a letter or _"),
}


@pytest.fixture
def unfit_tools(make_tool, isolated_home):
    """A user tool Anthropic rejects ($top) and one Gemini rejects (a name starting 9)."""
    tools = isolated_home / "tools"
    make_tool(tools, "odata-tool", schema={"name": "odata", "description": "OData", "parameters": {
        "type": "object", "properties": {"$top": {"type": "integer"}}}})
    make_tool(tools, "9lives-tool")


@pytest.mark.parametrize("provider", ["anthropic", "google"])
def test_a_tool_the_provider_rejects_is_left_out_with_one_line_and_the_rest_go(
        provider, unfit_tools, keys, fake_server):
    name, reason = UNFIT[provider]
    line = (f"ikigai: tool '{name}' left out of requests to {provider}: {reason}")
    requested = invoke("request", "--provider", provider, "hi")
    assert requested.exit_code == 0
    [notice] = requested.stderr.splitlines()
    assert notice.startswith(line) and notice.endswith(f"see `ikigai tool check {name}`")
    sent = advertised(provider, json.loads(requested.stdout))
    assert name not in sent and set(registry_names()) - set(sent) == {name}
    fake_server.push(REPLIES[provider].reply("Hi."), REPLIES[provider].reply("Hi."))
    asked = invoke("ask", "--provider", provider, "--no-stream", "hi")
    assert asked.exit_code == 0 and asked.stderr.splitlines() == [notice]
    chatted = invoke("chat", "--provider", provider, "--no-stream", input="hi\n")
    assert chatted.exit_code == 0 and chatted.stderr.splitlines() == [notice]
    assert name not in advertised(provider, fake_server.requests[-1].json)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_request_never_prints_the_key(provider, keys):
    result = invoke("request", "--provider", provider, "hi")
    assert result.exit_code == 0
    assert SECRET not in result.output


def test_request_uses_the_provider_default_model_unless_told(isolated_home):
    default = collect_providers(App().pm)["openai"].default_model
    assert json.loads(invoke("request", "--provider", "openai", "hi").stdout)["model"] == default
    chosen = invoke("request", "--provider", "openai", "--model", "gpt-test", "hi")
    assert json.loads(chosen.stdout)["model"] == "gpt-test"


def test_provider_and_model_from_config_and_environment(isolated_home, monkeypatch):
    (isolated_home / "config.json").write_text('{"provider": "anthropic", "model": "from-config"}')
    assert json.loads(invoke("request", "hi").stdout)["model"] == "from-config"
    monkeypatch.setenv("IKIGAI_PROVIDER", "openai")
    monkeypatch.setenv("IKIGAI_MODEL", "from-env")
    body = json.loads(invoke("request", "hi").stdout)
    assert body["model"] == "from-env" and "messages" in body and "tools" in body


def test_without_a_choice_the_first_provider_with_a_key_is_used(monkeypatch, fake_server):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    fake_server.push(REPLIES["google"].reply("from gemini"))
    result = invoke("ask", "--no-stream", "hi")
    assert result.stdout == "from gemini\n"
    assert fake_server.requests[0].path.startswith("/v1beta/models/")


def test_a_local_server_needs_only_its_base_url(monkeypatch, fake_server):
    """llama.cpp, vLLM, Ollama, LM Studio: OPENAI_BASE_URL alone, no dummy key."""
    for var in ("ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(var)
    fake_server.push(REPLIES["openai"].reply("from llama.cpp"))
    result = invoke("ask", "--no-stream", "hi")
    assert (result.exit_code, result.stdout) == (0, "from llama.cpp\n")
    assert "authorization" not in fake_server.requests[0].headers


def test_no_provider_chosen_lists_the_installed_ones(monkeypatch):
    for var in URL_VARS.values():
        monkeypatch.delenv(var)
    result = invoke("ask", "hi")
    assert result.exit_code == 2
    assert result.stderr == (
        "ikigai: No API key found: set ANTHROPIC_API_KEY or GOOGLE_API_KEY or OPENAI_API_KEY, "
        "or store one with `ikigai keys set PROVIDER` (installed: anthropic, google, ollama, "
        "openai); for a local server, pass --provider NAME or set IKIGAI_PROVIDER\n")


def test_no_provider_installed_says_how_this_repository_installs_them(monkeypatch):
    monkeypatch.setenv("IKIGAI_DISABLE_PLUGINS", "openai,anthropic,google,example-ollama")
    result = invoke("ask", "hi")
    assert result.exit_code == 2
    assert result.stderr.startswith("ikigai: No provider installed. A provider is a plugin")
    assert "pip install -e ikigai_providers/NAME" in result.stderr
    assert "ikigai-provider-NAME" not in result.stderr


def test_unknown_provider_is_a_usage_error():
    result = invoke("request", "--provider", "opneai", "hi")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "ikigai: Unknown provider 'opneai'. Installed providers: anthropic, google, ollama, openai.")


@pytest.mark.parametrize("command", ["ask", "chat"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_missing_key_is_one_line_naming_the_variable(provider, command, monkeypatch):
    """At the provider's own URL a key is needed (a base URL set to a local server waives it)."""
    monkeypatch.delenv(URL_VARS[provider])
    result = invoke(command, "--provider", provider, *(["hi"] if command == "ask" else []))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert KEY_VARS[provider] in result.stderr


def test_untrusted_project_tools_are_one_notice(make_tool, tmp_path):
    make_tool(tmp_path / ".ikigai" / "tools", "local-tool")
    result = invoke("request", "--provider", "openai", "hi")
    assert result.exit_code == 0
    [notice] = result.stderr.splitlines()
    assert notice.startswith("ikigai: 1 project tool not loaded: ")
    assert "local" not in advertised("openai", json.loads(result.stdout))


# -- Turn limit and errors ----------------------------------------------------------------


def test_turn_limit_is_reported(keys, fake_server):
    again = REPLIES["openai"].reply(calls=[("c", "bash", {"command": "true"})])
    fake_server.push(again, again, again)
    result = invoke("ask", "--provider", "openai", "--max-turns", "2", "--no-stream", "loop")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "ikigai: stopped after 2 turns: the model still wants to call tools; "
        "raise --max-turns (or IKIGAI_MAX_TURNS)")
    assert len(fake_server.requests) == 2


def test_turn_limit_from_the_environment(keys, fake_server, monkeypatch):
    monkeypatch.setenv("IKIGAI_MAX_TURNS", "1")
    fake_server.push(REPLIES["google"].reply(calls=[("", "bash", {"command": "true"})]))
    result = invoke("ask", "--provider", "google", "--no-stream", "loop")
    assert result.exit_code == 1 and "ikigai: stopped after 1 turn: " in result.stderr


@pytest.mark.parametrize(("provider", "stream"), [("openai", False), ("openai", True),
                                                ("anthropic", True)])
def test_broken_arguments_and_long_ones_on_the_activity_lines(approve_all, provider, stream, keys,
                                                              fake_server):
    long_command = "echo " + "x" * 200
    replies = REPLIES[provider]
    fake_server.push(
        replies.reply(calls=[("c1", "bash", '{"command": "ls'),
                             ("c2", "bash", {"command": long_command})], stream=stream),
        replies.reply("ok", stream=stream),
    )
    result = invoke("ask", "--provider", provider, *([] if stream else ["--no-stream"]), "go")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[:2] == ["ikigai: → bash (unreadable arguments)",
                         "ikigai: → bash " + json.dumps({"command": long_command})[:99] + "…"]
    assert sorted(lines[2:]) == ["ikigai: ← bash INVALID_PARAMS", "ikigai: ← bash ok"]
    [(_, broken), (_, ran)] = sent_results(provider, fake_server.requests[1].json)
    assert broken["error_code"] == "INVALID_PARAMS" and broken["error"].startswith(
        "Invalid arguments for tool 'bash': ")
    assert ran["result"]["output"].strip() == "x" * 200


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_turn_with_no_text_and_no_calls_is_said_on_stderr(provider, stream, keys, fake_server):
    replies = REPLIES[provider]
    fake_server.push(replies.reply("", stream=stream), replies.reply("", stream=stream))
    flag = "--stream" if stream else "--no-stream"
    asked = invoke("ask", "--provider", provider, flag, "hi")
    assert asked.exit_code == 0 and asked.stdout == ""
    [line] = asked.stderr.splitlines()
    assert line.startswith("ikigai: the model answered with no text and no tool calls")
    chatted = invoke("chat", "--provider", provider, flag, input="hi\n")
    assert chatted.stderr.splitlines() == [line]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_provider_error_is_one_line(provider, keys, fake_server):
    fake_server.push(REPLIES[provider].error(400, "messages: bad thing"))
    result = invoke("ask", "--provider", provider, "hi")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "messages: bad thing" in result.stderr
    assert SECRET not in result.stderr


# -- ikigai chat --------------------------------------------------------------------------


def test_chat_scripted_commands_and_a_message(keys, fake_server):
    fake_server.push(REPLIES["openai"].reply("Hello there.", stream=True))
    script = "/tool\n/tool bash\n\n/refresh\nhi\n/quit\nnever sent\n"
    result = invoke("chat", "--provider", "openai", input=script)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("Available tools:\n  agent_fork (")  # served by the chat
    assert "Tool: bash\nSource: system\n" in out and '"name": "bash"' in out
    assert f"Tools refreshed. {chat_tools()} tools available.\n" in out
    assert out.endswith("Hello there.\n")
    assert ">" not in out.replace("->", "")  # no prompt noise when stdin is not a terminal
    assert [prompts("openai", r) for r in fake_server.requests] == [["hi"]]


def test_refresh_right_after_start_waits_for_the_start_up_discovery(
        keys, make_tool, isolated_home, tmp_path, monkeypatch):
    log = tmp_path / "schema.log"
    make_tool(isolated_home / "tools", "slow-tool", schema_body=f"""
        with open({str(log)!r}, "a") as f: f.write("start\\n")
        time.sleep(0.4)
        with open({str(log)!r}, "a") as f: f.write("end\\n")
        print(json.dumps({{"name": "slow", "description": "d",
                          "parameters": {{"type": "object"}}}}))
    """)
    monkeypatch.setenv("IKIGAI_SCHEMA_TIMEOUT", "20")
    result = invoke("chat", "--provider", "openai", input="/refresh\n")
    assert result.exit_code == 0 and "Traceback" not in result.stderr, result.stderr
    assert f"Tools refreshed. {chat_tools()} tools available." in result.stdout
    assert log.read_text() == "start\nend\nstart\nend\n"  # one after the other


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_remembers_the_conversation(provider, keys, fake_server):
    replies = REPLIES[provider]
    fake_server.push(replies.reply("One.", stream=True), replies.reply("Two.", stream=True))
    result = invoke("chat", "--provider", provider, input="first\nsecond\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "One.\nTwo.\n"
    assert prompts(provider, fake_server.requests[1]) == ["first", "second"]


def test_chat_reports_an_error_and_goes_on_without_the_failed_message(keys, fake_server):
    replies = REPLIES["anthropic"]
    fake_server.push(replies.error(400, "bad request"), replies.reply("Fine now."))
    result = invoke("chat", "--provider", "anthropic", "--no-stream", input="broken\nagain\n")
    assert result.exit_code == 0
    assert "bad request" in result.stderr
    assert result.stdout == "Fine now.\n"
    assert prompts("anthropic", fake_server.requests[1]) == ["again"]


def test_chat_exits_non_zero_when_the_last_message_failed(keys, fake_server):
    replies = REPLIES["anthropic"]
    fake_server.push(replies.reply("Fine."), replies.error(400, "bad request"))
    result = invoke("chat", "--provider", "anthropic", "--no-stream",
                    input="hi\nbroken\n/tool\n")
    assert result.exit_code == 1
    assert result.stdout.startswith("Fine.\n")


def test_piped_chat_against_an_unreachable_provider_exits_non_zero(keys, monkeypatch):
    with socket.socket() as closed:  # bound, never listening: the connection is refused
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed.getsockname()[1]}")
        result = invoke("chat", "--provider", "openai", input="hi\n")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "OPENAI_BASE_URL" in result.stderr


def test_request_help_does_not_promise_an_answer():
    """``request`` sends nothing: its --stream builds a body, it shows no answer."""
    text = " ".join(invoke("request", "--help").stdout.split())
    assert "Build the body of a streamed request" in text and "answer as it arrives" not in text
    assert "Show the answer as it arrives" in " ".join(invoke("ask", "--help").stdout.split())


@pytest.mark.parametrize("prompt", ["", "  \n"])
def test_ask_refuses_an_empty_prompt(prompt, keys, fake_server):
    result = invoke("ask", "--provider", "openai", prompt)
    assert result.exit_code == 2
    assert result.stderr.startswith("ikigai: the prompt is empty; ")
    assert fake_server.requests == []


def test_chat_help_unknown_commands_and_tools(keys):
    result = invoke("chat", "--provider", "openai", input="/help\n/nope\n/tool nosuch\n/\n")
    assert result.exit_code == 0
    assert "/tool NAME" in result.stdout and "/refresh" in result.stdout
    nope, nosuch, slash = result.stderr.splitlines()
    for line, name in ((nope, "/nope"), (slash, "/")):
        assert line.startswith(f"ikigai: unknown command {name}; commands: /tool [NAME], /refresh")
        assert ("/skill, /load, /toolset, /fork PROMPT, /agents [ID], /send ID MESSAGE, "
                "/kill ID, /model NAME, /clear, /resume [ID], /sessions, "
                "/approve [yes|ask], /compact [INSTRUCTIONS], /uncompact, /context, /help, "
                "/quit") in line
    assert nosuch == "ikigai: unknown tool 'nosuch'; /tool lists them"


def test_chat_model_switches_the_model_and_clear_starts_afresh(keys, fake_server):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("One."), replies.reply("Two."), replies.reply("Three."))
    script = "first\n/model gpt-4o\nsecond\n/clear\nthird\n/model\n"
    result = invoke("chat", "--provider", "openai", "--no-stream", input=script)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "One.\nmodel: gpt-4o\nTwo.\nThree.\n"
    assert result.stderr == ("ikigai: /model needs a name; the model now is gpt-4o\n")
    first, second, third = fake_server.requests
    assert second.json["model"] == "gpt-4o" != first.json["model"]
    assert prompts("openai", second) == ["first", "second"]
    assert prompts("openai", third) == ["third"]


def test_chat_with_no_tools(keys, monkeypatch):
    monkeypatch.setenv("IKIGAI_DISABLE_PLUGINS",
                       "ikigai_tools_builtin.builtin,example-tools,example-session,web")
    result = invoke("chat", "--provider", "openai", input="/tool\n")
    assert result.stdout == "No tools available.\n"


def test_spinner_shows_while_discovery_runs(make_tool, isolated_home, capsys, monkeypatch):
    monkeypatch.setenv("IKIGAI_SCHEMA_TIMEOUT", "10")
    make_tool(isolated_home / "tools", "slow-tool",
              schema_body="time.sleep(0.5); print(json.dumps(" + json.dumps(
                  {"name": "slow", "description": "d", "parameters": {"type": "object"}}) + "))")
    app = App()
    discovery = app.discovery()
    discovery.start()
    registry = wait_for_tools(discovery, spin=True)
    assert "slow" in registry
    err = capsys.readouterr().err
    assert "discovering tools..." in err and err.endswith("\r\x1b[K")


# -- Ctrl-C -------------------------------------------------------------------------------


@contextlib.contextmanager
def _running(argv: list[str]) -> Iterator[subprocess.Popen[str]]:
    """``argv`` with piped stdio; killed if still running when the block ends."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)


def test_ctrl_c_in_ask_kills_the_tool_and_exits_130(approve_all, keys, fake_server, make_tool,
                                                    isolated_home, tmp_path):
    pids = tmp_path / "pids"
    write_hang_tool(isolated_home / "tools", pids)
    fake_server.push(REPLIES["openai"].reply(calls=[("c", "hang", {})]))
    with _running([IKIGAI, "ask", "--provider", "openai", "--no-stream", "hang"]) as proc:
        pid = pid_written(pids)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert err.splitlines()[-1] == "ikigai: interrupted"
    assert wait_gone(pid)


def test_ctrl_c_in_chat_cancels_the_turn_and_returns_to_the_prompt(
    approve_all, keys, fake_server, make_tool, isolated_home, tmp_path
):
    pids = tmp_path / "pids"
    write_hang_tool(isolated_home / "tools", pids)
    replies = REPLIES["google"]
    fake_server.push(replies.reply(calls=[("c", "hang", {})]), replies.reply("Still here."))
    with _running([IKIGAI, "chat", "--provider", "google", "--no-stream"]) as proc:
        assert proc.stdin is not None
        proc.stdin.write("hang\n")
        proc.stdin.flush()
        pid = pid_written(pids)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate("are you there?\n", timeout=20)
    assert proc.returncode == 0, err
    assert out == "Still here.\n"
    assert "ikigai: interrupted" in err.splitlines()
    assert wait_gone(pid)
    assert prompts("google", fake_server.requests[1]) == ["are you there?"]


# -- A terminal ---------------------------------------------------------------------------


@pytest.mark.parametrize("leave", [b"\x04", b"\x03"], ids=["ctrl-d", "ctrl-c"])
def test_chat_on_a_terminal_prompts_before_discovery_ends_and_spins_on_submit(
    leave, keys, make_tool, isolated_home, tmp_path
):
    done = tmp_path / "schema-done"
    slow = {"name": "slow", "description": "d", "parameters": {"type": "object"}}
    make_tool(isolated_home / "tools", "slow-tool", schema_body=f"""
        time.sleep(2)
        open({str(done)!r}, "w").close()
        print(json.dumps({slow!r}))
    """)
    env = {**os.environ, "IKIGAI_SCHEMA_TIMEOUT": "20", "TERM": "dumb"}
    with Terminal([IKIGAI, "chat", "--provider", "openai"], env=env) as term:
        seen = term.read_until(b"> ")
        assert not done.exists(), "the prompt waited for discovery"
        assert b"chatting with openai" in seen
        term.write(b"/tool\n")
        seen = term.read_until(b"> ")
        assert b"discovering tools..." in seen and b"  slow (" in seen
        term.wait_for_input()
        term.write(leave)  # at the prompt, Ctrl-D or Ctrl-C leaves
        term.read_until(b"")
        assert term.wait() == 0
    history = isolated_home / "history"  # line editing keeps what was typed, user-only
    assert "/tool" in history.read_text().splitlines()
    assert history.stat().st_mode & 0o777 == 0o600


def test_bare_ikigai_on_a_terminal_starts_chat(keys, tmp_path):
    env = {**os.environ, "IKIGAI_PROVIDER": "anthropic", "TERM": "dumb"}
    with Terminal([IKIGAI], env=env, cwd=tmp_path) as term:
        assert b"ikigai: chatting with anthropic " in term.read_until(b"> ")
        term.wait_for_input()
        term.write(b"\x04")
        term.read_until(b"")
        assert term.wait() == 0


def test_bare_ikigai_on_a_pipe_prints_the_usage(keys, tmp_path):
    ran = subprocess.run([IKIGAI], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.startswith("Usage: ikigai [OPTIONS] [COMMAND] [ARGS]...\n")
    assert "Without a command, on a terminal: chat." in ran.stderr


def test_quitting_chat_while_discovery_hangs_exits_at_once_and_leaves_nothing(
    keys, isolated_home, make_tool, tmp_path, monkeypatch
):
    pidfile = tmp_path / "schema.pid"
    make_tool(isolated_home / "tools", "hang-tool",
              schema_body=f"open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)")
    monkeypatch.setenv("IKIGAI_SCHEMA_TIMEOUT", "30")
    chat = subprocess.Popen([IKIGAI, "chat", "--provider", "anthropic"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    chat.communicate("/quit\n", timeout=20)
    assert chat.returncode == 0
    assert time.monotonic() - started < 10, "chat waited for the hanging --schema"
    assert wait_gone(int(pidfile.read_text()))
