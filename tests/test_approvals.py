"""Approvals through the CLI: the model asks for ``bash`` with ``rm -rf``, the fake provider
server replays it, and the real tools run (or do not)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ikigai_core.errors import ConfigError, UsageError
from ikigai_core.permissions import Condition, Rule, deciding_rule, parse_condition, read_rules
from tests.support.replies import REPLIES
from tests.support.terminal import Terminal
from tests.test_cli_agent import IKIGAI, invoke, keys, offline, sent_results  # noqa: F401

REPLY = REPLIES["openai"]

pytestmark = pytest.mark.usefixtures("offline", "keys")


@pytest.fixture
def victim(tmp_path):
    """A directory the model wants gone."""
    path = tmp_path / "victim"
    path.mkdir()
    (path / "precious.txt").write_text("keep me\n")
    return path


def model_runs(fake_server, *commands: str) -> None:
    """The model calls ``bash`` once per command (in one turn), then says done."""
    calls = [(f"c{i}", "bash", {"command": command}) for i, command in enumerate(commands)]
    fake_server.push(REPLY.reply(calls=calls), REPLY.reply("Done."))


def envelopes(fake_server) -> list[dict]:
    return [envelope for _, envelope in sent_results("openai", fake_server.requests[1].json)]


def decisions(home) -> list[dict]:
    return [json.loads(line) for line in (home / "approvals.jsonl").read_text().splitlines()]


def test_ask_without_a_terminal_denies_and_says_how_to_allow(fake_server, victim,
                                                              isolated_home):
    model_runs(fake_server, f"rm -rf {victim}")
    result = invoke("ask", "--provider", "openai", "--no-stream", "clean up")
    assert result.exit_code == 0, result.stderr
    assert victim.exists() and (victim / "precious.txt").exists()
    [envelope] = envelopes(fake_server)
    assert envelope["error_code"] == "TOOL_DENIED"
    assert "nobody can be asked" in envelope["error"]
    assert "--yes or --allow bash" in result.stderr
    assert "ikigai permissions allow bash" in result.stderr
    [entry] = decisions(isolated_home)
    assert entry["tool"] == "bash" and entry["arguments"] == {"command": f"rm -rf {victim}"}
    assert (entry["decision"], entry["by"]) == ("deny", "nobody to ask") and entry["time"]
    assert stat.S_IMODE((isolated_home / "approvals.jsonl").stat().st_mode) == 0o600


def test_approve_yes_in_a_chat_approves_what_would_ask(fake_server, victim, isolated_home,
                                                       monkeypatch):
    model_runs(fake_server, f"rm -rf {victim}")
    result = invoke("chat", "--provider", "openai", "--no-stream",
                    input="/approve\n/approve yes\nclean up\n")
    assert result.exit_code == 0, result.stderr
    assert not victim.exists()
    assert decisions(isolated_home)[0]["by"] == "--yes"
    assert result.stdout.splitlines()[:2] == [
        "sandbox: off; approvals: ask before tools other than file_read, glob and grep, "
        "unless a rule decides",
        "sandbox: off; approvals: --yes, every call runs unless a rule denies it"]
    monkeypatch.setenv("IKIGAI_DISABLE_PLUGINS", "ikigai_core.defaults.approvals")
    result = invoke("chat", "--provider", "openai", input="/approve ask\n")
    assert result.stderr == ("ikigai: /approve ask: every call runs, the approvals plugin "
                             "ikigai_core.defaults.approvals is disabled\n")


def test_yes_approves_every_call(fake_server, victim, isolated_home):
    model_runs(fake_server, f"rm -rf {victim}")
    result = invoke("ask", "--yes", "--provider", "openai", "--no-stream", "clean up")
    assert result.exit_code == 0, result.stderr
    assert not victim.exists()
    assert envelopes(fake_server)[0]["tool_success"] is True
    assert decisions(isolated_home)[0]["by"] == "--yes"


@pytest.mark.parametrize("how", ["rule", "--allow"])
def test_an_allow_matching_only_ls_runs_ls_and_not_rm(how, fake_server, victim,
                                                      isolated_home):
    condition = "/command~^ls( |$)"
    extra = []
    if how == "rule":
        stored = invoke("permissions", "allow", "bash", condition)
        assert stored.exit_code == 0 and "rule 1: allow bash when" in stored.stdout
    else:
        extra = ["--allow", f"bash:{condition}"]
    model_runs(fake_server, f"ls {victim}", f"rm -rf {victim}")
    result = invoke("ask", *extra, "--provider", "openai", "--no-stream", "look, then clean")
    assert result.exit_code == 0, result.stderr
    assert victim.exists()
    listed, removed = envelopes(fake_server)
    assert listed["result"]["output"].strip() == "precious.txt"
    assert removed["error_code"] == "TOOL_DENIED"
    assert sorted(e["decision"] for e in decisions(isolated_home)) == ["allow", "deny"]


def test_a_deny_rule_wins_over_yes_and_over_a_more_specific_allow(fake_server, victim):
    invoke("permissions", "allow", "bash", "/command~^rm ")
    invoke("permissions", "deny", "bash", "/command~rm -rf")
    model_runs(fake_server, f"rm -rf {victim}")
    result = invoke("ask", "--yes", "--provider", "openai", "--no-stream", "clean up")
    assert victim.exists()
    assert "denied by rule 2: deny bash" in envelopes(fake_server)[0]["error"]
    assert result.exit_code == 0


def test_a_trusted_project_adds_deny_but_never_allow(fake_server, victim, tmp_path,
                                                     isolated_home):
    (tmp_path / ".ikigai").mkdir()
    (tmp_path / ".ikigai" / "permissions.json").write_text(json.dumps({"rules": [
        {"tool": "bash", "decision": "allow"},
        {"tool": "file_*", "decision": "deny"},
    ]}))
    assert invoke("trust", str(tmp_path)).exit_code == 0
    fake_server.push(REPLY.reply(calls=[("c1", "bash", {"command": "true"}),
                                        ("c2", "file_read", {"file_path": "victim/precious.txt"})]),
                     REPLY.reply("Done."))
    result = invoke("ask", "--provider", "openai", "--no-stream", "go")
    bash, read = envelopes(fake_server)
    assert bash["error_code"] == "TOOL_DENIED"  # the project's allow was ignored
    assert read["error_code"] == "TOOL_DENIED" and "project rule: deny file_*" in read["error"]
    assert "a project cannot allow tools" in result.stderr


def test_read_only_built_ins_run_without_asking(fake_server, victim, isolated_home):
    fake_server.push(REPLY.reply(calls=[("c1", "file_read",
                                         {"file_path": str(victim / "precious.txt")})]),
                     REPLY.reply("Done."))
    assert invoke("ask", "--provider", "openai", "--no-stream", "read").exit_code == 0
    assert envelopes(fake_server)[0]["tool_success"] is True
    assert decisions(isolated_home)[0]["by"] == "default"


def test_tool_run_is_the_users_own_call_and_is_not_asked_about(victim):
    result = invoke("tool", "run", "bash", json.dumps({"command": f"rm -rf {victim}"}))
    assert result.exit_code == 0 and not victim.exists()


# -- Over a terminal -----------------------------------------------------------------------


def chat_terminal(tmp_path):
    return Terminal([IKIGAI, "chat", "--provider", "openai", "--no-stream"],
                    env={**os.environ, "TERM": "dumb"}, cwd=tmp_path)


def test_always_on_a_terminal_stores_a_rule_that_list_shows_and_remove_revokes(
    fake_server, victim, tmp_path, isolated_home
):
    command = f"ls -a {victim}"
    model_runs(fake_server, command)
    with chat_terminal(tmp_path) as term:
        start = term.read_until(b"> ")
        assert b"sandbox: off; approvals: ask before tools other than" in start
        term.write(b"look\r")
        question = term.read_until(b"(or type why not): ")
        assert f'"command": "{command}"'.encode() in question  # the whole command
        term.write(b"a\r")
        shown = term.read_until(b"> ")
        assert b"stored rule 1: allow bash when /command~^ls" in shown
        term.write(b"\x04")
        assert term.wait() == 0
    assert "precious.txt" in envelopes(fake_server)[0]["result"]["output"]
    assert decisions(isolated_home)[0]["by"].startswith("user, always (rule 1")
    listed = invoke("permissions", "list")
    assert listed.stdout.startswith("rule 1: allow bash when /command~^ls( ")
    # the stored rule approves the same program again, but not a second command after it
    rule = read_rules(isolated_home / "permissions.json", "user")[0]
    assert rule.matches("bash", {"command": "ls /tmp"})
    assert not rule.matches("bash", {"command": "ls; rm -rf /"})
    assert invoke("permissions", "remove", "1").stdout.startswith("Removed rule 1")
    assert invoke("permissions", "list", "--json").stdout == "[]\n"


@pytest.mark.parametrize(("answer", "reason"), [
    (b"use git clean instead\r", "the user declined the call: use git clean instead"),
    (b"\x03", "the user declined the call"),
], ids=["no-with-reason", "ctrl-c"])
def test_no_on_a_terminal_sends_the_reason_to_the_model(answer, reason, fake_server,
                                                        victim, tmp_path):
    model_runs(fake_server, f"rm -rf {victim}")
    with chat_terminal(tmp_path) as term:
        term.read_until(b"> ")
        term.write(b"clean up\r")
        term.read_until(b"(or type why not): ")
        term.write(answer)
        term.read_until(b"Done.\r\n> ")
        term.write(b"\x04")
        assert term.wait() == 0
    assert victim.exists()
    assert envelopes(fake_server)[0]["error"] == f"Tool 'bash' was denied: {reason}"


# -- The rules -----------------------------------------------------------------------------


def test_deny_wins_then_the_most_specific_rule_then_ask_on_a_tie():
    args = {"command": "git status", "n": [1, {"a/b": True}]}
    everything = Rule("*", "allow")
    bash_asks = Rule("bash", "ask")
    git_allowed = Rule("bash", "allow", (parse_condition("/command~^git status$"),))
    assert deciding_rule([everything, bash_asks], "bash", args) is bash_asks
    assert deciding_rule([everything, bash_asks, git_allowed], "bash", args) is git_allowed
    tie = Rule("bash", "ask", (Condition("/n/1/a~1b", equals=True),))
    assert deciding_rule([git_allowed, tie], "bash", args) is tie
    deny = Rule("b*", "deny")
    assert deciding_rule([git_allowed, tie, deny], "bash", args) is deny
    assert deciding_rule([git_allowed], "bash", {"command": "ls"}) is None
    assert not Condition("/n/7", equals=1).matches(args)
    assert parse_condition("/n=[1, 2]").equals == [1, 2]
    assert parse_condition("/name=plain text").equals == "plain text"


@pytest.mark.parametrize("text", ["command~x", "/command", "/command~(unclosed"])
def test_a_malformed_condition_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_condition(text)


@pytest.mark.parametrize("content", [
    "not json", '{"rules": {}}', '{"rules": [{"tool": "bash"}]}',
    '{"rules": [{"tool": "bash", "decision": "allow", "when": [{"pointer": "/c"}]}]}',
    '{"rules": [{"tool": "bash", "decision": "allow", "when": [{"pointer": "/c", "regex": "("}]}]}',
    '{"rules": [{"tool": "bash", "decision": "allow", "when": [{"pointer": "/c", "regex": 1}]}]}',
])
def test_a_corrupt_permissions_file_is_one_line_and_denies_calls(content, isolated_home,
                                                                 fake_server):
    path = isolated_home / "permissions.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="permissions.json"):
        read_rules(path, "user")
    listed = invoke("permissions", "list")
    assert listed.exit_code == 1 and listed.stderr.count("\n") == 1
    model_runs(fake_server, "true")
    invoke("ask", "--yes", "--provider", "openai", "--no-stream", "go")
    assert envelopes(fake_server)[0]["error_code"] == "TOOL_DENIED"
