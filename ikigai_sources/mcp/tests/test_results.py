"""An MCP tool's image through a full ``ikigai ask`` with the fake provider server: in the
provider's native form where its API takes images in tool results, as a line with its type
and size everywhere else; never as base64 text (issue 11)."""

from __future__ import annotations

import base64
import json
import sqlite3

import pytest
from ikigai_mcp.results import outcome

from ikigai_core import Attachment
from tests.support.cli import run
from tests.support.replies import REPLIES

from .conftest import edge

PNG = b"\x89PNG" + b"0" * 100  # what servers/edge.py's pic tool returns
PNG_B64 = base64.b64encode(PNG).decode()
LINE = "[image/png image, 104 bytes]"
SETUP = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "claude-sonnet-4-5"),
    "google": ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "gemini-3-pro-preview"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-4o-mini"),
}


def ask_for_the_picture(provider, model, servers, fake_server, monkeypatch, tmp_path, *args,
                        real: bool = False):
    """``ikigai ask`` whose model calls ``edge__pic`` then answers (a real process when
    ``real``, else in this process: the same path to the provider); the second request."""
    servers({"edge": edge()})
    key, base_url, _ = SETUP[provider]
    monkeypatch.setenv(key, "k-test")
    monkeypatch.setenv(base_url, fake_server.url)
    replies = REPLIES[provider]
    fake_server.push(replies.reply(calls=[("call_pic", "edge__pic", {})], stream=True),
                     replies.reply("A tiny PNG.", stream=True))
    ran = run("ask", "--yes", "--provider", provider, "--model", model, *args,
              "what is in the picture?", cwd=tmp_path, real=real, timeout=90)
    assert ran.returncode == 0, ran.stderr
    assert len(fake_server.requests) == 2
    return ran, fake_server.requests[1].json


def test_anthropic_gets_an_image_block_in_the_tool_result(servers, fake_server, monkeypatch,
                                                          tmp_path, isolated_home):
    ran, body = ask_for_the_picture("anthropic", "claude-sonnet-4-5", servers, fake_server,
                                    monkeypatch, tmp_path, "--json", real=True)
    [result] = body["messages"][-1]["content"]
    text, image = result["content"]
    assert json.loads(text["text"])["result"] == {"text": LINE}
    assert PNG_B64 not in text["text"]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": PNG_B64}}
    # ask --json and the session log hold the line, never the image
    answer = json.loads(ran.stdout)
    assert answer["tool_calls"][0]["envelope"]["result"] == {"text": LINE}
    assert PNG_B64 not in ran.stdout
    with sqlite3.connect(isolated_home / "sessions.db") as db:
        logged = json.dumps(db.execute("SELECT * FROM tool_calls").fetchall())
    assert LINE in logged and PNG_B64 not in logged


def test_gemini_3_gets_inline_data_in_the_function_response(servers, fake_server, monkeypatch,
                                                            tmp_path):
    _, body = ask_for_the_picture("google", "gemini-3-pro-preview", servers, fake_server,
                                  monkeypatch, tmp_path)
    [part] = body["contents"][-1]["parts"]
    response = part["functionResponse"]
    assert response["response"]["result"] == {"text": LINE}
    assert PNG_B64 not in json.dumps(response["response"])
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]


@pytest.mark.parametrize("provider, model", [("google", "gemini-2.5-flash"),
                                             ("openai", "gpt-4o-mini")])
def test_text_only_tool_results_get_the_line_alone(provider, model, servers, fake_server,
                                                   monkeypatch, tmp_path):
    _, body = ask_for_the_picture(provider, model, servers, fake_server, monkeypatch, tmp_path)
    assert LINE in json.dumps(body)
    assert PNG_B64 not in json.dumps(body)


def test_images_become_attachments_and_other_binary_content_a_line():
    audio = base64.b64encode(b"RIFF").decode()
    done = outcome("t", {"content": [
        {"type": "text", "text": "two pictures"},
        {"type": "image", "mimeType": "image/png", "data": PNG_B64},
        {"type": "image", "mimeType": "image/png", "data": "not base64!"},
        {"type": "audio", "mimeType": "audio/wav", "data": audio},
    ]})
    assert done.result == {"text": "two pictures\n" + LINE + "\n"
                           "[image/png image, unreadable data; not shown to the model]\n"
                           "[audio/wav audio, 4 bytes; not shown to the model]"}
    assert done.attachments == (Attachment("image/png", PNG),)
    failed = outcome("t", {"isError": True, "content": [
        {"type": "image", "mimeType": "image/gif", "data": PNG_B64}]})
    assert failed.attachments == (Attachment("image/gif", PNG),)
