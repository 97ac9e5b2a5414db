"""The system prompt, skills and toolsets as the model sees them: exact request bodies
through ``ikigai request``, a full ``ask`` loop loading a skill, and chat on a terminal."""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.defaults.system_prompt import default_prompt
from ikigai_core.trust import TrustStore
from tests.support.replies import REPLIES
from tests.support.terminal import Terminal
from tests.test_cli_agent import KEY_VARS, URL_VARS, advertised, sent_results
from tests.test_skills import write_skill

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
PROVIDERS = ("openai", "anthropic", "google")
BASH = {"name": "bash", "description": "Execute a shell command and return output",
        "parameters": {"type": "object", "properties": {"command": {
            "type": "string", "description": "Shell command to execute"}},
            "required": ["command"]}}
GREET = {"name": "greet", "description": "Greet someone",
         "parameters": {"type": "object", "properties": {"who": {"type": "string"}},
                        "required": ["who"]}}


@pytest.fixture(autouse=True)
def offline(monkeypatch, fake_server, tmp_path):
    """Keys and base URLs for the fake server; cwd is a fresh project directory."""
    for provider, var in KEY_VARS.items():
        monkeypatch.setenv(var, "sk-test")
        monkeypatch.setenv(URL_VARS[provider], fake_server.url)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


def request(provider: str, *args: str) -> dict[str, Any]:
    """The body ``ikigai request`` prints for the prompt ``hi``."""
    result = CliRunner().invoke(cli, ["request", "--provider", provider, "--no-stream", *args,
                                      "hi"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def system_of(body: dict[str, Any]) -> str:
    """The system prompt of an Anthropic request body (one text block, cache-marked)."""
    [block] = body["system"]
    return str(block["text"])


def expected(provider: str, system: str, tools: tuple[dict[str, Any], ...] = ()) -> dict:
    """The exact body each provider's plugin sends: its own place for the system prompt
    (Anthropic's with a cache breakpoint, as the newest user message; OpenAI's with the
    conversation's ``prompt_cache_key``)."""
    if provider == "openai":
        from ikigai_provider_openai.serializer import cache_key

        body: dict[str, Any] = {"model": "gpt-4o-mini", "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": "hi"}]}
        body["prompt_cache_key"] = cache_key(body["messages"])
        if tools:
            body["tools"] = [{"type": "function", "function": {
                **t, "parameters": {**t["parameters"], "additionalProperties": False},
                "strict": True}} for t in tools]
        return body
    if provider == "anthropic":
        mark = {"cache_control": {"type": "ephemeral"}}
        body = {"model": "claude-sonnet-4-5", "max_tokens": 8192,
                "system": [{"type": "text", "text": system, **mark}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi",
                                                           **mark}]}]}
        if tools:
            body["tools"] = [{"name": t["name"], "description": t["description"],
                              "input_schema": t["parameters"]} for t in tools]
        return body
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "systemInstruction": {"parts": [{"text": system}]}}
    if tools:
        body["tools"] = [{"functionDeclarations": list(tools)}]
    return body


def default(cwd: Path | None = None) -> str:
    return default_prompt(cwd or Path.cwd(), datetime.date.today())


# -- The base prompt and its overrides ----------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_default_prompt_goes_where_each_provider_wants_it(provider):
    assert request(provider, "--no-tools") == expected(provider, default())


def test_default_prompt_teaches_bash_results_cwd_and_date():
    text = default()
    for part in ("`jq ", "git status", "grep", "tool_success", "TOOL_TIMEOUT",
                 "INVALID_PARAMS", '"truncated"', f"Working directory: {Path.cwd()}",
                 f"Today's date: {datetime.date.today().isoformat()}"):
        assert part in text, part


@pytest.mark.parametrize("provider", PROVIDERS)
def test_system_option_replaces_the_default(provider, tmp_path):
    assert request(provider, "--no-tools", "--system", "Be terse.") == expected(
        provider, "Be terse.")
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("From a file.\n")
    assert request(provider, "--no-tools", "--system", f"@{prompt_file}") == expected(
        provider, "From a file.")


