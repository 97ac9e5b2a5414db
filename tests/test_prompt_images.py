"""Images and files a user attaches to a prompt (issue 27, "Input"): read as hostile files,
sent natively in each provider's wire form (asserted on the bodies the local fake server
received), refused in one line where they cannot go, recorded so a resumed conversation
sends them again."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_core import App, Session
from ikigai_core.attachments import Attachment
from ikigai_core.errors import UsageError
from ikigai_core.inputs import MAX_IMAGE_BYTES, MAX_TEXT_BYTES, read_image, with_mentions
from tests.support.replies import REPLIES
from tests.support.responses_replies import RESPONSES

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(40))
GIF = b"GIF89a" + b"\x01" * 30
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
IKIGAI = str(Path(sys.executable).with_name("ikigai"))


@pytest.fixture
def shot(tmp_path):
    (tmp_path / "shot.png").write_bytes(PNG)
    return Attachment("image/png", PNG)


def _session(fake_server, tmp_path, provider, **environ):
    variables = {"openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
                 "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
                 "google": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL")}[provider]
    app = App(environ={**os.environ, variables[0]: "sk-test", variables[1]: fake_server.url,
                       **environ}, cwd=tmp_path)
    return Session.open(app, provider, stream=False, no_tools=True)


def test_each_provider_gets_the_image_in_its_own_wire_form(fake_server, tmp_path, shot):
    data = base64.b64encode(PNG).decode()
    expected = {
        "openai": {"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": PNG_URL}}]},
        "anthropic": {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": data}},
            {"type": "text", "text": "what is this?"}]},
        "google": {"role": "user", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": data}}, {"text": "what is this?"}]},
    }
    for provider, message in expected.items():
        fake_server.push(REPLIES[provider].reply("A chart."))
        session = _session(fake_server, tmp_path, provider)
        assert session.send("what is this?", [shot]).text == "A chart."
        body = fake_server.requests[-1].json
        sent = (body.get("messages") or body.get("contents"))[-1]
        if isinstance(sent.get("content"), list):  # the prompt cache's breakpoint aside
            sent["content"] = [{k: v for k, v in part.items() if k != "cache_control"}
                               for part in sent["content"]]
        assert sent == message, provider


def test_the_responses_wire_gets_an_input_image(fake_server, tmp_path, shot):
    fake_server.push(RESPONSES.reply("A chart.", stream=False))
    session = _session(fake_server, tmp_path, "openai", OPENAI_WIRE="responses")
    session.send("what is this?", [shot])
    [request] = fake_server.requests
    assert request.path.endswith("/responses")
    assert request.json["input"] == [{"role": "user", "content": [
        {"type": "input_text", "text": "what is this?"},
        {"type": "input_image", "image_url": PNG_URL}]}]


def test_a_resumed_conversation_sends_its_images_again(fake_server, tmp_path, shot):
    fake_server.push(REPLIES["anthropic"].reply("A chart."), REPLIES["anthropic"].reply("Red."))
    first = _session(fake_server, tmp_path, "anthropic")
    first.send("what is this?", [shot])
    again = _session(fake_server, tmp_path, "anthropic")
    assert again.resume(first.id)
    assert again.conversation.messages[0].images == (shot,)
    again.send("which colour?")
    image = fake_server.requests[-1].json["messages"][0]["content"][0]
    assert image["source"]["data"] == base64.b64encode(PNG).decode()


def test_what_cannot_take_an_image_is_one_line_before_anything_is_sent(fake_server, tmp_path):
    gif = Attachment("image/gif", GIF)
    google = _session(fake_server, tmp_path, "google")
    with pytest.raises(UsageError, match=r"^provider 'google' takes no GIF images \(it takes "
                                         r"PNG, JPEG, WebP\); convert the image$"):
        google.send("look", [gif])
    openai = _session(fake_server, tmp_path, "openai")
    openai.model = "o3-mini"
    with pytest.raises(UsageError, match=r"^model 'o3-mini' of provider 'openai' reads no "
                                         r"images; choose one that does"):
        openai.send("look", [gif])
    openai.provider.image_types = ()  # as a provider whose API takes none
    try:
        with pytest.raises(UsageError, match="^provider 'openai' takes no images; "):
            openai.send("look", [gif])
    finally:
        del openai.provider.image_types
    assert fake_server.requests == [] and google.conversation.messages == []


def test_a_file_is_read_as_hostile(tmp_path):
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "big.png").write_bytes(PNG + b"0" * MAX_IMAGE_BYTES)
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    cases = {"notes.txt": "notes.txt is not an image ikigai can send (PNG, JPEG, GIF, WebP)",
             "big.png": "big.png is too large to attach (3.75 MiB; the most is 3.75 MiB)",
             "missing.png": "missing.png: no such file",
             "dir": "dir is a directory; name a file to attach",
             "fifo": "fifo is not a file; name a file to attach"}
    for name, line in cases.items():
        with pytest.raises(UsageError) as info:
            read_image(tmp_path / name, name)
        assert str(info.value) == line, name
    (tmp_path / "locked.png").write_bytes(PNG)
    (tmp_path / "locked.png").chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(UsageError, match="^cannot read locked.png: Permission denied$"):
            read_image(tmp_path / "locked.png", "locked.png")


def test_at_paths_attach_text_and_images_and_leave_words_alone(tmp_path, shot):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print('hi')\n")
    found = with_mentions("compare @src/a.py with @shot.png, @bob and me@example.com; "
                          "again @src/a.py.", tmp_path)
    assert found.text == ("compare @src/a.py with @shot.png, @bob and me@example.com; "
                          "again @src/a.py.\n\n<file path=\"src/a.py\">\nprint('hi')\n</file>")
    assert found.images == (shot,) and found.files == ("src/a.py", "shot.png")
    assert with_mentions("plain", tmp_path) == type(found)("plain")


def test_bad_at_paths_are_one_line(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "huge.txt").write_text("x" * (MAX_TEXT_BYTES + 1))
    cases = {"@typo.md": f"@typo.md: no such file in {tmp_path} (an @ word names a file to "
                         "attach)",
             "@latin1.txt": "@latin1.txt is not UTF-8 text (nor an image ikigai can send)",
             "@blob.bin": "@blob.bin is neither text nor an image ikigai can send",
             "@huge.txt": "@huge.txt is too large to attach as text (256 KiB; the most is "
                          "256 KiB)"}
    for text, line in cases.items():
        with pytest.raises(UsageError) as info:
            with_mentions(f"read {text}", tmp_path)
        assert str(info.value) == line, text


def test_ask_image_goes_to_the_model_and_a_bad_one_is_one_line(fake_server, tmp_path):
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("text")
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url}
    fake_server.push(REPLIES["openai"].reply("A chart."))

    def ask(*args):
        return subprocess.run([IKIGAI, "ask", "--provider", "openai", "--no-tools",
                               "--no-stream", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=60)

    done = ask("--image", "shot.png", "what is this?")
    assert (done.returncode, done.stdout) == (0, "A chart.\n"), done.stderr
    content = fake_server.requests[0].json["messages"][-1]["content"]
    assert content[1] == {"type": "image_url", "image_url": {"url": PNG_URL}}
    bad = ask("--image", "notes.txt", "what is this?")
    assert (bad.returncode, bad.stdout, bad.stderr) == (
        2, "", "ikigai: notes.txt is not an image ikigai can send (PNG, JPEG, GIF, WebP)\n")
    assert len(fake_server.requests) == 1


@pytest.mark.parametrize("image", [
    {"mime_type": "image/png", "data": "not base64!"},
    {"mime_type": "image/png", "data": base64.b64encode(GIF).decode()},  # not what it says
    {"mime_type": "text/html", "data": base64.b64encode(PNG).decode()},
    {"mime_type": "image/png", "data": "A" * (MAX_IMAGE_BYTES * 2)},
    "a picture",
])
def test_a_damaged_recorded_image_is_one_line_before_anything_is_sent(
        image, fake_server, tmp_path, isolated_home):
    import json
    import sqlite3
    from contextlib import closing

    from ikigai_core.errors import IkigaiError

    fake_server.push(REPLIES["openai"].reply("Seen."))
    first = _session(fake_server, tmp_path, "openai")
    first.send("look", [Attachment("image/png", PNG)])
    with closing(sqlite3.connect(isolated_home / "sessions.db", isolation_level=None)) as db:
        db.execute("UPDATE turns SET messages = ?",
                   (json.dumps([{"role": "user", "text": "look", "images": [image]}]),))
    again = _session(fake_server, tmp_path, "openai")
    with pytest.raises(IkigaiError, match=rf"^session {first.id} is damaged \(.*image.*\); "
                                          "remove it with `ikigai sessions rm "):
        again.resume(first.id)
    assert len(fake_server.requests) == 1
