"""Attachments, completion and thinking in-process (the coverage gate sees these lines); what
a user sees is asserted through the real program in tests/test_prompt_images.py,
tests/test_chat_attach_terminal.py and tests/test_reasoning.py."""

from __future__ import annotations

import io
import os
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console

from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.commands.frontend import PlainFrontEnd
from ikigai_core.commands.lineinput import ChatCompleter
from ikigai_core.commands.screen import Screen
from ikigai_core.session import NoEvents
from pytest_ikigai.fakeserver import json_reply
from tests.support.replies import REPLIES
from tests.test_prompt_images import PNG, PNG_URL


@pytest.fixture
def app(isolated_home, tmp_path):
    return App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)


def completions(app: App, typed: str) -> list[tuple[str, str]]:
    completer = ChatCompleter(SimpleNamespace(app=app))  # the chat as completion sees it
    return [(c.text, c.display_meta_text) for c in
            completer.get_completions(Document(typed), CompleteEvent())]


def test_at_completes_paths_from_the_chat_directory(app, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / ".hidden").write_text("")
    assert completions(app, "see @s") == [("src/", "")]
    assert completions(app, "see @src/m") == [("main.py", "")]
    assert completions(app, "@.h") == [(".hidden", "")]
    assert ("src/", "") in completions(app, "@") and (".hidden", "") not in completions(app, "@")
    assert completions(app, "@nowhere/x") == []
    assert ("tmp/", "") in completions(app, "@/t")
    assert completions(app, "me@exa") == [] and completions(app, "/model @s") == []


def test_resume_completes_recorded_ids_and_a_broken_log_offers_nothing(
        app, isolated_home, fake_server, monkeypatch):
    assert completions(app, "/resume ") == []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    fake_server.push(REPLIES["openai"].reply("Noted."))
    done = CliRunner().invoke(cli, ["ask", "--provider", "openai", "--no-tools", "--json",
                                    "remember\n  the   walrus"])
    assert done.exit_code == 0, done.output
    [(session, meta)] = completions(app, "/resume ")
    assert meta == "remember the walrus" and completions(app, f"/resume {session[:5]}") == [
        (session, meta)]
    assert completions(app, "/resume zzz") == []
    (isolated_home / "sessions.db").write_bytes(b"not a database at all" * 100)
    assert completions(app, "/resume ") == []


def test_plain_thinking_goes_dimmed_to_stderr_only_when_shown(app, capsys):
    front = PlainFrontEnd(app)
    front.thinking("hidden")
    front.show_thinking = True
    front.thinking("Weigh ")
    front.thinking("it.")
    front.text("Yes.")
    front.thinking("Again.")
    front.end_line()
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("Yes.\n", "thinking: Weigh it.\nthinking: Again.\n")
    NoEvents().thinking("nothing")


def test_the_screen_shows_thinking_live_then_above_the_answer(app):
    screen = Screen(app, console=Console(file=io.StringIO(), force_terminal=True,
                                         color_system=None, width=80))
    screen.thinking("hidden")
    assert screen.thought == ""
    screen.show_thinking = True
    screen.thinking("line\n" * 10 + "Weigh both sides.")
    [thought] = screen.__rich__().renderables  # the live area: its last lines, first
    assert str(thought).splitlines() == ["line"] * 5 + ["Weigh both sides."]
    screen.text("Yes.\n\n")
    out = screen.console.file.getvalue()
    assert out.index("Weigh both sides.") < out.index("Yes.") and screen.thought == ""


