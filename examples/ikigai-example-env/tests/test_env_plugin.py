"""The env example, installed, through the real ``ikigai``: scrubbed tool environments and
the system prompt that says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

IKIGAI = Path(sys.executable).parent / "ikigai"
PROBE = '{"command": "echo ${ACME_API_KEY:-gone} ${ACME_TOKEN:-gone} ${ACME_USER:-gone}"}'


def ikigai(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "IKIGAI_ENV_SCRUB"}
    return subprocess.run([str(IKIGAI), *args], capture_output=True, text=True, timeout=60,
                          cwd=home, env={**base, "IKIGAI_HOME": str(home), "ACME_API_KEY": "k",
                                         "ACME_TOKEN": "t", "ACME_USER": "u", **env})


def test_scrubbed_variables_never_reach_a_tool(tmp_path):
    ran = ikigai("tool", "run", "bash", PROBE, home=tmp_path, IKIGAI_ENV_SCRUB="_API_KEY,_TOKEN")
    assert json.loads(ran.stdout)["result"]["output"].split() == ["gone", "gone", "u"]
    untouched = ikigai("tool", "run", "bash", PROBE, home=tmp_path)
    assert json.loads(untouched.stdout)["result"]["output"].split() == ["k", "t", "u"]


def test_the_model_is_told(tmp_path):
    ran = ikigai("request", "--provider", "anthropic", "hi", home=tmp_path,
                 IKIGAI_ENV_SCRUB="_API_KEY")
    assert ran.returncode == 0, ran.stderr
    # Anthropic's system prompt is a list of text blocks (the last marked for the cache)
    system = "".join(block["text"] for block in json.loads(ran.stdout)["system"])
    assert f"Tools run in {tmp_path}." in system and "ending with _API_KEY" in system
    quiet = ikigai("request", "--provider", "anthropic", "hi", home=tmp_path)
    assert "ending with" not in json.dumps(json.loads(quiet.stdout).get("system"))
