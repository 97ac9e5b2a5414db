"""The call boundary: what reaches a tool, and what ikigai says when a call cannot start
(issue 21 items 8 and 11, issue 22 items 3 and 16).

The model is the fake OpenAI server (tests/support/fakeserver.py) scripting the calls an
attacker would; ``ikigai`` runs as a real subprocess, and so do the tools.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ikigai_core.app import App
from ikigai_core.cli import cli
from tests.support.replies import REPLIES
from tests.test_skills import write_skill

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
OPENAI = REPLIES["openai"]


def ikigai(*args: str, cwd: Path, stdin: int | None = None,
           input: str | None = None) -> subprocess.CompletedProcess[str]:
    """The installed ``ikigai`` as a real subprocess (60 s at most)."""
    return subprocess.run([IKIGAI, *args], cwd=cwd, stdin=stdin, input=input,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def model(fake_server, monkeypatch):
    """The fake OpenAI server as the model: ``model(calls, ...)`` scripts one turn of tool
    calls per argument, then a last turn "Done."; returns the server."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-boundary-0123456789")

    def script(*turns: list[tuple[str, str, Any]]) -> Any:
        fake_server.push(*(OPENAI.reply(calls=calls) for calls in turns), OPENAI.reply("Done."))
        return fake_server

    return script


def results(request: Any) -> list[dict[str, Any]]:
    """The envelopes a request to OpenAI sends back, in call order."""
    return [json.loads(m["content"]) for m in request.json["messages"] if m["role"] == "tool"]