def test_ask_and_chat_in_process_attach_think_and_refuse(app, fake_server, monkeypatch,
                                                         tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "a.txt").write_text("alpha")
    thought = REPLIES["anthropic"].body("Yes.")
    thought["content"].insert(0, {"type": "thinking", "thinking": "Hmm.", "signature": "c2ln"})
    fake_server.push(json_reply(thought))
    asked = CliRunner().invoke(cli, ["ask", "--provider", "anthropic", "--no-tools",
                                     "--no-stream", "--reasoning", "low", "--show-thinking",
                                     "--image", "shot.png", "should I?"])
    assert (asked.exit_code, asked.stdout) == (0, "Yes.\n"), asked.output
    assert asked.stderr == "thinking: Hmm.\n"
    body = fake_server.requests[0].json
    assert body["thinking"]["budget_tokens"] == 2048
    assert body["messages"][0]["content"][0]["source"]["media_type"] == "image/png"
    fake_server.push(REPLIES["openai"].reply("Seen."), REPLIES["openai"].reply("Read."))
    chatted = CliRunner().invoke(cli, ["chat", "--provider", "openai", "--no-tools",
                                       "--image", "shot.png"],
                                 input="look\nand @a.txt\n@gone.txt\n")
    assert "attached: --image (image/png, 1 KiB)" in chatted.stdout
    assert "attached: a.txt (text)" in chatted.stdout
    assert "@gone.txt: no such file" in chatted.stderr
    first, second = (request.json["messages"][-1]["content"]
                     for request in fake_server.requests[1:])
    assert first[1]["image_url"]["url"] == PNG_URL
    assert second.endswith('<file path="a.txt">\nalpha\n</file>')
    shown = CliRunner().invoke(cli, ["request", "--provider", "openai", "--no-tools",
                                     "--model", "o3", "--reasoning", "high", "hi"])
    assert '"reasoning_effort": "high"' in shown.stdout
    missing = CliRunner().invoke(cli, ["ask", "--provider", "openai", "--image", "no.png", "x"])
    assert (missing.exit_code, missing.stderr) == (2, "ikigai: no.png: no such file\n")
    assert os.environ.get("IKIGAI_REASONING") is None


def test_images_are_known_by_their_first_bytes():
    from ikigai_core.inputs import check_images, image_type

    assert [image_type(data) for data in (
        PNG, b"\xff\xd8\xff\xe0JFIF", b"GIF87a..", b"RIFF\x00\x00\x00\x00WEBPVP8 ",
        b"RIFF\x00\x00\x00\x00WAVEfmt ", b"<svg/>")] == [
        "image/png", "image/jpeg", "image/gif", "image/webp", None, None]
    check_images(None, "any", ())  # no images: nothing to check


def test_a_provider_without_reasoning_control_refuses_it_in_one_line(app):
    from ikigai_core.errors import UsageError
    from ikigai_core.providers import get_provider

    ollama = get_provider(app.pm, "ollama")  # the example plugin: no with_reasoning of its own
    with pytest.raises(UsageError, match="^provider 'ollama' has no reasoning control; "):
        ollama.with_reasoning({}, "low", model="llama3")


def test_models_name_a_rejected_stored_key_and_prices_what_is_known(
        app, isolated_home, fake_server, monkeypatch):
    from ikigai_core.errors import KeyRejected, ProviderError
    from ikigai_core.keys import KeyStore
    from ikigai_core.models import _fetch
    from ikigai_core.prices import per_million
    from ikigai_core.providers import get_provider

    monkeypatch.setitem(__import__("sys").modules, "keyring", None)  # the file store
    openai = get_provider(app.pm, "openai")
    KeyStore(isolated_home).set("openai", "sk-stored-0123456789")
    environ = {"OPENAI_BASE_URL": fake_server.url}
    fake_server.push(REPLIES["openai"].error(401, "bad key"),
                     REPLIES["openai"].error(401, "bad key"))
    with pytest.raises(ProviderError, match="rejected the API key stored in keys.json by "
                                            "ikigai keys \\(HTTP 401\\): replace it"):
        _fetch(openai, "/models", environ, isolated_home)
    with pytest.raises(KeyRejected, match="set a valid OPENAI_API_KEY$"):
        _fetch(openai, "/models", {**environ, "OPENAI_API_KEY": "sk-env-0123456789"},
               isolated_home)
    assert per_million("openai", "no-such-model-anywhere") is None
    assert per_million("openai", "gpt-4o") == pytest.approx((2.5, 10.0))
