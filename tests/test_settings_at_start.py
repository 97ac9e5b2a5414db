"""Every setting a run needs is checked as ``ask`` and ``chat`` start, before the model is
asked (issue 22, item 13): a bad value is one line and no request, even when the tools'
schemas are cached and no tool process runs before the model's first answer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.replies import REPLIES
from tests.test_cli_agent import invoke, keys, offline  # noqa: F401

pytestmark = pytest.mark.usefixtures("offline", "keys")

BAD = [
    ("IKIGAI_SANDBOX", "bogus", "'sandbox' must be one of off, read-only, workspace-write"),
    ("IKIGAI_SANDBOX_NETWORK", "maybe", "'sandbox_network' must be true or false"),
    ("IKIGAI_TOOL_TIMEOUT", "soon", "'tool_timeout' must be a positive float"),
    ("IKIGAI_TOOL_MAX_OUTPUT", "lots", "'tool_max_output' must be a positive int"),
]


@pytest.mark.parametrize("command", ["ask", "chat"])
@pytest.mark.parametrize(("variable", "value", "message"), BAD)
def test_a_bad_setting_stops_the_run_before_the_model_is_asked(
    command, variable, value, message, fake_server, monkeypatch
):
    assert invoke("tool", "list").exit_code == 0  # the schemas are cached: no tool runs
    monkeypatch.setenv(variable, value)
    reply = REPLIES["openai"].reply(calls=[("c1", "bash", {"command": "true"})])
    fake_server.push(reply, REPLIES["openai"].reply("Done."))
    args = ["go"] if command == "ask" else []
    result = invoke(command, "--yes", "--provider", "openai", "--no-stream", *args,
                    input="go\n")
    assert result.exit_code == 1
    assert result.stderr == (f"ikigai: environment variable {variable}: {message}, "
                             f"got {value!r}; fix or remove it\n")
    assert fake_server.requests == [] and result.stdout == ""


def test_a_bad_mode_in_config_json_names_the_file(fake_server, isolated_home):
    (isolated_home / "config.json").write_text('{"sandbox": "workspace"}')
    result = invoke("ask", "--provider", "openai", "go")
    assert result.exit_code == 1 and fake_server.requests == []
    assert result.stderr == (f"ikigai: {isolated_home / 'config.json'}: 'sandbox' must be one "
                             "of off, read-only, workspace-write, got 'workspace'; "
                             "fix or remove it\n")


def test_a_bad_setting_no_run_reads_does_not_stop_tool_list(monkeypatch):
    monkeypatch.setenv("IKIGAI_MAX_TURNS", "0")
    assert invoke("tool", "list").exit_code == 0


def test_a_tool_env_the_policy_cannot_read_stops_the_run(fake_server, isolated_home):
    assert invoke("tool", "list").exit_code == 0
    (isolated_home / "config.json").write_text('{"tool_env": {"inherit": "some"}}')
    result = invoke("ask", "--provider", "openai", "go")
    assert result.exit_code == 1 and fake_server.requests == []
    assert result.stderr == ("ikigai: config.json: 'tool_env.inherit' must be one of all, "
                             "core, none, got 'some'\n")


def test_a_disabled_policy_plugin_checks_nothing(fake_server, isolated_home, monkeypatch):
    (isolated_home / "config.json").write_text('{"tool_env": {"inherit": "some"}}')
    monkeypatch.setenv("IKIGAI_DISABLE_PLUGINS", "ikigai_core.defaults.tool_env")
    fake_server.push(REPLIES["openai"].reply("Done."))
    result = invoke("ask", "--provider", "openai", "--no-stream", "go")
    assert (result.exit_code, result.stdout) == (0, "Done.\n")


def test_a_sandbox_bwrap_cannot_build_stops_the_run(fake_server, tmp_path):
    """A real subprocess (the bwrap probe is remembered per process) whose PATH has no bwrap;
    the schemas are cached, so no tool process would have found out before the model."""
    assert invoke("tool", "list").exit_code == 0
    env = {**os.environ, "IKIGAI_SANDBOX": "workspace-write", "PATH": str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "ikigai_core.cli", "ask", "--provider", "openai",
                          "go"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and fake_server.requests == []
    assert run.stderr.count("\n") == 1 and "bwrap is not installed" in run.stderr
