"""Issue 21 item 5: a call whose decision cannot be recorded in ``approvals.jsonl`` is denied
(TOOL_DENIED naming the file and the OS error) and never starts."""

from __future__ import annotations

import subprocess

import pytest

from tests.security.conftest import touch
from tests.support import mounts
from tests.test_cli_agent import sent_results


def as_directory(home):
    (home / "approvals.jsonl").mkdir()
    return "Is a directory"


def on_a_full_disk(home):
    mounts.fill(home)
    return "No space left on device"


def read_only(home):
    (home / "approvals.jsonl").touch(mode=0o600)
    subprocess.run(["mount", "-o", "remount,ro", str(home.parent)], check=True)
    return "Read-only file system"


@pytest.mark.parametrize("damage", [as_directory, on_a_full_disk, read_only])
def test_a_decision_that_cannot_be_recorded_denies_the_call(damage, tiny_home, tmp_path,
                                                            fake_server, model_calls):
    (tiny_home / "permissions.json").write_text(
        '{"rules": [{"id": 1, "tool": "bash", "decision": "allow"}]}')
    error = damage(tiny_home)
    marker = tmp_path / "RAN"
    proc = model_calls(touch(marker))
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), "the call ran without its decision recorded"
    [(_, envelope)] = sent_results("openai", fake_server.requests[1].json)
    audit = tiny_home / "approvals.jsonl"
    assert envelope["error_code"] == "TOOL_DENIED"
    assert envelope["error"] == (f"Tool 'bash' was denied: its decision cannot be recorded "
                                 f"in {audit}: {error}")
    assert "Traceback" not in proc.stderr
    assert f"bash was not run: its decision cannot be recorded in {audit}: {error}" in proc.stderr