def ask(cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``ikigai ask`` with OpenAI, unstreamed: it must end well and print no traceback."""
    ran = ikigai("ask", "--provider", "openai", "--no-stream", *options, "go", cwd=cwd)
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    return ran


# -- Choosing tools is a boundary (issue 21 item 11) --------------------------------------


def test_no_tools_means_a_file_read_call_reads_nothing(model, tmp_path):
    (tmp_path / "secret.txt").write_text("the secret is swordfish-42\n")
    server = model([("c1", "file_read", {"file_path": "secret.txt"})])
    ran = ask(tmp_path, "--no-tools")
    assert "ikigai: ← file_read TOOL_NOT_FOUND" in ran.stderr
    envelope, = results(server.requests[1])
    assert envelope["error_code"] == "TOOL_NOT_FOUND"
    assert "swordfish" not in server.requests[1].body.decode()


def test_a_disabled_tool_never_starts_even_with_yes(model, tmp_path, isolated_home):
    (isolated_home / "config.json").write_text('{"disabled_tools": ["bash"]}')
    marker = tmp_path / "marker"
    server = model([("c1", "bash", {"command": f"touch {marker}"}),
                    ("c2", "glob", {"pattern": "*", "path": None})])
    ran = ask(tmp_path, "--yes")
    assert not marker.exists()
    assert [e.get("error_code") for e in results(server.requests[1])] == ["TOOL_NOT_FOUND", None]
    assert "ikigai: ← bash TOOL_NOT_FOUND" in ran.stderr


def test_tools_option_offers_and_runs_only_the_tools_named(model, tmp_path):
    marker = tmp_path / "marker"
    server = model([("c1", "file_write", {"file_path": str(marker), "content": "x"}),
                    ("c2", "glob", {"pattern": "*", "path": None})])
    ask(tmp_path, "--tools", "glob", "--yes")
    assert not marker.exists()
    not_found, ran = results(server.requests[1])
    assert not_found["error_code"] == "TOOL_NOT_FOUND"
    assert "Available tools: glob" in not_found["error"]
    assert ran["tool_success"] is True


def test_a_tool_left_out_with_toolset_in_chat_never_starts(model, tmp_path):
    marker = tmp_path / "marker"
    server = model([("c1", "bash", {"command": f"touch {marker}"})])
    ran = ikigai("chat", "--provider", "openai", "--no-stream", "--yes", cwd=tmp_path,
                 input="/toolset glob\ngo\n")
    assert ran.returncode == 0, ran.stderr
    assert not marker.exists()
    assert [e["error_code"] for e in results(server.requests[1])] == ["TOOL_NOT_FOUND"]


def test_a_skill_tool_runs_only_once_its_skill_is_loaded(model, tmp_path, isolated_home):
    skill = write_skill(isolated_home / "skills", "stamping").parent
    marker = tmp_path / "marker"
    (skill / "tools").mkdir()
    stamp = skill / "tools" / "stamp-tool"
    stamp.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --schema ]; then echo \'{"name": "stamp", "description": "Stamp.",'
        ' "parameters": {"type": "object", "properties": {}}}\'; exit 0; fi\n'
        f"echo stamped >> {marker}; echo '{{\"ok\": true}}'\n")
    stamp.chmod(0o755)
    server = model([("c1", "stamp", {})], [("c2", "load_skill", {"name": "stamping"})],
                   [("c3", "stamp", {})])
    ask(tmp_path, "--yes")
    assert [results(request)[-1].get("error_code") for request in server.requests[1:]] == [
        "TOOL_NOT_FOUND", None, None]
    assert marker.read_text() == "stamped\n"


def test_a_tool_the_provider_left_out_is_not_run(fake_server, monkeypatch, tmp_path,
                                                 isolated_home, make_tool):
    """Anthropic cannot take a property named ``$top``: the tool is left out of its
    requests, so a call of it is no more than a call of a tool that does not exist."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-boundary-0123456789")
    marker = tmp_path / "marker"
    make_tool(isolated_home / "tools", "odata-tool", body=f"open({str(marker)!r}, 'w')\n"
              "print('{}')", schema={"name": "odata", "description": "OData", "parameters": {
                  "type": "object", "properties": {"$top": {"type": "integer"}}}})
    replies = REPLIES["anthropic"]
    fake_server.push(replies.reply(calls=[("toolu_1", "odata", {})]), replies.reply("Done."))
    ran = ikigai("ask", "--provider", "anthropic", "--no-stream", "--yes", "go", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert not marker.exists()
    assert "ikigai: ← odata TOOL_NOT_FOUND" in ran.stderr


# -- NaN and Infinity are not JSON (issue 21 item 8) --------------------------------------


def strict(text: str) -> Any:
    """``text`` parsed as RFC 8259 JSON: a NaN or Infinity in it fails the test."""
    return json.loads(text, parse_constant=lambda constant: pytest.fail(f"{constant} in {text}"))


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_model_call_with_a_non_finite_number_is_invalid_params_and_never_starts(
    model, tmp_path, isolated_home, number
):
    marker = tmp_path / "marker"
    arguments = f'{{"command": "touch {marker}", "timeout": {number}}}'
    server = model([("c1", "bash", arguments), ("c2", "bash", {"command": "true"})])
    ran = ask(tmp_path, "--yes")
    assert not marker.exists()
    refused, _ = results(server.requests[1])
    assert refused["error_code"] == "INVALID_PARAMS"
    assert f"{number.lstrip('-')} is not a JSON number" in refused["error"]
    assert "ikigai: ← bash INVALID_PARAMS" in ran.stderr
    audit = (isolated_home / "approvals.jsonl").read_text().splitlines()
    assert [strict(line)["arguments"] for line in audit] == [{"command": "true"}]
    session, = strict(ikigai("sessions", "list", "--json", cwd=tmp_path).stdout)
    shown = ikigai("sessions", "show", session["id"], "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    strict(shown.stdout)


def test_a_provider_body_with_nan_is_one_provider_error_line(fake_server, monkeypatch,
                                                             tmp_path):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-boundary-0123456789")
    marker = tmp_path / "marker"
    call = ("toolu_1", "bash", {"command": f"touch {marker}", "timeout": float("nan")})
    fake_server.push(REPLIES["anthropic"].reply(calls=[call]))
    ran = ikigai("ask", "--provider", "anthropic", "--no-stream", "--yes", "go", cwd=tmp_path)
    assert (ran.returncode, ran.stdout, marker.exists()) == (1, "", False)
    assert ran.stderr.startswith(
        "ikigai: Provider 'anthropic' sent a broken response (NaN is not a JSON number): ")
    assert len(ran.stderr.splitlines()) == 1


@pytest.mark.parametrize(("arguments", "field"), [
    ({"command": "touch MARKER", "timeout": math.nan}, "timeout"),
    ({"command": "touch MARKER", "x": [1, {"y": -math.inf}]}, "x[1].y"),
])
def test_the_executor_refuses_non_finite_arguments_from_any_caller(tmp_path, monkeypatch,
                                                                   arguments, field):
    monkeypatch.chdir(tmp_path)
    arguments["command"] = f"touch {tmp_path / 'marker'}"
    app = App()
    outcome = app.executor.call(app.registry(), "bash", arguments).outcome
    assert outcome.error_code == "INVALID_PARAMS"
    assert outcome.error == (f"Invalid arguments for tool 'bash': '{field}': NaN and "
                             "infinity are not JSON numbers")
    assert not (tmp_path / "marker").exists()


def test_tool_run_with_nan_is_invalid_params(tmp_path):
    marker = tmp_path / "marker"
    ran = ikigai("tool", "run", "bash", f'{{"command": "touch {marker}", "timeout": NaN}}',
                 cwd=tmp_path)
    assert ran.returncode == 1 and not marker.exists()
    assert strict(ran.stdout)["error"] == (
        "Invalid arguments for tool 'bash': not valid JSON (NaN is not a JSON number)")
    in_process = CliRunner().invoke(cli, ["tool", "run", "bash", '{"command": -Infinity}'])
    assert "(Infinity is not a JSON number)" in strict(in_process.stdout)["error"]


# -- A failing envelope plugin (issue 22 item 3) -----------------------------------------


@pytest.mark.parametrize(("answer", "why"), [
    ("raise RuntimeError('envelope\\nbug')", "RuntimeError: envelope bug"),
    ("return 'not an object'", "it returned str, not a JSON object"),
])
def test_tool_run_with_a_failing_envelope_plugin_gets_the_default_envelope(
    site, monkeypatch, tmp_path, answer, why
):
    site("ikigai-acme", "acme", f"""
        from ikigai_core import hookimpl
        @hookimpl
        def ikigai_wrap_result(outcome):
            {answer}
    """)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    ran = ikigai("tool", "run", "bash", '{"command": "echo hi"}', cwd=tmp_path)
    assert ran.returncode == 0
    assert strict(ran.stdout) == {"tool_success": True, "result": {"output": "hi",
                                                                   "exit_code": 0}}
    assert ran.stderr == (f"ikigai: plugin 'acme' failed in ikigai_wrap_result: {why}; "
                          "skipped. Disable it with IKIGAI_DISABLE_PLUGINS=acme\n")


def test_failing_envelope_plugins_are_reported_once_and_the_next_plugin_answers(tmp_path):
    from ikigai_core import hookimpl

    asked = []

    class Plain:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            return {"ok": outcome.success}

    class Odd:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            asked.append("odd")
            return ["not", "an", "object"]

    class Broken:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            asked.append("broken")
            raise ZeroDivisionError("division by zero")

    app = App(cwd=tmp_path)
    for plugin in (Plain(), Odd(), Broken()):  # pluggy asks the last registered first
        app.pm.register(plugin, name=type(plugin).__name__.lower())
    registry = app.registry()
    envelopes = [app.executor.call(registry, name, {"pattern": "*"}).envelope
                 for name in ("glob", "nope", "glob")]
    assert envelopes == [{"ok": True}, {"ok": False}, {"ok": True}]
    assert asked == ["broken", "odd", "odd"]  # odd once more, alone: who gave that answer
    assert [notice.message.partition("; skipped")[0] for notice in app.notices] == [
        "plugin 'broken' failed in ikigai_wrap_result: ZeroDivisionError: division by zero",
        "plugin 'odd' failed in ikigai_wrap_result: it returned list, not a JSON object"]


def test_tool_run_without_arguments_is_a_usage_error_naming_what_to_pass(tmp_path):
    ran = ikigai("tool", "run", "bash", cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        "ikigai: no arguments for tool 'bash': pass a JSON object, as "
        "`ikigai tool run bash '{...}'` or on stdin (`ikigai tool show bash` lists its "
        "parameters)\n")
    blank = ikigai("tool", "run", "bash", " \n", cwd=tmp_path)
    assert (blank.returncode, blank.stderr) == (2, ran.stderr)
    in_process = CliRunner().invoke(cli, ["tool", "run", "bash"], input="")
    assert (in_process.exit_code, in_process.stderr) == (2, ran.stderr)
