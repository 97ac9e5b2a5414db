"""The ``load_skill`` tool is a built-in tool like the others: standard library only (issue 22)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ikigai_core.skills import LoadSkillSource, SkillDirectory
from tests.tools.test_jsonio import _imported, _importing

PUBLIC = Path(__file__).parent.parent / "skills"


def test_the_tool_process_imports_neither_the_core_nor_pluggy_nor_yaml(tmp_path):
    shutil.copytree(PUBLIC / "internal-comms", tmp_path / "internal-comms")
    skills = SkillDirectory(tmp_path, name="user", precedence=10).scan().skills
    [candidate] = LoadSkillSource({skill.name: skill for skill in skills}).scan().candidates
    _python, *argv = candidate.command  # the command ikigai runs the tool with
    ran = _importing(argv, tmp_path, b'{"name": "internal-comms"}')
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"skill": "internal-comms",
                                      "directory": str(tmp_path / "internal-comms"),
                                      "output": skills[0].body}
    packages = {name.split(".")[0] for name in _imported(ran)}
    assert packages & {"ikigai_core", "pluggy", "yaml", "click"} == set()