def test_overrides_in_order_option_config_home_file(isolated_home):
    (isolated_home / "system.md").write_text("From system.md.")
    assert system_of(request("anthropic", "--no-tools")) == "From system.md."
    (isolated_home / "config.json").write_text(json.dumps({"system_prompt": "From config."}))
    assert system_of(request("anthropic", "--no-tools")) == "From config."
    assert system_of(request("anthropic", "--no-tools", "--system", "From the option.")) == (
        "From the option.")
    assert "system" not in request("anthropic", "--no-tools", "--system", "")


def test_unreadable_system_file_is_one_line(tmp_path):
    result = CliRunner().invoke(cli, ["request", "--provider", "openai", "--system",
                                      f"@{tmp_path / 'none.md'}", "hi"])
    assert (result.exit_code, result.stderr) == (2, (
        f"ikigai: --system @{tmp_path / 'none.md'}: cannot read {tmp_path / 'none.md'}: "
        "No such file or directory\n"))
    (tmp_path / "latin.md").write_bytes(b"caf\xe9")
    result = CliRunner().invoke(cli, ["request", "--provider", "openai", "--system",
                                      f"@{tmp_path / 'latin.md'}", "hi"])
    assert result.stderr == f"ikigai: --system @{tmp_path / 'latin.md'}: the file is not UTF-8 text\n"


# -- Project instructions ----------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_agents_md_is_appended_only_in_a_trusted_project(provider, offline, isolated_home):
    (offline / "AGENTS.md").write_text("Run make test before you finish.\n")
    (offline / ".ikigai").mkdir()
    (offline / ".ikigai" / "system.md").write_text("Answer in French.\n")
    assert request(provider, "--no-tools") == expected(provider, default())  # untrusted
    TrustStore(isolated_home).trust(offline)
    assert request(provider, "--no-tools") == expected(provider, default() + (
        "\n\n## Project instructions (AGENTS.md)\n\nRun make test before you finish."
        "\n\n## Project instructions (.ikigai/system.md)\n\nAnswer in French."))


def test_unreadable_agents_md_is_one_line(offline, isolated_home):
    (offline / "AGENTS.md").write_bytes(b"\xff\xfe")
    TrustStore(isolated_home).trust(offline)
    result = CliRunner().invoke(cli, ["request", "--provider", "openai", "hi"])
    assert (result.exit_code, result.stderr) == (
        1, f"ikigai: {offline / 'AGENTS.md'} is not UTF-8 text; fix or remove it\n")


# -- Skills and toolsets in the request --------------------------------------------------------


LOAD_SKILL = {
    "name": "load_skill",
    "description": "Load a skill listed under Skills in the system prompt: its full "
                   "instructions come back, and the tools it brings are available from the "
                   "next turn.",
    "parameters": {"type": "object", "properties": {
        "name": {"type": "string", "description": "The skill's name"}}, "required": ["name"]}}
INDEX = ("\n\n## Skills\nSkills hold instructions for particular tasks. When a task matches "
         "one, call the load_skill tool with its name before you start: its instructions come "
         "back, and the tools it brings are yours from the next turn.\n"
         "- greeter: Greets people by name.\n- notes: Keep notes tidy.")


def greeter(home: Path, make_tool) -> Path:
    """A user skill with a tool only it provides (``greet``), and a seed-002 skill."""
    path = write_skill(home / "skills", "greeter", "Greets people by name.",
                       body="Call greet with the person's name.\n")
    make_tool(path.parent / "tools", "greet-tool", schema=GREET,
              body="print(json.dumps({'output': 'Hello, ' + json.load(sys.stdin)['who']}))")
    (home / "skills" / "notes.md").write_text("# Notes\n\nKeep notes tidy.\n")
    return path


@pytest.mark.parametrize("provider", PROVIDERS)
def test_skills_index_and_the_load_skill_tool(provider, isolated_home, make_tool):
    greeter(isolated_home, make_tool)
    body = request(provider, "--tools", "bash,load_skill")
    assert body == expected(provider, default() + INDEX, (BASH, LOAD_SKILL))
    assert "greet" not in advertised(provider, request(provider))  # not before it is loaded


@pytest.mark.parametrize("provider", PROVIDERS)
def test_skill_option_loads_its_body_and_its_tools(provider, isolated_home, make_tool):
    path = greeter(isolated_home, make_tool)
    body = request(provider, "--tools", "bash", "--skill", "greeter")
    assert body == expected(provider, default() + INDEX + (
        f"\n\n## Skill: greeter (in {path.parent})\n\nCall greet with the person's name."),
        (BASH, GREET))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tools_option_sends_only_those(provider):
    assert request(provider, "--tools", "bash") == expected(provider, default(), (BASH,))


