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

from ikigai_core.config import Settings
from ikigai_core.defaults.sandbox import (
    SandboxUnavailable,
    bwrap_args,
    read_only,
    sandbox_mode,
    usable_bwrap,
)
from ikigai_core.errors import ConfigError, IkigaiError
from tests.support.replies import REPLIES
from tests.test_cli_agent import IKIGAI, invoke, keys, offline, sent_results  # noqa: F401
from tests.test_project import ikigai

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


@pytest.mark.cold_home  # a first run: `tool list` asks each tool for its schema in the sandbox
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


PLANT = ("mkdir .ikigai; echo '{}' > .ikigai/mcp.json; git init -q; mkdir -p .git/hooks; "
         "echo 'touch pwned' > .git/hooks/pre-commit; echo ok > fine.txt")
"""What a tool under workspace-write tries: a project layer and a git hook of its own."""


def run_sandboxed(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ikigai tool run bash`` as a real subprocess under ``workspace-write``."""
    env = {**os.environ, "IKIGAI_SANDBOX": "workspace-write"}
    return subprocess.run([IKIGAI, "tool", "run", "bash", json.dumps({"command": command})],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def sandboxed_bash(command: str, cwd: Path) -> dict:
    """The envelope of :func:`run_sandboxed`, which must succeed."""
    run = run_sandboxed(command, cwd)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@needs_bwrap
def test_workspace_write_keeps_missing_dot_ikigai_and_dot_git_read_only(tmp_path, isolated_home):
    """Issue 21 item 3: in a subfolder of a repository with no ``.ikigai`` nor ``.git`` of
    its own, a tool can neither make itself a project layer nor a repository with a hook;
    git still finds the outer repository, and a second run over the placeholders works."""
    repo = tmp_path / "repo"
    workspace = repo / "sub"
    workspace.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    first = sandboxed_bash(PLANT, workspace)
    again = sandboxed_bash("echo again >> fine.txt; rm -rf .ikigai .git; cat fine.txt", workspace)
    assert first["tool_success"] and again["result"]["output"].endswith("ok\nagain")
    assert not (workspace / ".ikigai").is_dir()
    assert list((workspace / ".git").iterdir()) == []
    toplevel = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=workspace,
                              capture_output=True, text=True, timeout=30, check=True)
    assert toplevel.stdout.strip() == str(repo)
    listed = ikigai("tool", "list", "--verbose", cwd=workspace)
    assert listed.stdout.startswith("Project: none")


@needs_bwrap
def test_the_dot_ikigai_of_trusted_directories_stays_read_only_whether_or_not_it_exists(
    tmp_path, isolated_home
):
    """A trusted directory inside the workspace (its ``.ikigai`` would be obeyed at once)
    and the project root above it: a tool can plant a layer in neither."""
    root = tmp_path / "root"
    (root / ".ikigai").mkdir(parents=True)
    workspace = root / "work"
    (workspace / "trusted").mkdir(parents=True)
    assert ikigai("trust", str(workspace / "trusted"), cwd=workspace).returncode == 0
    sandboxed_bash("mkdir -p trusted/.ikigai/tools ../.ikigai/tools; "
                   "echo '{}' > ../.ikigai/mcp.json", workspace)
    assert not (workspace / "trusted" / ".ikigai").is_dir()
    assert list((root / ".ikigai").iterdir()) == []
    (root / ".ikigai").rmdir()
    (root / "AGENTS.md").write_text("A project without .ikigai/.\n")
    sandboxed_bash("mkdir -p ../.ikigai/tools", workspace)
    assert not (root / ".ikigai").exists()


def test_settings_built_by_hand_are_checked_where_the_sandbox_runs():
    """config.json and the environment are checked as they load; a library caller's own
    Settings are checked by the plugin itself, so a misspelt mode never means off."""
    with pytest.raises(ConfigError, match="sandbox must be one of off, read-only"):
        sandbox_mode(Settings(sandbox="workspace"))


def test_a_link_inside_the_workspace_is_refused_and_one_outside_is_not(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / ".ikigai").symlink_to(tmp_path)
    with pytest.raises(SandboxUnavailable, match="is a symbolic link"):
        read_only(tmp_path / "work" / ".ikigai", tmp_path / "work", directory=False)
    outside = tmp_path / "outside"
    outside.symlink_to(tmp_path)
    assert read_only(outside, tmp_path / "work", directory=True) == [
        "--ro-bind", str(outside), str(outside)]


def test_a_missing_path_outside_the_workspace_needs_no_placeholder(tmp_path):
    """Read-only already, and nothing in the sandbox can create it: no mount, so bubblewrap
    makes nothing on the real filesystem; inside the workspace, a placeholder of each kind."""
    home, workdir = tmp_path / "no-home", tmp_path / "work"
    workdir.mkdir()
    args = bwrap_args("workspace-write", workdir, home, network=False)
    assert str(home) not in args
    assert args[args.index(str(workdir / ".git")) - 1:][:3] == [
        "--tmpfs", str(workdir / ".git"), "--remount-ro"]
    assert args[args.index(str(workdir / ".ikigai")) - 2:][:3] == [
        "--ro-bind", "/dev/null", str(workdir / ".ikigai")]


@needs_bwrap
def test_a_protected_path_that_is_a_symbolic_link_is_refused(outside_dir, isolated_home):
    """A mount lands on the link's target and the link itself could be replaced by a
    directory of the tool's: no tool runs, one line says why. (Outside ``/tmp``, which the
    sandbox hides: there the mount would fail anyway.)"""
    (outside_dir / "elsewhere").mkdir()
    (outside_dir / "work").mkdir()
    (outside_dir / "work" / ".git").symlink_to("../elsewhere")
    run = run_sandboxed("rm .git; mkdir .git", outside_dir / "work")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr == (f"ikigai: {outside_dir / 'work' / '.git'} is a symbolic link, which "
                          "the sandbox cannot keep read-only (a tool could replace it): no "
                          "tool will run. Replace the link with what it points to, or set "
                          "IKIGAI_SANDBOX=off\n")
    assert (outside_dir / "work" / ".git").is_symlink()


@needs_bwrap
def test_a_workspace_inside_ikigai_home_is_read_only_and_tools_still_run(isolated_home):
    """No placeholder there: the home's own read-only mount covers the workspace, and a
    mount point could not be made in it."""
    (isolated_home / "tools").mkdir()
    run = sandboxed_bash("echo hi; touch x", isolated_home / "tools")
    assert run["result"]["output"].startswith("hi\n")
    assert sorted(p.name for p in (isolated_home / "tools").iterdir()) == []


@needs_bwrap
def test_a_workspace_ikigai_may_not_write_gets_no_placeholder(tmp_path, isolated_home,
                                                              unprivileged):
    """A directory ikigai may not write (without root's override): no tool could create a
    ``.git`` there either, and bubblewrap could not make the mount point."""
    workspace = tmp_path / "shared"
    workspace.mkdir(mode=0o555)
    env = {**os.environ, "IKIGAI_SANDBOX": "workspace-write"}
    run = subprocess.run([*unprivileged, IKIGAI, "tool", "run", "bash",
                          '{"command": "echo hi; git init -q"}'], cwd=workspace, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"]["output"].startswith("hi\n")
    assert list(workspace.iterdir()) == []
