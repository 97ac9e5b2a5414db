"""Agent definitions: the format, every field checked, the layers, ``ikigai agents``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikigai_core.agent_definitions import (
    AgentDefinition,
    AgentIndex,
    load_agent_definitions,
    read_definition,
)
from ikigai_core.budget import Budget
from ikigai_core.cli import cli
from ikigai_core.skills import MAX_SKILL_BYTES
from ikigai_core.trust import TrustStore

REVIEWER = """\
---
name: reviewer
description: Reviews a diff for bugs; give it the diff's path.
tools: [file_read, grep]
model: claude-haiku-4-5
max_turns: 8
budget: {tokens: 50000, seconds: 120, cost: 0.5}
---
You review code. Answer with a list of bugs, most severe first.
"""


def write_agent(directory: Path, name: str, text: str | None = None) -> Path:
    """``directory/name.md`` holding ``text`` (default: a minimal valid definition)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text if text is not None else
                    f"---\ndescription: The {name} agent.\n---\nYou are {name}.\n")
    return path


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# -- The format -------------------------------------------------------------------------


def test_every_field_is_read_and_the_body_is_the_system_prompt(tmp_path):
    path = write_agent(tmp_path, "reviewer", REVIEWER)
    assert read_definition(path, "user") == AgentDefinition(
        name="reviewer", description="Reviews a diff for bugs; give it the diff's path.",
        prompt="You review code. Answer with a list of bugs, most severe first.", path=path,
        source="user", tools=("file_read", "grep"), model="claude-haiku-4-5", max_turns=8,
        budget=Budget(tokens=50000, seconds=120.0, cost=0.5))


def test_only_a_description_is_needed_the_name_is_the_files(tmp_path):
    path = write_agent(tmp_path, "scout", "---\ndescription: Finds files.\ntools: glob, grep\n"
                       "---\nFind the files asked for.\n")
    agent = read_definition(path, "project")
    assert isinstance(agent, AgentDefinition)
    assert (agent.name, agent.tools, agent.model, agent.max_turns, agent.budget) == (
        "scout", ("glob", "grep"), None, None, Budget())


@pytest.mark.parametrize("text, reason", [
    ("You are nobody.\n", "no front matter: start it with ---, description: ..., ---"),
    ("---\ndescription: d\n", "front matter is not closed by a line '---'"),
    ("---\ndescription: [d\n---\nx\n", "bad front matter at line 3: "),
    ("---\n- a list\n---\nx\n", "front matter must be a mapping"),
    ("---\ndescription: d\nmax_turn: 3\n---\nx\n",
     "unknown front matter key 'max_turn' (did you mean 'max_turns'?); known: name, "
     "description, tools, model, max_turns, budget"),
    ("---\nname: has space\ndescription: d\n---\nx\n",
     "'name' must be 1-64 of A-Z a-z 0-9 _ -, got 'has space'"),
    ("---\nname: 7\ndescription: d\n---\nx\n", "'name' must be 1-64"),
    ("---\nname: x\n---\nx\n", "no description: add 'description:' saying when to use"),
    ("---\ndescription: '   '\n---\nx\n", "no description"),
    (f"---\ndescription: {'d' * 1025}\n---\nx\n", "'description' is over 1024 characters"),
    ("---\ndescription: d\n---\n\n  \n", "no system prompt: write the agent's instructions"),
    ("---\ndescription: d\ntools: 7\n---\nx\n", "'tools' must be a list of tool names"),
    ("---\ndescription: d\ntools: [ok, 'not ok']\n---\nx\n", "'tools' must be a list"),
    ("---\ndescription: d\nmodel: ''\n---\nx\n", "'model' must be a model name, got ''"),
    ("---\ndescription: d\nmodel: [gpt]\n---\nx\n", "'model' must be a model name"),
    ("---\ndescription: d\nmodel: \"gpt\\e[2J\"\n---\nx\n", "'model' must be a model name"),
    ("---\ndescription: d\nmax_turns: 0\n---\nx\n",
     "'max_turns' must be a positive whole number, got 0"),
    ("---\ndescription: d\nmax_turns: 2.5\n---\nx\n", "'max_turns' must be a positive whole"),
    ("---\ndescription: d\nmax_turns: true\n---\nx\n", "'max_turns' must be a positive whole"),
    ("---\ndescription: d\nmax_turns: '3'\n---\nx\n", "'max_turns' must be a positive whole"),
    ("---\ndescription: d\nmax_turns: .inf\n---\nx\n", "'max_turns' must be a positive whole"),
    ("---\ndescription: d\nbudget: 5\n---\nx\n",
     "'budget' must be a mapping of tokens, turns, seconds, cost"),
    ("---\ndescription: d\nbudget: {token: 5}\n---\nx\n",
     "unknown budget kind 'token' (did you mean 'tokens'?); known: tokens, turns, seconds"),
    ("---\ndescription: d\nbudget: {seconds: -1}\n---\nx\n",
     "'budget.seconds' must be a positive number, got -1"),
    ("---\ndescription: d\nbudget: {cost: .nan}\n---\nx\n", "'budget.cost' must be a positive"),
])
def test_a_wrong_field_skips_the_definition_with_one_line(tmp_path, text, reason):
    skipped = read_definition(write_agent(tmp_path, "bad", text), "user")
    assert not isinstance(skipped, AgentDefinition)
    assert (skipped.name, skipped.kind) == ("bad", "invalid")
    assert skipped.reason.startswith(reason)
    assert "\n" not in skipped.reason


