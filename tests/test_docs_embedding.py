"""docs/embedding.md's example is examples/embed.py, and it runs as written: a real
process, the openai provider against the local fake server, a real bash tool."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.replies import REPLIES

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "embed.py"


def test_the_docs_show_the_example_as_it_is():
    doc = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert block == EXAMPLE.read_text(encoding="utf-8")


def test_the_example_runs_a_tool_it_approves_and_resumes(fake_server, tmp_path):
    openai = REPLIES["openai"]
    fake_server.push(openai.reply("", [("c1", "bash", {"command": "ls *.py | wc -l"})]),
                     openai.reply("2 files."),
                     openai.reply("I ran ls *.py | wc -l."))
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("")
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url}
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == ('tool: bash {\'command\': \'ls *.py | wc -l\'}\n'
                           "done: bash ok\n"
                           "answer: 2 files.\n"
                           "tokens: 30\n"
                           "answer: I ran ls *.py | wc -l.\n")
    tool_message = fake_server.requests[1].json["messages"][-1]
    assert json.loads(tool_message["content"])["result"]["output"] == "2"
