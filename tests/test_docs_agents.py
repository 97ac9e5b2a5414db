"""docs/agents.md's orchestrating tool is examples/review-tool, at most 20 lines of shell,
and it works as written: ``ikigai ask`` runs it as a real tool, it forks a sub-agent per
file over the agents API with curl and hands their answers back (issue 25)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agents import AgentModel

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "review-tool"
IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def test_the_docs_show_the_example_as_it_is_in_at_most_20_lines():
    doc = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```sh\n(#!/bin/sh\n# review-tool.*?)```", doc, re.S)
    assert block == EXAMPLE.read_text(encoding="utf-8")
    assert len(block.splitlines()) <= 20


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl, jq")
def test_the_bash_tool_forks_a_reviewer_per_file_and_returns_their_answers(isolated_home,
                                                                           tmp_path):
    (isolated_home / "tools").mkdir()
    shutil.copy(EXAMPLE, isolated_home / "tools" / "review-tool")
    model = AgentModel({"review a.py and b.py": [[("review", {"files": ["a.py", "b.py"]})],
                                                 "Both reviewed."],
                        "Review a.py for bugs.": ["a.py looks fine."],
                        "Review b.py for bugs.": ["b.py: off by one on line 3."]})
    try:
        env = {**os.environ, **model.environ, "IKIGAI_HOME": str(isolated_home)}
        done = subprocess.run([IKIGAI, "ask", "--yes", "review a.py and b.py"], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, "Both reviewed.\n"), done.stderr
        [answered] = [r.json for r in model.server.requests
                      if r.json["messages"][1]["content"] == "review a.py and b.py"
                      and len(r.json["messages"]) > 2]
        envelope = json.loads(answered["messages"][-1]["content"])
        assert envelope["tool_success"] is True
        assert sorted((r["status"], r["output"]) for r in envelope["result"]["reviews"]) == [
            ("done", "a.py looks fine."), ("done", "b.py: off by one on line 3.")]
        listed = subprocess.run([IKIGAI, "sessions", "list"], env=env, capture_output=True,
                                text=True, timeout=30).stdout
        assert "(with 2 sub-agents)  review a.py and b.py" in listed
    finally:
        model.close()
