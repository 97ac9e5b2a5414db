"""The bubblewrap sandbox, with the real ``bwrap``, through the CLI and the fake server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

from ikigai_core.defaults.sandbox import usable_bwrap
from ikigai_core.errors import IkigaiError
from tests.support.replies import REPLIES
from tests.test_cli_agent import invoke, keys, offline, sent_results  # noqa: F401

pytestmark = pytest.mark.usefixtures("offline", "keys")


def _bwrap_problem() -> str | None:
    try:
        usable_bwrap()
    except IkigaiError as exc:
        return str(exc)
    return None


needs_bwrap = pytest.mark.skipif(
    _bwrap_problem() is not None,
    reason=f"bubblewrap cannot run here ({_bwrap_problem()}); .ci/run installs it",
)
REPLY = REPLIES["openai"]


@pytest.fixture
def outside_dir():
    """A directory on the real filesystem outside the workspace and outside /tmp (which
    the sandbox replaces with a private one)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as path:
        yield Path(path)


def connect_command(fake_server) -> dict:
    """A bash call connecting to the fake server's listener on 127.0.0.1."""
    port = urlparse(fake_server.url).port
    script = (f"import socket; socket.create_connection(('127.0.0.1', {port}), 5); "
              "print('connected')")
    return {"command": f"{sys.executable} -c \"{script}\""}


def run_by_the_model(fake_server, tool: str, arguments: dict, *options: str) -> dict:
    """The model calls ``tool`` once; the envelope it got back."""
    fake_server.push(REPLY.reply(calls=[("c1", tool, arguments)]), REPLY.reply("Done."))
    result = invoke("ask", "--yes", *options, "--provider", "openai", "--no-stream", "go")
    assert result.exit_code == 0, result.stderr
    return sent_results("openai", fake_server.requests[-1].json)[0][1]


@needs_bwrap
@pytest.mark.parametrize("mode", ["off", "workspace-write"])
def test_workspace_write_keeps_writes_in_the_workspace_and_cuts_the_network(
    mode, fake_server, tmp_path, outside_dir, monkeypatch
):
    monkeypatch.setenv("IKIGAI_SANDBOX", mode)
    outside = outside_dir / "escaped.txt"
    inside = tmp_path / "inside.txt"
    wrote_out = run_by_the_model(fake_server, "file_write",
                                 {"file_path": str(outside), "content": "x"})
    wrote_in = run_by_the_model(fake_server, "file_write",
                                {"file_path": str(inside), "content": "y"})
    connected = run_by_the_model(fake_server, "bash", connect_command(fake_server))
    assert wrote_in["tool_success"] and inside.read_text() == "y"
    if mode == "off":
        assert wrote_out["tool_success"] and outside.read_text() == "x"
        assert connected["result"]["output"].strip() == "connected"
    else:
        assert not outside.exists()
        assert wrote_out["result"]["error_code"] == "PERMISSION_DENIED"  # EROFS, as file_write says
        assert "connected" not in connected["result"]["output"]
        assert connected["result"]["exit_code"] != 0


@needs_bwrap
def test_read_only_allows_no_write_and_network_is_a_switch(fake_server, tmp_path,
                                                          monkeypatch):
    monkeypatch.setenv("IKIGAI_SANDBOX", "read-only")
    wrote = run_by_the_model(fake_server, "file_write",
                             {"file_path": str(tmp_path / "a.txt"), "content": "x"})
    assert wrote["result"]["error_code"] == "PERMISSION_DENIED"
    assert not (tmp_path / "a.txt").exists()
    monkeypatch.setenv("IKIGAI_SANDBOX_NETWORK", "true")
    connected = run_by_the_model(fake_server, "bash", connect_command(fake_server))
    assert connected["result"]["output"].strip() == "connected"


@needs_bwrap
def test_workspace_write_keeps_ikigai_home_and_dot_ikigai_read_only(tmp_path, isolated_home,
                                                                    monkeypatch):
    monkeypatch.setenv("IKIGAI_SANDBOX", "workspace-write")
    monkeypatch.setenv("IKIGAI_HOME", str(tmp_path / "home"))
    (tmp_path / ".ikigai").mkdir()
    command = ("echo '{\"rules\": []}' > home/permissions.json; "
               "echo x > .ikigai/permissions.json; echo ok > fine.txt")
    result = invoke("tool", "run", "bash", json.dumps({"command": command}))
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "fine.txt").exists()
    assert not (tmp_path / "home" / "permissions.json").exists()
    assert not (tmp_path / ".ikigai" / "permissions.json").exists()


@pytest.mark.parametrize("args", [["tool", "list"], ["tool", "run", "bash", '{"command": "true"}']])
def test_a_sandbox_without_bwrap_refuses_to_run_any_tool(args, tmp_path):
    python = shutil.which("python3")
    env = {**os.environ, "IKIGAI_SANDBOX": "workspace-write", "PATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "ikigai_core.cli", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert python and proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "bwrap is not installed" in proc.stderr
    assert "Debian package bubblewrap" in proc.stderr and proc.stdout == ""


def test_a_misspelt_mode_is_one_line(monkeypatch):
    monkeypatch.setenv("IKIGAI_SANDBOX", "workspace")
    result = invoke("tool", "run", "bash", '{"command": "true"}')
    assert result.exit_code == 1
    assert result.stderr == ("ikigai: environment variable IKIGAI_SANDBOX: 'sandbox' must be "
                             "one of off, read-only, workspace-write, got 'workspace'; "
                             "fix or remove it\n")
