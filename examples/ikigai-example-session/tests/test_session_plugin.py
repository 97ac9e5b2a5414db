"""The long-lived tool example, installed, through the real ``ikigai ask``: state kept
across calls, the executor's timeout still holds, and no process outlives ikigai."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.replies import REPLIES

IKIGAI = Path(sys.executable).parent / "ikigai"
OPENAI = REPLIES["openai"]


def ask(fake_server, home: Path, *codes: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``ikigai ask`` against the fake server: one python_session call per turn, then text."""
    fake_server.push(*[OPENAI.reply(calls=[(f"c{i}", "python_session", {"code": code})])
                       for i, code in enumerate(codes)], OPENAI.reply("done"))
    full = {**os.environ, "IKIGAI_HOME": str(home), "OPENAI_BASE_URL": fake_server.url,
            "OPENAI_API_KEY": "k", "IKIGAI_PROVIDER": "openai", **env}
    return subprocess.run([str(IKIGAI), "ask", "--yes", "--no-stream", "go"], capture_output=True,
                          text=True, timeout=60, env=full, cwd=home)


def results(fake_server) -> list[dict]:
    """The envelope of each call, as the model received them."""
    last = fake_server.requests[-1].json["messages"]
    return [json.loads(m["content"]) for m in last if m["role"] == "tool"]


def sessions_of(home: Path) -> list[int]:
    """Session processes started by an ikigai with this home."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"ikigai_example_session.server" in cmdline and f"IKIGAI_HOME={home}\0".encode() in environ:
            found.append(int(entry.name))
    return found


def test_a_variable_set_in_one_call_is_there_in_the_next_and_after_an_error(fake_server,
                                                                           tmp_path):
    """An error is the call's result, not a crash: the session, and ``x``, live on."""
    ran = ask(fake_server, tmp_path, "x = 6 * 7", "print(x)", "print('before'); 1 / 0",
              "print(x)")
    assert (ran.returncode, ran.stdout) == (0, "done\n"), ran.stderr
    first, second, error, after = results(fake_server)
    assert first["result"] == {"output": ""} and second["result"] == {"output": "42\n"}
    assert error["result"] == {"output": "before\n",
                               "error": "ZeroDivisionError: division by zero"}
    assert after["result"] == {"output": "42\n"}


def test_a_timeout_kills_the_session_and_the_next_call_starts_fresh(fake_server, tmp_path):
    started = time.monotonic()
    ran = ask(fake_server, tmp_path, "y = 1", "while True: pass", "print('y' in globals())",
              IKIGAI_TOOL_TIMEOUT="1")
    assert ran.returncode == 0, ran.stderr
    assert time.monotonic() - started < 30
    _, stuck, fresh = results(fake_server)
    assert stuck["error_code"] == "TOOL_TIMEOUT"
    assert fresh["result"] == {"output": "False\n"}
    deadline = time.monotonic() + 10
    while sessions_of(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sessions_of(tmp_path) == []
