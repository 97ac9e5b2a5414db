"""The audit example, installed, through the real ``ikigai``: the log, the deny list, the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

IKIGAI = Path(sys.executable).parent / "ikigai"


def ikigai(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(IKIGAI), *args], capture_output=True, text=True, timeout=60,
                          cwd=home, env={**os.environ, "IKIGAI_HOME": str(home), **env})


def test_every_call_is_one_json_line_and_ikigai_audit_shows_them(tmp_path):
    log = tmp_path / "audit.jsonl"
    ran = ikigai("tool", "run", "bash", '{"command": "echo hi"}', home=tmp_path,
                 IKIGAI_AUDIT_LOG=str(log))
    assert ran.returncode == 0, ran.stderr
    failed = ikigai("tool", "run", "bash", '{"nope": 1}', home=tmp_path, IKIGAI_AUDIT_LOG=str(log))
    assert failed.returncode == 1
    first, second = [json.loads(line) for line in log.read_text().splitlines()]
    assert (first["tool"], first["source"], first["ok"], first["arguments"]) == (
        "bash", "system", True, {"command": "echo hi"})
    assert (second["ok"], second["error_code"]) == (False, "INVALID_PARAMS")
    shown = ikigai("audit", "-n", "1", home=tmp_path, IKIGAI_AUDIT_LOG=str(log))
    assert shown.returncode == 0 and shown.stdout.split()[1:3] == ["bash", "INVALID_PARAMS"]
    as_json = ikigai("audit", "--json", home=tmp_path, IKIGAI_AUDIT_LOG=str(log))
    assert [entry["ok"] for entry in json.loads(as_json.stdout)] == [True, False]


def test_a_denied_tool_never_starts(tmp_path):
    marker = tmp_path / "ran"
    ran = ikigai("tool", "run", "bash", json.dumps({"command": f"touch {marker}"}),
                 home=tmp_path, IKIGAI_AUDIT_DENY="file_write, bash")
    envelope = json.loads(ran.stdout)
    assert ran.returncode == 1 and envelope["error_code"] == "TOOL_DENIED"
    assert "deny list (IKIGAI_AUDIT_DENY)" in envelope["error"]
    assert not marker.exists()


def test_the_command_without_a_log_is_a_one_line_usage_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "IKIGAI_AUDIT_LOG"}
    ran = subprocess.run([str(IKIGAI), "audit"], capture_output=True, text=True, timeout=60,
                         env={**env, "IKIGAI_HOME": str(tmp_path)})
    assert ran.returncode == 2
    assert "no audit log: set IKIGAI_AUDIT_LOG" in ran.stderr and "Traceback" not in ran.stderr


def test_installed_it_changes_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_AUDIT")}
    ran = subprocess.run([str(IKIGAI), "tool", "run", "bash", '{"command": "echo hi"}'],
                         capture_output=True, text=True, timeout=60,
                         env={**env, "IKIGAI_HOME": str(tmp_path)}, cwd=tmp_path)
    assert ran.returncode == 0 and list(tmp_path.glob("*.jsonl")) == []