def test_config_enabled_and_disabled_tools(isolated_home):
    (isolated_home / "config.json").write_text(json.dumps({"enabled_tools": ["bash", "grep"]}))
    assert advertised("openai", request("openai")) == ["bash", "grep"]
    (isolated_home / "config.json").write_text(json.dumps({"disabled_tools": ["bash", "grep"]}))
    assert "bash" not in advertised("openai", request("openai"))
    assert advertised("openai", request("openai", "--tools", "bash")) == ["bash"]


@pytest.mark.parametrize("args, message", [
    (("--tools", "bash,nope"), "ikigai: --tools: no tool named 'nope'; `ikigai tool list` "
                               "shows the tools"),
    (("--skill", "nope"), "ikigai: unknown skill 'nope'; skills: none are installed"),
])
def test_unknown_tool_or_skill_is_one_line_exit_2(args, message):
    result = CliRunner().invoke(cli, ["request", "--provider", "openai", *args, "hi"])
    assert (result.exit_code, result.stderr) == (2, message + "\n")


def test_untrusted_project_skills_are_one_notice(offline):
    write_skill(offline / ".ikigai" / "skills", "local")
    result = CliRunner().invoke(cli, ["request", "--provider", "openai", "hi"])
    assert result.stderr == (f"ikigai: 1 project skill not loaded: project directory not "
                             f"trusted; run `ikigai trust {offline.resolve()}`\n")
    assert "local" not in json.loads(result.stdout)["messages"][0]["content"]


