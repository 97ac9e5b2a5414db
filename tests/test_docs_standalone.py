"""The docs stand alone: nothing points outside the repository, and the walkthrough for
overriding a built-in tool works as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IKIGAI = str(Path(sys.executable).with_name("ikigai"))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_doc_points_outside_the_repository(doc):
    text = doc.read_text(encoding="utf-8")
    for outside in ("../shared", "shared/spec", "STYLE.md"):
        assert outside not in text, f"{doc.name} refers to {outside}, which users do not have"
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"


def walkthrough_script() -> str:
    tools_md = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    section = tools_md.split("## Overriding a built-in tool", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "docs/tools.md: the walkthrough has no sh block"
    return textwrap.dedent(block.group(1))


def test_the_override_walkthrough_works_as_written(isolated_home, tmp_path):
    builtin = Path(sys.executable).with_name("bash-tool")
    script = walkthrough_script().replace("/home/you/ikigai/.venv/bin/bash-tool", str(builtin))
    assert str(builtin) in script
    override = isolated_home / "tools" / "bash-tool"
    override.parent.mkdir()
    override.write_text(script)
    override.chmod(0o755)

    def ikigai(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([IKIGAI, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "IKIGAI_HOME": str(isolated_home)})

    listed = ikigai("tool", "list", "--verbose")
    assert re.search(r"^bash +user ", listed.stdout, re.M), listed.stdout
    assert f"overridden by the user tool at {override}" in listed.stderr
    refused = json.loads(ikigai("tool", "run", "bash", '{"command": "sudo ls"}').stdout)
    assert refused["result"] == {"error": "sudo is not allowed here", "error_code": "FORBIDDEN"}
    ran = json.loads(ikigai("tool", "run", "bash", '{"command": "echo hi"}').stdout)
    assert ran["result"] == {"output": "hi", "exit_code": 0}
