"""docs/tools.md, "Your first tool", run as written: every block in order, files written
where the text names them, shell blocks run by bash; the tools tested with pytest-ikigai,
then published with pip and listed from their entry point."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTION = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8").split(
    "\n## Your first tool\n", 1)[1]
BLOCKS = re.findall(r"(?:File `([^`]+)`:\n\n)?```(\w+)\n(.*?)```", SECTION, re.S)
"""``(file or "", language, text)`` for every block of the walkthrough, in order."""
PIP_INSTALL = "python -m pip install ./acme-tools"


def test_the_two_tools_are_at_most_15_lines():
    files = {name: text for name, _, text in BLOCKS if name}
    assert len(files["my-tools/weekday-tool"].splitlines()) <= 15
    assert len(files["my-tools/slugify-tool"].splitlines()) <= 15


def test_the_walkthrough_runs_as_written(tmp_path, isolated_home):
    for program in ("jq", "date"):
        if shutil.which(program) is None:
            pytest.skip(f"the walkthrough's bash tool needs {program}")
    work, site = tmp_path / "work", tmp_path / "site"
    work.mkdir()
    env = {**os.environ, "IKIGAI_HOME": str(isolated_home), "PYTHONPATH": str(site),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    shown = []
    for name, language, text in BLOCKS:
        if name:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
            continue
        assert language == "sh", f"a {language} block that names no file"
        # pip installs into a directory of its own, not into the environment the suite
        # runs in: another distribution with tools there would change every other test.
        assert PIP_INSTALL in text or "pip" not in text
        script = text.replace(PIP_INSTALL, f"python -m pip install -q --no-deps --target "
                                           f"{site} ./acme-tools")
        ran = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                             capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        shown.append(ran.stdout)
    tested, published = shown
    assert "3 passed" in tested
    assert re.search(r"^slugify +acme ", published, re.M), published
    assert re.search(r"^weekday +acme ", published, re.M), published
    assert '"weekday": "Friday"' in published
