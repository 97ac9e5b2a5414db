"""Attaching files in chat and completing ``@path`` and ``/resume ID`` (issue 27): the real
``ikigai chat`` on a pseudo-terminal (``pyte`` plays it) against the fake server, and from a
pipe."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

from ikigai_core.sessions import DB_NAME
from ikigai_core.sqlite_store import SqliteStore
from tests.support.replies import REPLIES
from tests.test_chat_terminal import IKIGAI, chat, env  # noqa: F401 - the fixtures
from tests.test_prompt_images import PNG, PNG_URL

OPENAI = REPLIES["openai"]


def recorded_session_ids(home: Path, count: int, timeout: float = 10) -> list[str]:
    """The ids in ``sessions.db`` once it holds ``count`` sessions, or after ``timeout``
    seconds: a turn's reply is on the screen a moment before its session is recorded."""
    deadline = time.monotonic() + timeout
    while True:
        ids = [s.id for s in SqliteStore(home / DB_NAME).sessions()]
        if len(ids) >= count or time.monotonic() > deadline:
            return ids
        time.sleep(0.05)


def test_at_completes_a_path_and_attaches_the_file(chat, fake_server, tmp_path):  # noqa: F811
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "notes.md").write_text("the walrus is grey\n")
    fake_server.push(OPENAI.reply("Grey.", stream=True))
    chat.write(b"what colour? @sr\t")
    chat.wait_for("> what colour? @src/")
    chat.write(b"no\t")
    chat.wait_for("> what colour? @src/notes.md")
    chat.write(b"\r")
    chat.wait_for("attached: src/notes.md (text)")
    chat.wait_for("Grey.")
    sent = fake_server.requests[0].json["messages"][-1]["content"]
    assert sent == ('what colour? @src/notes.md\n\n<file path="src/notes.md">\n'
                    "the walrus is grey\n</file>")


def test_resume_completes_ids_with_their_first_prompts(chat, fake_server,  # noqa: F811
                                                      isolated_home):
    fake_server.push(OPENAI.reply("Noted.", stream=True), OPENAI.reply("Counted.", stream=True))
    chat.write(b"remember the walrus\r")
    chat.wait_for("Noted.")
    chat.write(b"/clear\r")
    chat.write(b"count the sheep\r")
    chat.wait_for("Counted.")
    ids = recorded_session_ids(isolated_home, 2)
    assert len(ids) == 2
    chat.write(b"/resume \t")
    for session, prompt in zip(ids, ("count the sheep", "remember the walrus"), strict=True):
        chat.wait_for(re.compile(rf"{session} +{prompt}").search)
    chat.write(b"\x03" + f"/resume {ids[1][:4]}\t".encode())
    chat.wait_for(f"> /resume {ids[1]}")


def test_a_piped_chat_sends_the_image_option_and_at_files(fake_server, tmp_path,
                                                          isolated_home):
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "a.txt").write_text("alpha")
    fake_server.push(OPENAI.reply("Seen."), OPENAI.reply("Also."))
    done = subprocess.run(
        [IKIGAI, "chat", "--provider", "openai", "--no-tools", "--image", "shot.png"],
        input="look\nand @a.txt\n@missing.txt\n", capture_output=True, text=True, timeout=60,
        cwd=tmp_path, env={**os.environ, "OPENAI_API_KEY": "sk-test",
                           "OPENAI_BASE_URL": fake_server.url})
    assert "attached: --image (image/png, 1 KiB)" in done.stdout
    first, second = (request.json["messages"] for request in fake_server.requests)
    assert first[-1]["content"][1] == {"type": "image_url", "image_url": {"url": PNG_URL}}
    assert second[-1]["content"] == 'and @a.txt\n\n<file path="a.txt">\nalpha\n</file>'
    assert f"ikigai: @missing.txt: no such file in {tmp_path}" in done.stderr
    assert done.returncode == 2 and "Traceback" not in done.stderr
