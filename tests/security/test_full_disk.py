"""Issue 21 item 12: on a full disk every command that changes a file of ikigai's says so in
one line (``cannot write PATH: No space left on device``), exits 1, and leaves the old file
as it was; the session log says the disk is full instead of blaming the file."""

from __future__ import annotations

import os
import time

import pytest

from ikigai_core.trust import TrustStore
from tests.faults.support import assert_one_line_error, ikigai
from tests.faults.test_security import llm
from tests.security.conftest import REPLY
from tests.support import mounts

CHANGES = {
    "permissions allow": (("permissions", "allow", "bash"), "permissions.json"),
    "trust": (("trust", "{new}"), "trust.json"),
    "untrust": (("untrust", "{old}"), "trust.json"),
    "mcp add": (("mcp", "add", "srv", "--", "srv-server"), "mcp.json"),
}


@pytest.fixture
def full_home(tiny_home, tmp_path):
    """A home on a full disk holding every file a command changes: ``(home, its files)``."""
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    TrustStore(tiny_home).trust(tmp_path / "old")
    (tiny_home / "permissions.json").write_text('{"rules": []}')
    (tiny_home / "mcp.json").write_text('{"mcpServers": {}}')
    for name in ("permissions.json", "mcp.json"):
        (tiny_home / name).chmod(0o600)
    before = {path.name: path.read_bytes() for path in tiny_home.iterdir()}
    mounts.fill(tiny_home.parent)
    return tiny_home, before


@pytest.mark.parametrize("change", CHANGES)
def test_a_change_on_a_full_disk_is_one_line_and_keeps_the_old_file(change, full_home,
                                                                     tmp_path):
    home, before = full_home
    args, name = CHANGES[change]
    args = tuple(a.format(new=tmp_path / "new", old=tmp_path / "old") for a in args)
    proc = ikigai(*args, cwd=tmp_path)
    assert_one_line_error(proc, 1, f"cannot write {home / name}: No space left on device")
    assert (home / name).read_bytes() == before[name]
    assert not [n for n in os.listdir(home) if n.endswith(".tmp")], "a temp file was left"


def test_the_session_log_on_a_full_disk_says_the_disk_is_full(full_home, tmp_path,
                                                              fake_server):
    home, _ = full_home
    fake_server.push(REPLY.reply("Hello."))
    started = time.monotonic()
    proc = ikigai("ask", "--provider", "openai", "--no-stream", "hi", cwd=tmp_path,
                  env=llm(fake_server))
    assert (proc.returncode, proc.stdout) == (0, "Hello.\n"), proc.stderr
    assert time.monotonic() - started < 15  # no wait for a lock: it was 30 s, the busy timeout
    [line] = [line for line in proc.stderr.splitlines() if "sessions.db" in line]
    assert line == (f"ikigai: session log {home / 'sessions.db'}: the disk is full; free some "
                    "space, or pass --no-log; this conversation is not recorded")
