"""Permission rules through the real ``ikigai`` (issue 21 items 4 and 9, issue 22 items 12
and 17): a rules file is checked whole when read, a rule's regular expression cannot hang
ikigai, a denial says which rule and how to lift it, and a rule for an unknown tool is
stored with a warning."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from ikigai_core.permissions import MATCH_TIMEOUT, Rule, parse_condition
from tests.test_approvals import decisions, envelopes, model_runs
from tests.test_cli_agent import IKIGAI, invoke, keys, offline  # noqa: F401

pytestmark = pytest.mark.usefixtures("offline", "keys")

DENY_RM = {"id": 1, "tool": "bash", "decision": "deny",
           "when": [{"pointer": "/command", "regex": "^rm "}]}


def ikigai(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` as a real process; a hang fails the test after ``timeout`` seconds."""
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, timeout=timeout)


def ask(*flags: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return ikigai("ask", *flags, "--provider", "openai", "--no-stream", "go", timeout=timeout)


def run(real: bool, *args: str) -> tuple[int, str, str]:
    """``ikigai ARGS`` as a real process, or (not ``real``) in-process: exit code, stdout,
    stderr."""
    if real:
        done = ikigai(*args)
        return done.returncode, done.stdout, done.stderr
    ran = invoke(*args)
    return ran.exit_code, ran.stdout, ran.stderr


# -- 21.4: permissions.json is checked whole when read ---------------------------------------


@pytest.mark.parametrize(("bad", "flags", "fault", "real"), [
    ({"id": 2, "tool": "bash", "decision": "deny",
      "when": [{"pointer": "command", "regex": "touch"}]}, ["--yes"],
     "when[0]: pointer \"command\" is not a JSON pointer starting with /", True),
    ({"id": 2, "tool": "bash", "decision": "allow", "when": {}}, [],
     "'when' must be a list of conditions", False),
    ({"id": 2, "tool": "bash", "decision": "allow", "when": None}, [],
     "'when' must be a list of conditions", False),
    ({"id": 2, "tool": "bash", "decision": "allow",
      "whne": [{"pointer": "/command", "regex": "^ls"}]}, [], "unknown key 'whne'", False),
    ({"id": 1, "tool": "bash", "decision": "allow"}, [], "'id' 1 is used twice", False),
    ({"id": 2, "tool": "bash", "decision": "deny",
      "when": [{"pointer": "/command", "regex": "touch", "flags": "i"}]}, ["--yes"],
     'when[0]: a condition is {"pointer": ..., "regex": ...}', False),
], ids=["pointer-without-slash", "when-object", "when-null", "misspelt-when", "id-twice",
        "condition-extra-key"])
def test_a_malformed_rule_refuses_the_whole_file_in_one_line(bad, flags, fault, real,
                                                             fake_server, isolated_home,
                                                             tmp_path):
    """One case end to end through real processes; the others' faults take the same path,
    so they run in-process."""
    path = isolated_home / "permissions.json"
    path.write_text(json.dumps({"rules": [DENY_RM, bad]}))
    where = f"{path}: rules[1]: {fault}"

    code, out, err = run(real, "permissions", "list")
    assert (code, out) == (1, "")
    assert err.startswith(f"ikigai: {where}") and err.count("\n") == 1

    model_runs(fake_server, "touch made")
    code, out, err = run(real, "ask", *flags, "--provider", "openai", "--no-stream", "go")
    assert code == 0, err
    assert not (tmp_path / "made").exists()
    [envelope] = envelopes(fake_server)
    assert envelope["error_code"] == "TOOL_DENIED"
    assert "the permission rules cannot be read" in envelope["error"]
    called, refused, ended = err.splitlines()
    assert (called, ended) == ('ikigai: → bash {"command": "touch made"}',
                               "ikigai: ← bash TOOL_DENIED")
    assert refused.startswith(f"ikigai: bash was not run: {where}")
    assert refused.endswith("; fix or remove that rule")
    [entry] = decisions(isolated_home)
    assert (entry["decision"], entry["by"]) == ("deny", "unreadable rules")


def test_a_malformed_project_rule_denies_too(fake_server, isolated_home, tmp_path):
    (tmp_path / ".ikigai").mkdir()
    path = tmp_path / ".ikigai" / "permissions.json"
    path.write_text(json.dumps({"rules": [{"tool": "bash", "decision": "deny",
                                           "when": [{"pointer": "", "regex": "rm"}]}]}))
    assert invoke("trust", str(tmp_path)).exit_code == 0
    model_runs(fake_server, "touch made")
    done = ask("--yes")
    assert not (tmp_path / "made").exists()
    assert f"ikigai: bash was not run: {path}: rules[0]: when[0]: pointer \"\"" in done.stderr


def test_the_command_line_and_the_file_share_one_parser(isolated_home):
    from ikigai_core.errors import UsageError

    for text in ("command~x", "~x", "=1"):
        with pytest.raises(UsageError, match="starting with /"):
            parse_condition(text)
    stored = invoke("permissions", "deny", "bash", "/command~^rm ", "/n=[1, 2]")
    assert stored.exit_code == 0, stored.stderr
    assert invoke("permissions", "list", "--json").stdout == json.dumps([
        {"id": 1, "tool": "bash", "decision": "deny",
         "when": [{"pointer": "/command", "regex": "^rm "}, {"pointer": "/n", "equals": [1, 2]}]}],
        indent=2) + "\n"


@pytest.mark.parametrize(("content", "fault"), [
    ('{"rules": [], "version": 2}', "is corrupt"),
    ('{"rules": ["bash"]}', "rules[0]: a rule must be an object"),
    ('{"rules": [{"tool": "", "decision": "deny"}]}', "rules[0]: 'tool' must be"),
    ('{"rules": [{"tool": "bash", "decision": "never"}]}', "rules[0]: 'decision' must be"),
    ('{"rules": [{"id": true, "tool": "bash", "decision": "deny"}]}', "rules[0]: 'id' must be"),
    ('{"rules": [{"id": 1, "tool": "a", "decision": "deny"}, {"id": 1, "tool": "b", '
     '"decision": "deny"}]}', "rules[1]: 'id' 1 is used twice"),
    ('{"rules": [{"tool": "b", "decision": "deny", "whne": []}]}', "unknown key 'whne'"),
    ('{"rules": [{"tool": "b", "decision": "deny", "when": null}]}', "'when' must be a list"),
    ('{"rules": [{"tool": "b", "decision": "deny", "when": [{"pointer": "/c", "regex": 1}]}]}',
     "when[0]: 'regex' must be a string"),
    ('{"rules": [{"tool": "b", "decision": "deny", "when": [{"pointer": "/c", "regex": "("}]}]}',
     "when[0]: invalid regular expression '('"),
])
def test_each_fault_is_named(content, fault, isolated_home):
    (isolated_home / "permissions.json").write_text(content)
    listed = invoke("permissions", "list")
    assert listed.exit_code == 1 and fault in listed.stderr
    assert listed.stderr.count("\n") == 1 and "Traceback" not in listed.stderr


# -- 21.9: a rule's regular expression is searched under a timeout ---------------------------


def test_a_backtracking_rule_cannot_hang_ikigai(fake_server, isolated_home):
    """The issue's case: ``^(a+)+$`` against 32 ``a`` and ``!`` (``re`` still searched
    after 60 s)."""
    assert invoke("permissions", "deny", "bash", "/command~^(a+)+$").exit_code == 0
    model_runs(fake_server, "a" * 32 + "!")
    started = time.monotonic()
    done = ask("--yes", timeout=30)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    assert decisions(isolated_home)[0]["by"] == "--yes"  # no match: the rule is not used


@pytest.mark.parametrize(("decision", "flags", "by"), [
    ("deny", ["--yes"], "rule 1: deny bash when /command~^(a|a)+$"),
    ("ask", ["--allow", "bash"], "rule 1: ask bash when /command~^(a|a)+$"),
    ("allow", [], "nobody to ask"),
])
def test_a_rule_that_times_out_fails_closed(decision, flags, by, fake_server, isolated_home,
                                            tmp_path):
    """A timed-out search matches for deny and ask and does not for allow: the call is
    denied, asked about, or asked about (and nobody can answer)."""
    assert invoke("permissions", decision, "bash", "/command~^(a|a)+$").exit_code == 0
    model_runs(fake_server, "a" * 40 + "!")
    started = time.monotonic()
    done = ask(*flags, timeout=30)
    assert time.monotonic() - started < 20, done.stderr
    [entry] = decisions(isolated_home)
    if decision == "ask":  # the rule asks; --allow answers it
        assert (entry["decision"], entry["by"]) == ("allow", "--allow bash")
    else:
        assert (entry["decision"], entry["by"]) == ("deny", by)


def test_timeouts_in_process():
    slow = parse_condition("/c~^(a|a)+$")
    arguments = {"c": "a" * 40 + "!"}
    started = time.monotonic()
    assert slow.matches(arguments, on_timeout=True)
    assert not slow.matches(arguments)
    assert time.monotonic() - started < 20 * MATCH_TIMEOUT
    assert Rule("bash", "deny", (slow,)).matches("bash", arguments)
    assert Rule("bash", "ask", (slow,)).matches("bash", arguments)
    assert not Rule("bash", "allow", (slow,)).matches("bash", arguments)


# -- 22.12: a denial says which rule and how to lift it --------------------------------------


def test_a_deny_rule_says_the_rule_and_how_to_remove_it(fake_server, isolated_home, tmp_path):
    assert invoke("permissions", "deny", "bash", "/command~^touch ").exit_code == 0
    model_runs(fake_server, "touch made")
    done = ask("--yes")
    assert done.stderr.splitlines()[1:] == [
        "ikigai: bash was not run: denied by rule 1: deny bash when /command~^touch ; remove "
        "it with `ikigai permissions remove 1`",
        "ikigai: ← bash TOOL_DENIED"]
    assert not (tmp_path / "made").exists()
    assert envelopes(fake_server)[0]["error"] == (
        "Tool 'bash' was denied: denied by rule 1: deny bash when /command~^touch ")


def test_a_project_deny_rule_says_where_it_is(fake_server, isolated_home, tmp_path):
    (tmp_path / ".ikigai").mkdir()
    (tmp_path / ".ikigai" / "permissions.json").write_text(
        '{"rules": [{"tool": "bash", "decision": "deny"}]}')
    assert invoke("trust", str(tmp_path)).exit_code == 0
    model_runs(fake_server, "touch made")
    assert ("ikigai: bash was not run: denied by project rule: deny bash; it is in the trusted "
            "project's .ikigai/permissions.json\n") in ask("--yes").stderr


def test_a_hand_written_rule_without_an_id_names_the_file(fake_server, isolated_home):
    path = isolated_home / "permissions.json"
    path.write_text('{"rules": [{"tool": "bash", "decision": "deny"}, {"tool": "grep", '
                    '"decision": "ask"}]}')
    model_runs(fake_server, "true")
    done = invoke("ask", "--yes", "--provider", "openai", "--no-stream", "go")
    assert (f"ikigai: bash was not run: denied by user rule: deny bash; remove it from "
            f"{path}\n") in done.stderr


# -- 22.17: a rule for a tool nobody has is stored with a warning ----------------------------


@pytest.mark.parametrize(("decision", "tool", "warned"), [
    ("allow", "nosuchtool", True), ("deny", "zz_*", True), ("ask", "bash", False),
    ("deny", "file_*", False)])
def test_a_rule_for_no_known_tool_is_stored_with_a_warning(decision, tool, warned,
                                                           isolated_home):
    done = invoke("permissions", decision, tool)
    assert done.exit_code == 0
    assert done.stdout == f"Stored rule 1: {decision} {tool}\n"
    warning = (f"ikigai: no tool found now matches '{tool}' (`ikigai tool list` shows them); "
               "the rule is kept for when one comes\n")
    assert done.stderr == (warning if warned else "")
    assert json.loads(invoke("permissions", "list", "--json").stdout)[0]["tool"] == tool