def test_a_huge_or_binary_or_exposed_file_is_refused(tmp_path):
    big = write_agent(tmp_path, "big", "---\ndescription: d\n---\n" + "x" * MAX_SKILL_BYTES)
    assert read_definition(big, "user").reason == "larger than 256 KiB"
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"---\ndescription: \xff\n---\nx\n")
    assert read_definition(binary, "user").reason == "not UTF-8 text"
    exposed = write_agent(tmp_path, "exposed")
    exposed.chmod(0o666)
    assert read_definition(exposed, "user").reason.startswith(
        f"{exposed} is writable by other users (mode 666); ikigai refuses it: `chmod go-w ")


# -- The layers -------------------------------------------------------------------------


def test_a_broken_definition_leaves_the_others_loaded(isolated_home, tmp_path):
    agents = isolated_home / "agents"
    write_agent(agents, "good")
    write_agent(agents, "bad", "---\ndescription: d\nmax_turns: -1\n---\nx\n")
    (agents / "notes.txt").write_text("not a definition")
    (agents / "folder.md").mkdir()
    index = load_agent_definitions(isolated_home, tmp_path)
    assert list(index) == ["good"]
    assert [(s.name, s.kind) for s in index.skipped] == [("bad", "invalid")]
    assert index.why_not("bad") == ("agent 'bad' was not loaded: 'max_turns' must be a "
                                    "positive whole number, got -1")
    assert index.why_not("goo") == "unknown agent 'goo' (did you mean 'good'?); known: good"


def test_two_files_naming_one_agent_are_both_left_out(isolated_home, tmp_path):
    agents = isolated_home / "agents"
    write_agent(agents, "one", "---\nname: twin\ndescription: d\n---\nx\n")
    write_agent(agents, "two", "---\nname: twin\ndescription: d\n---\ny\n")
    index = load_agent_definitions(isolated_home, tmp_path)
    assert list(index) == []
    assert {s.reason for s in index.skipped} == {
        "agent 'twin' is defined by one.md, two.md; rename one"}


def test_the_project_wins_once_trusted(isolated_home, tmp_path):
    write_agent(isolated_home / "agents", "shared", "---\ndescription: mine\n---\nx\n")
    project = tmp_path / "project"
    write_agent(project / ".ikigai" / "agents", "shared", "---\ndescription: theirs\n---\nx\n")
    write_agent(project / ".ikigai" / "agents", "extra")
    index = load_agent_definitions(isolated_home, project)
    assert index["shared"].description == "mine"
    assert sorted((s.name, s.kind) for s in index.skipped) == [
        ("extra", "untrusted"), ("shared", "untrusted")]
    assert index.why_not("extra") == (f"agent 'extra' was not loaded: project directory not "
                                      f"trusted; run `ikigai trust {project.resolve()}`")
    TrustStore(isolated_home).trust(project)
    index = load_agent_definitions(isolated_home, project)
    assert (index["shared"].description, index["shared"].source) == ("theirs", "project")
    assert [(s.source, s.kind, s.reason.split(" at ")[0]) for s in index.skipped] == [
        ("user", "ignored", "overridden by the project agent")]


