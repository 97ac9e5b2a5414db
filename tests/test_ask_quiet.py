"""``ikigai ask -q``: only the answer on stdout, only errors on stderr (issue 27), through the
real program against the local fake server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakeserver import json_reply
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


@pytest.fixture
def env(fake_server):
    """A key and the fake server for openai; no other provider's key."""
    environ = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    environ.update(OPENAI_API_KEY="sk-test-0123456789", OPENAI_BASE_URL=fake_server.url)
    return environ


def ask(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ikigai ask --provider openai --no-stream ARGS`` as a real program."""
    return subprocess.run([IKIGAI, "ask", "--provider", "openai", "--no-stream", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_quiet_keeps_the_answer_and_nothing_else(env, fake_server, tmp_path):
    (tmp_path / "AGENTS.md").write_text("untrusted: ask says it is not sent\n")
    (tmp_path / "notes.txt").write_text("42\n")
    replies = REPLIES["openai"]
    call = ("c1", "file_read", {"file_path": "notes.txt", "offset": None, "limit": None})
    for _ in range(3):
        fake_server.push(replies.reply("Reading.", [call], stream=False),
                         replies.reply("It says 42.", stream=False))
    loud = ask("what is in notes.txt?", env=env, cwd=tmp_path)
    assert "→ file_read" in loud.stderr and "AGENTS.md" in loud.stderr
    for flag in ("-q", "--quiet"):
        quiet = ask(flag, "what is in notes.txt?", env=env, cwd=tmp_path)
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (
            0, "Reading.\nIt says 42.\n", ""), flag


def test_quiet_still_reports_an_error_on_stderr(env, fake_server, tmp_path):
    fake_server.push(json_reply({"error": {"message": "bad key"}}, status=401))
    done = ask("-q", "hi", env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("ikigai: Provider 'openai' rejected the API key (HTTP 401)")
    assert done.stderr.count("\n") == 1
