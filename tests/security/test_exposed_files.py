"""Issue 21 item 6 (ssh's rule): a state file, its folder or ``$IKIGAI_HOME`` that another
user could write, or that another user owns, is refused with one line naming it and the
command that fixes it; what it would have allowed does not happen (fail closed)."""

from __future__ import annotations

import json
import os

import pytest

from ikigai_core.statefiles import _own_group
from ikigai_core.trust import TrustStore
from tests.faults.support import assert_one_line_error, ikigai
from tests.security.conftest import touch
from tests.test_cli_agent import sent_results

SHARED_GID = 65534
"""nogroup: the primary group of nobody (and others), so never the user's own group."""


def group_writable(path, gid: int = SHARED_GID) -> None:
    os.chown(path, -1, gid)
    path.chmod(path.stat().st_mode | 0o020)


EXPOSURES = {
    "group-writable": group_writable,
    "world-writable": lambda path: path.chmod(path.stat().st_mode | 0o002),
    "another user's": lambda path: os.chown(path, 65534, -1),
}


def fix(path, exposure: str) -> str:
    """What the refusal says about ``path``."""
    if exposure == "another user's":
        return f"{path} belongs to another user (uid 65534); ikigai refuses it"
    return f"ikigai refuses it: `chmod go-w {path}`"


@pytest.fixture
def project(tmp_path, isolated_home):
    """A trusted project with an empty ``.ikigai/``."""
    root = tmp_path / "proj"
    (root / ".ikigai").mkdir(parents=True)
    TrustStore(isolated_home).trust(root)
    return root


def state_file(isolated_home, project, name: str):
    """The file (or folder) called ``name``, created with harmless content."""
    path = {"IKIGAI_HOME": isolated_home, "project .ikigai": project / ".ikigai"}.get(name)
    if path is None:
        path = (project / ".ikigai" if name.startswith("project ") else isolated_home) / \
            name.removeprefix("project ")
    if not path.exists():
        path.write_text({"permissions.json": '{"rules": []}', "config.json": "{}",
                         "mcp.json": '{"mcpServers": {}}'}[path.name])
    return path


@pytest.mark.parametrize("exposure", EXPOSURES)
@pytest.mark.parametrize("name", ["IKIGAI_HOME", "config.json", "trust.json",
                                  "permissions.json"])
def test_exposed_home_file_stops_the_command(name, exposure, isolated_home, project):
    path = state_file(isolated_home, project, name)
    EXPOSURES[exposure](path)
    command = ("permissions", "list") if name == "permissions.json" else ("tool", "list")
    assert_one_line_error(ikigai(*command, cwd=project), 1, fix(path, exposure))


@pytest.mark.parametrize("exposure", EXPOSURES)
@pytest.mark.parametrize("name", ["permissions.json", "project permissions.json",
                                  "project .ikigai"])
def test_exposed_rules_deny_every_call_even_with_yes(name, exposure, isolated_home, project,
                                                     fake_server, model_calls, tmp_path):
    path = state_file(isolated_home, project, name)
    if name == "project .ikigai":
        state_file(isolated_home, project, "project permissions.json")
    EXPOSURES[exposure](path)
    marker = tmp_path / "RAN"
    proc = model_calls(touch(marker), args=("--yes",), cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), "a call ran under rules someone else could have written"
    [(_, envelope)] = sent_results("openai", fake_server.requests[1].json)
    assert envelope["error_code"] == "TOOL_DENIED"
    assert fix(path, exposure) in envelope["error"] and fix(path, exposure) in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("exposure", EXPOSURES)
@pytest.mark.parametrize("name", ["mcp.json", "project mcp.json"])
def test_exposed_mcp_file_starts_no_server(name, exposure, isolated_home, project, tmp_path):
    path = state_file(isolated_home, project, name)
    marker = tmp_path / "STARTED"
    path.write_text(json.dumps({"mcpServers": {"srv": {
        "command": "/bin/sh", "args": ["-c", f"touch {marker}"]}}}))
    EXPOSURES[exposure](path)
    proc = ikigai("tool", "list", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert fix(path, exposure) in proc.stderr
    assert not marker.exists(), "a server from a file someone else could write was started"


def test_a_group_of_your_own_may_write(isolated_home, project):
    """Debian's ssh: with umask 002 every file is group-writable by the user's private group,
    of which the user is the one member; that is not someone else."""
    if not _own_group(os.getegid()):
        pytest.skip("your primary group has other members here")
    path = state_file(isolated_home, project, "config.json")
    group_writable(path, os.getegid())
    group_writable(isolated_home, os.getegid())
    proc = ikigai("tool", "list", cwd=project)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_an_installed_plugins_skill_may_belong_to_an_administrator(tmp_path):
    """A shared install is another user's: ssh's rule covers the user's and the project's
    skills only."""
    from ikigai_core.skills import SkippedSkill, read_skill

    path = tmp_path / "demo.md"
    path.write_text("---\nname: demo\ndescription: A demo skill\n---\n")
    os.chown(path, 65534, -1)
    assert not isinstance(read_skill(path, "acme"), SkippedSkill)
    assert "belongs to another user" in read_skill(path, "user").reason