def test_the_index_gives_each_agent_one_bounded_line(tmp_path):
    long = write_agent(tmp_path, "long", f"---\ndescription: {'word ' * 60}\n---\nx\n")
    short = write_agent(tmp_path, "short", "---\ndescription: |\n  Two\n  lines.\n---\nx\n")
    index = AgentIndex([read_definition(long, "user"), read_definition(short, "user")])
    section = index.index()
    heading, _, *lines = section.splitlines()
    assert heading == "## Agents" and "\n\n" not in section  # one paragraph of the prompt
    assert lines[1] == "- short: Two lines."
    assert len(lines[0]) == 160 and lines[0].endswith("…")
    assert AgentIndex().index() is None


# -- ikigai agents ------------------------------------------------------------------------


def test_agents_list_plain_and_json_and_broken_on_stderr(isolated_home):
    write_agent(isolated_home / "agents", "reviewer", REVIEWER)
    write_agent(isolated_home / "agents", "scout")
    write_agent(isolated_home / "agents", "bad", "---\ndescription: d\n---\n")
    result = invoke("agents", "list")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "reviewer  user     Reviews a diff for bugs; give it the diff's path.",
        "scout     user     The scout agent."]
    assert result.stderr == (
        f"ikigai: skipped user agent 'bad' ({isolated_home / 'agents' / 'bad.md'}): no system "
        "prompt: write the agent's instructions after the front matter\n")
    listed = json.loads(invoke("agents", "list", "--json").stdout)
    assert listed[0] == {
        "name": "reviewer", "description": "Reviews a diff for bugs; give it the diff's path.",
        "source": "user", "path": str(isolated_home / "agents" / "reviewer.md"),
        "tools": ["file_read", "grep"], "model": "claude-haiku-4-5", "max_turns": 8,
        "budget": {"tokens": 50000, "seconds": 120.0, "cost": 0.5},
        "prompt": "You review code. Answer with a list of bugs, most severe first."}
    assert listed[1]["tools"] is None and listed[1]["budget"] == {}


def test_agents_list_says_where_to_put_them_when_there_are_none(isolated_home):
    result = invoke("agents", "list")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == (f"ikigai: no agent definitions found; put NAME.md files in "
                             f"{isolated_home / 'agents'}\n")


def test_agents_show_plain_json_and_unknown(isolated_home):
    write_agent(isolated_home / "agents", "reviewer", REVIEWER)
    write_agent(isolated_home / "agents", "scout")
    result = invoke("agents", "show", "reviewer")
    assert result.exit_code == 0
    assert result.stdout == (
        f"Agent: reviewer\nSource: user\nPath: {isolated_home / 'agents' / 'reviewer.md'}\n"
        "Description: Reviews a diff for bugs; give it the diff's path.\n"
        "Tools: file_read, grep\nModel: claude-haiku-4-5\nMax turns: 8\n"
        "Budget: tokens 50000, seconds 120, cost 0.5\n\n"
        "You review code. Answer with a list of bugs, most severe first.\n")
    assert "Tools: the parent's\nModel: the parent's\nMax turns: the max_turns setting's\nBudget: the " \
           "fork's, else the agents_budget_* settings\n" in invoke("agents", "show", "scout").stdout
    assert json.loads(invoke("agents", "show", "scout", "--json").stdout)["prompt"] == \
        "You are scout."
    unknown = invoke("agents", "show", "reviewr")
    assert (unknown.exit_code, unknown.stdout) == (1, "")
    assert unknown.stderr == ("ikigai: unknown agent 'reviewr' (did you mean 'reviewer'?); "
                              "known: reviewer, scout\n")


def test_agents_show_escapes_what_a_definition_could_do_to_the_terminal(isolated_home):
    write_agent(isolated_home / "agents", "sly",
                "---\ndescription: \"fine\\e]0;owned\\a\"\n---\nHi \x1b[2J there.\n")
    listed = invoke("agents", "list").stdout
    assert listed == "sly  user     fine\\x1b]0;owned\\x07\n"
    assert "Hi \\x1b[2J there." in invoke("agents", "show", "sly").stdout
