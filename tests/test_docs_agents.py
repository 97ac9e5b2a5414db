"""docs/agents.md's orchestrating tool is examples/review-tool, at most 20 lines of bash,
and it works as written: ``ikigai ask`` runs it as a real tool, it forks a sub-agent per
file over the agents API with curl and hands their answers back; a fork refused, or no
API, fails it with one line (issue 25)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_core import App, Session
from ikigai_core.orchestration import serving
from tests.support.agents import AgentModel

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "review-tool"
IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def test_the_docs_show_the_example_as_it_is_in_at_most_20_lines():
    doc = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```bash\n(#!/bin/bash\n# review-tool.*?)```", doc, re.S)
    assert block == EXAMPLE.read_text(encoding="utf-8")
    assert len(block.splitlines()) <= 20


needs_curl_jq = pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")),
                                   reason="needs curl, jq")


@needs_curl_jq
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


@needs_curl_jq
def test_a_refused_fork_or_no_api_fails_the_tool_with_one_line(isolated_home, tmp_path,
                                                                 approve_all):
    (isolated_home / "tools").mkdir()
    shutil.copy(EXAMPLE, isolated_home / "tools" / "review-tool")
    environ = {**os.environ, "IKIGAI_HOME": str(isolated_home)}
    ran = subprocess.run([IKIGAI, "tool", "run", "review", '{"files": ["a.py"]}'],
                         env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    envelope = json.loads(ran.stdout)
    assert (ran.returncode, envelope["error_code"]) == (1, "TOOL_CRASHED")
    assert envelope["stderr"] == "review: no agents API; run it from ikigai\n"

    model = AgentModel({"kid": [[("review", {"files": ["a.py", "b.py"]})], "refused"]})
    try:
        app = App(environ={**environ, **model.environ, "IKIGAI_AGENTS_MAX_DEPTH": "1"},
                  cwd=tmp_path)
        with serving(Session.open(app, "openai", log=False)) as sup:
            kid = sup.fork("kid")  # at depth 1, the limit: the fork its tool asks for fails
            assert sup.wait([kid], 30)[0].output == "refused"
        [result] = [m for m in model.server.requests[-1].json["messages"] if m["role"] == "tool"]
    finally:
        model.close()
    envelope = json.loads(result["content"])
    assert (envelope["tool_success"], envelope["error_code"]) == (False, "TOOL_CRASHED")
    assert envelope["stderr"] == (
        f"review: fork: agent '{kid}' is at depth 1, the deepest allowed (agents_max_depth "
        "is 1); do the work yourself\n")
    assert model.first_prompts() == ["kid", "kid"]  # no reviewer started