# -- The model loads a skill, then calls the tool only that skill brings ------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_ask_loop_model_loads_a_skill_then_calls_its_tool(provider, isolated_home, make_tool,
                                                          fake_server):
    greeter(isolated_home, make_tool)
    replies = REPLIES[provider]
    fake_server.push(
        replies.reply(calls=[("c1", "load_skill", {"name": "greeter"})]),
        replies.reply(calls=[("c2", "greet", {"who": "Ada"})]),
        replies.reply("Said hello."),
    )
    result = CliRunner().invoke(cli, ["ask", "--provider", provider, "--no-stream",
                                      "--allow", "greet", "greet Ada"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Said hello.\n"
    assert "ikigai: ← load_skill ok" in result.stderr and "ikigai: ← greet ok" in result.stderr
    first, second, third = (r.json for r in fake_server.requests)
    assert "greet" not in advertised(provider, first) and "load_skill" in advertised(
        provider, first)
    assert "greet" in advertised(provider, second) and "greet" in advertised(provider, third)
    (_, loaded), = sent_results(provider, second)
    assert loaded["result"]["output"] == "Call greet with the person's name."
    assert sent_results(provider, third) == [
        ("c2", {"tool_success": True, "result": {"output": "Hello, Ada"}})]


# -- Chat on a terminal ---------------------------------------------------------------------


def test_chat_skill_load_and_toolset_on_a_terminal(isolated_home, make_tool, fake_server):
    path = greeter(isolated_home, make_tool)
    fake_server.push(REPLIES["openai"].reply("Hi!", stream=True))
    env = {**os.environ, "TERM": "dumb"}
    with Terminal([IKIGAI, "chat", "--provider", "openai", "--tools", "bash"], env=env) as term:
        term.read_until(b"> ")
        term.write(b"/help\n")
        assert b"/load NAME" in term.read_until(b"> ")
        term.write(b"/skill\n")
        seen = term.read_until(b"> ")
        assert b"Skills:\r\n  greeter  user      Greets people by name.\r\n" in seen
        term.write(b"/toolset\n")
        assert b"Tools sent: bash\r\n" in term.read_until(b"> ")
        term.write(b"/load greeter\n")
        seen = term.read_until(b"> ")
        assert b"Skill greeter loaded.\r\nTools sent: bash, greet (skills loaded: greeter)" in seen
        term.write(b"/toolset grep\n")
        assert b"Tools sent: greet, grep (skills loaded: greeter)" in term.read_until(b"> ")
        term.write(b"/toolset nope\n")
        assert b"ikigai: /toolset: no tool named 'nope'" in term.read_until(b"> ")
        term.write(b"hello\n")
        assert b"Hi!" in term.read_until(b"> ")
        term.write(b"\x04")
        term.read_until(b"")
        assert term.wait() == 0
    body = fake_server.requests[0].json
    assert advertised("openai", body) == ["greet", "grep"]
    assert body["messages"][0]["content"].endswith(
        f"## Skill: greeter (in {path.parent})\n\nCall greet with the person's name.")


def test_chat_commands_from_a_pipe(isolated_home, make_tool, fake_server):
    """The same commands in-process: the errors are one line each and the chat goes on."""
    from ikigai_tools_builtin.builtin import AGENT_SCRIPTS

    # a chat serves the agents API, and so sends the agent_* tools too (issue 25)
    served = [script.removesuffix("-tool").replace("-", "_") for script in AGENT_SCRIPTS]
    greeter(isolated_home, make_tool)
    fake_server.push(REPLIES["openai"].reply("Hi!", stream=True))
    script = ("/skill\n/load\n/load nope\n/load greeter\n/load greeter\n/toolset none\n"
              "/toolset\n/toolset all\nhello\n")
    result = CliRunner().invoke(cli, ["chat", "--provider", "openai"], input=script,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:7] == [
        "Skills:", "  greeter  user      Greets people by name.",
        "  notes    user      Keep notes tidy.", "Skill greeter loaded.",
        f"Tools sent: {', '.join(sorted([*App().registry(), *served]))} (skills loaded: greeter)",
        "Skill greeter is loaded already.", "Tools sent: greet (skills loaded: greeter)"]
    assert result.stderr.splitlines() == [
        "ikigai: /load needs a skill name; /skill lists them",
        "ikigai: unknown skill 'nope'; skills: greeter, notes"]
    assert "greet" in advertised("openai", fake_server.requests[0].json)


def test_chat_without_skills_says_so(isolated_home):
    result = CliRunner().invoke(cli, ["chat", "--provider", "openai"], input="/skill\n")
    assert result.stdout == "No skills installed.\n"


def test_project_skills_and_agents_md_from_a_subdirectory(offline, isolated_home, monkeypatch):
    write_skill(offline / ".ikigai" / "skills", "local", "Project-only skill.")
    (offline / "AGENTS.md").write_text("Use tabs.\n")
    TrustStore(isolated_home).trust(offline)
    (offline / "src").mkdir()
    monkeypatch.chdir(offline / "src")
    system = system_of(request("anthropic", "--no-tools"))
    assert "- local: Project-only skill." in system
    assert "## Project instructions (AGENTS.md)\n\nUse tabs." in system


def test_clear_forgets_the_skills_loaded_since_the_start(isolated_home, make_tool, fake_server):
    """After /clear the request is a new conversation's: the ``--skill`` skill stays, the
    text of one /load loaded and the tool of one the model loaded are gone."""
    greeter(isolated_home, make_tool)
    write_skill(isolated_home / "skills", "extra", "More rules.", body="Be extra careful.\n")
    replies = REPLIES["openai"]
    fake_server.push(replies.reply(calls=[("c1", "load_skill", {"name": "greeter"})]),
                     replies.reply("Loaded."), replies.reply("Fresh."))
    result = CliRunner().invoke(
        cli, ["chat", "--provider", "openai", "--no-stream", "--skill", "notes"],
        input="/load extra\nhello\n/clear\nagain\n/toolset\n", catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    first, loaded, cleared = (r.json for r in fake_server.requests)
    assert "Be extra careful." in first["messages"][0]["content"]
    assert "greet" in advertised("openai", loaded)
    system = cleared["messages"][0]["content"]
    assert system == first["messages"][0]["content"].replace(
        f"\n\n## Skill: extra (in {isolated_home / 'skills' / 'extra'})\n\nBe extra careful.", "")
    assert "## Skill: notes" in system and "extra careful" not in system
    assert cleared["messages"][1:] == [{"role": "user", "content": "again"}]
    assert advertised("openai", cleared) == advertised("openai", first)
    assert "greet" not in advertised("openai", cleared)
    assert result.stdout.splitlines()[-1].endswith("(skills loaded: notes)")
