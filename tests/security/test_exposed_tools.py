"""Tools are code: one in the user's or a trusted project's tool folder that another user
could have put there or changed (ssh's rule, as for the state files) is skipped with one
line, never asked for ``--schema``, never run."""

from __future__ import annotations

import json

import pytest

from ikigai_core.trust import TrustStore
from tests.faults.support import ikigai
from tests.security.test_exposed_files import EXPOSURES, fix
from tests.support.tools import schema_for


@pytest.fixture
def project(tmp_path, isolated_home):
    root = tmp_path / "proj"
    (root / ".ikigai").mkdir(parents=True)
    TrustStore(isolated_home).trust(root)
    return root


@pytest.mark.parametrize("exposed", ["folder", "tool"])
@pytest.mark.parametrize("exposure", EXPOSURES)
@pytest.mark.parametrize("layer", ["user", "project"])
def test_a_tool_others_could_write_is_never_run(layer, exposure, exposed, isolated_home,
                                                project, tmp_path, make_shell_tool):
    folder = (isolated_home if layer == "user" else project / ".ikigai") / "tools"
    marker = tmp_path / "RAN"
    tool = make_shell_tool(folder, "planted-tool", f"""\
        touch {marker}
        echo '{json.dumps(schema_for("planted"))}'
        """)
    path = folder if exposed == "folder" else tool
    EXPOSURES[exposure](path)
    proc = ikigai("tool", "list", "--verbose", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), "a tool someone else could have written was run"
    assert "planted " not in proc.stdout
    [line] = [line for line in proc.stderr.splitlines() if "planted" in line]
    assert fix(path, exposure) in line and "Traceback" not in proc.stderr


def test_a_tool_of_your_own_still_runs(isolated_home, project, tmp_path, make_shell_tool):
    marker = tmp_path / "RAN"
    make_shell_tool(isolated_home / "tools", "mine-tool", f"""\
        touch {marker}
        echo '{json.dumps(schema_for("mine"))}'
        """)
    proc = ikigai("tool", "list", cwd=project)
    assert "mine " in proc.stdout and marker.exists(), proc.stderr


def test_the_scanner_says_which_tool_it_refused(tmp_path, make_shell_tool):
    from ikigai_core.defaults.scanner import PrivateSource

    make_shell_tool(tmp_path / "tools", "mine-tool", "echo '{}'\n")
    theirs = make_shell_tool(tmp_path / "tools", "theirs-tool", "echo '{}'\n", mode=0o777)
    scan = PrivateSource(tmp_path / "tools", name="user", precedence=10).scan()
    assert [c.name for c in scan.candidates] == ["mine"]
    [skipped] = scan.skipped
    assert (skipped.name, skipped.path) == ("theirs", theirs)
    assert skipped.reason.endswith(f"`chmod go-w {theirs}`")


@pytest.mark.parametrize("exposed", ["folder", "tool"])
@pytest.mark.parametrize("exposure", EXPOSURES)
def test_a_skill_whose_tools_others_could_write_is_skipped(exposure, exposed, isolated_home,
                                                           tmp_path, make_shell_tool):
    skill = isolated_home / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo\ntools: [planted]\n---\n")
    marker = tmp_path / "RAN"
    tool = make_shell_tool(skill / "tools", "planted-tool", f"""\
        touch {marker}
        echo '{json.dumps(schema_for("planted"))}'
        """)
    path = skill / "tools" if exposed == "folder" else tool
    EXPOSURES[exposure](path)
    assert ikigai("tool", "list", cwd=tmp_path).returncode == 0
    assert not marker.exists(), "a skill's tool someone else could have written was run"
    proc = ikigai("skill", "list", cwd=tmp_path)
    [line] = [line for line in proc.stderr.splitlines() if "demo" in line]
    assert fix(path, exposure) in line and "demo " not in proc.stdout


def test_read_skill_says_which_tool_it_refused(tmp_path, make_shell_tool):
    from ikigai_core.skills import SkippedSkill, read_skill

    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: A demo\n---\n")
    theirs = make_shell_tool(tmp_path / "demo" / "tools", "x-tool", "echo '{}'\n", mode=0o777)
    skipped = read_skill(tmp_path / "demo" / "SKILL.md", "user")
    assert isinstance(skipped, SkippedSkill)
    assert skipped.reason.endswith(f"`chmod go-w {theirs}`")
    assert not isinstance(read_skill(tmp_path / "demo" / "SKILL.md", "acme"), SkippedSkill)
