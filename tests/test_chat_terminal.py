"""``ikigai chat`` and ``ask`` on a real terminal (issue 13): what the screen shows.

The real ``ikigai`` runs on a pseudo-terminal; ``pyte`` plays the terminal, so the tests
assert the screen a person would see. Every read waits with a timeout that really fires.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from ikigai_core import hookimpl
from ikigai_core.app import App
from ikigai_core.grants import Grants
from ikigai_core.status import status_words
from tests.support.procs import pid_written, wait_gone
from tests.support.replies import REPLIES
from tests.support.tools import write_hang_tool, write_tool
from tests.support.vt import Screen as VirtualScreen


def test_status_words_come_from_plugins_and_a_bad_one_is_reported(isolated_home, tmp_path):
    class Modes:
        @hookimpl
        def ikigai_status(self, context):
            return [f"audit: on in {context.cwd.name}", "  "]

    class Broken:
        @hookimpl
        def ikigai_status(self):
            return [42]

    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    app.pm.register(Modes(), name="modes")
    app.pm.register(Broken(), name="broken")
    assert status_words(app, Grants()) == ["sandbox: off", "approve: ask",
                                          f"audit: on in {tmp_path.name}"]
    assert any("broken" in notice.message for notice in app.notices)


# -- On a real terminal ---------------------------------------------------------------------

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
ANSWER = "Here:\n\n```python\nprint('hi')\n```\n\n- **done**"


@pytest.fixture
def env(fake_server, isolated_home):
    """What ``ikigai chat`` needs to reach the fake server, on an xterm."""
    return {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url,
            "IKIGAI_HOME": str(isolated_home), "TERM": "xterm-256color"}


@pytest.fixture
def chat(env, tmp_path):
    """``ikigai chat`` on a terminal, at its first prompt."""
    argv = [IKIGAI, "chat", "--yes", "--provider", "openai"]  # no approval questions
    with VirtualScreen(argv, env=env, cwd=tmp_path) as screen:
        screen.wait_for("tokens:")  # the status line under the prompt
        yield screen


def test_markdown_renders_and_a_tool_shows_one_line_and_a_preview(chat, fake_server):
    replies = REPLIES["openai"]
    fake_server.push(
        replies.reply("Let me look.", [("c1", "bash", {"command": "seq 1 10"})], stream=True),
        replies.reply(ANSWER, stream=True))
    chat.write(b"look\r")
    shown = chat.wait_for("done")
    assert re.search(r"^● bash  seq 1 10  ok \d+\.\ds$", shown, re.M), shown
    assert "\n  1\n  2\n  3\n  4\n  … 6 more lines\n" in shown
    assert re.search(r"^ *print\('hi'\)", shown, re.M)  # the code block, fences gone
    assert "```" not in shown and "**" not in shown
    assert re.search(r"^ *• done$", shown, re.M)
    chat.wait_for(re.compile(r"tokens: turn 30 · chat 30").search)


def test_an_edit_shows_its_diff(chat, fake_server, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    replies = REPLIES["openai"]
    fake_server.push(
        replies.reply("", [("c1", "file_edit", {"file_path": "notes.txt", "old_string": "beta",
                                               "new_string": "BETA"})], stream=True),
        replies.reply("Edited.", stream=True))
    chat.write(b"edit\r")
    shown = chat.wait_for("Edited.")
    assert re.search(r"^● file_edit  notes.txt  ok", shown, re.M), shown
    assert "\n  @@ -1,3 +1,3 @@\n   alpha\n  -beta\n  +BETA\n   gamma\n" in shown
    assert (tmp_path / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"


def test_a_spinner_shows_the_running_tool_and_its_time(chat, fake_server):
    replies = REPLIES["openai"]
    fake_server.push(
        replies.reply("", [("c1", "bash", {"command": "sleep 2"})], stream=True),
        replies.reply("Slept.", stream=True))
    chat.write(b"sleep\r")
    spinner = re.compile(r"^\S bash sleep 2 (\d+\.\d)s$", re.M)
    shown = chat.wait_for(lambda text: float((spinner.search(text) or [0, 0])[1]) >= 1)
    assert "Slept." not in shown
    shown = chat.wait_for("Slept.")
    assert not spinner.search(shown), shown  # the spinner is gone
    assert re.search(r"^● bash  sleep 2  ok 2\.\ds$", shown, re.M), shown


def test_ctrl_c_stops_a_slow_tool_kills_its_group_and_the_chat_goes_on(
    chat, fake_server, isolated_home, tmp_path
):
    pids = tmp_path / "pids"
    write_hang_tool(isolated_home / "tools", pids)
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "hang", {})], stream=True),
                     replies.reply("Still here.", stream=True))
    chat.write(b"/refresh\r")
    chat.wait_for("Tools refreshed.")
    chat.write(b"hang\r")
    pid = pid_written(pids)
    chat.wait_for("hang")
    chat.write(b"\x03")
    chat.wait_for("ikigai: interrupted")
    assert wait_gone(pid), "the tool outlived Ctrl-C"
    chat.write(b"are you there?\r")
    chat.wait_for("Still here.")
    assert [m["content"] for m in fake_server.requests[1].json["messages"]
            if m["role"] == "user"] == ["are you there?"]


def test_ctrl_c_clears_the_line_and_twice_on_an_empty_line_leaves(chat):
    chat.write(b"half a thought")
    chat.wait_for("> half a thought")
    chat.write(b"\x03")
    chat.wait_for(lambda text: "half a thought" not in text)
    chat.write(b"\x03")
    chat.wait_for("Ctrl-C again (or Ctrl-D) leaves")
    chat.write(b"\x03")
    assert chat.wait() == 0


def test_ctrl_d_leaves(chat):
    chat.write(b"\x04")
    assert chat.wait() == 0


def test_newline_key_and_paste_keep_a_message_whole(chat, fake_server):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("One.", stream=True), replies.reply("Two.", stream=True))
    chat.write(b"line one\x1b\rline two\\\rthree\r")  # Alt-Enter, \ Enter: new lines
    chat.wait_for("tokens: turn 15")
    chat.write(b"\x1b[200~pasted\rtext\x1b[201~\r")  # a bracketed paste with a newline
    chat.wait_for("Two.")
    first, second = (r.json["messages"][-1]["content"] for r in fake_server.requests)
    assert first == "line one\nline two\nthree"
    assert second == "pasted\ntext"


def test_enter_typed_while_the_model_answers_still_sends(chat, fake_server):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "bash", {"command": "sleep 1"})], stream=True),
                     replies.reply("One.", stream=True), replies.reply("Two.", stream=True))
    chat.write(b"first\r")
    chat.wait_for("bash sleep 1")
    chat.write(b"second\r")  # typed ahead: the terminal's line discipline makes it \n
    chat.wait_for("Two.")
    assert fake_server.requests[-1].json["messages"][-1]["content"] == "second"


def test_tab_completes_slash_commands_and_tool_names(chat):
    chat.write(b"/mo\t")
    chat.wait_for("> /model")
    chat.write(b"\x03/tool\r")  # tool names are offered once discovery has ended
    chat.wait_for("Available tools:")
    chat.write(b"/tool file_r\t")
    chat.wait_for("> /tool file_read")


def test_a_plugin_asks_the_user_through_the_prompt(env, fake_server, tmp_path, site):
    site("askplug", "askplug", """
        from ikigai_core import CallDecision, hookimpl

        @hookimpl
        def ikigai_before_tool_call(request):
            answer = request.context.ask_user("run it? [y/n/always]")
            return None if answer == "y" else CallDecision.deny(f"user said {answer!r}")

        @hookimpl
        def ikigai_status(context):
            return ["askplug: on"]
    """)
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "bash", {"command": "echo it-ran"})], stream=True),
                     replies.reply("Done.", stream=True))
    env = {**env, "PYTHONPATH": str(tmp_path / "site")}
    argv = [IKIGAI, "chat", "--yes", "--provider", "openai"]  # only the plugin asks
    with VirtualScreen(argv, env=env, cwd=tmp_path) as chat:
        chat.wait_for("tokens: turn 0 · chat 0 · sandbox: off · approve: yes · askplug: on")
        chat.write(b"go\r")
        chat.wait_for("run it? [y/n/always]")
        chat.write(b"y\r")
        shown = chat.wait_for("Done.")
        assert "\n  it-ran\n" in shown


def test_the_status_line_shows_the_guards_and_approve_changes_one(env, fake_server, tmp_path):
    env = {**env, "IKIGAI_SANDBOX": "read-only"}
    argv = [IKIGAI, "chat", "--provider", "openai", "--allow", "glob"]
    with VirtualScreen(argv, env=env, cwd=tmp_path) as chat:
        shown = chat.wait_for(  # too wide for 100 columns: on two lines
            "· sandbox: read-only (no network)\napprove: ask (+1 --allow)")
        assert "approvals:" not in shown  # no line at the start: the status line says it
        chat.write(b"/approve yes\r")
        shown = chat.wait_for("sandbox: read-only (no network) · approve: yes")
        assert "approvals: --yes, every call runs unless a rule denies it" in shown
        chat.write(b"/approve ask\r")
        chat.wait_for("(no network)\napprove: ask (+1 --allow)")
        chat.write(b"/approve maybe\r")
        chat.wait_for("ikigai: /approve maybe: say /approve yes or /approve ask")


def test_ask_on_a_terminal_renders_too(env, fake_server, tmp_path):
    fake_server.push(REPLIES["openai"].reply(ANSWER, stream=True))
    with VirtualScreen([IKIGAI, "ask", "--provider", "openai", "hi"], env=env,
                       cwd=tmp_path) as screen:
        assert screen.wait() == 0
    assert re.search(r"^ *• done$", screen.text, re.M) and "```" not in screen.text


def test_chat_plain_on_a_terminal_is_the_plain_chat(env, fake_server, tmp_path):
    fake_server.push(REPLIES["openai"].reply("**Hi.**", [("c1", "bash", {"command": "true"})]),
                     REPLIES["openai"].reply("Bye."))
    with VirtualScreen([IKIGAI, "chat", "--plain", "--yes", "--provider", "openai"], env=env,
                       cwd=tmp_path) as screen:
        screen.wait_for(lambda text: text.rstrip().endswith("\n>"))
        screen.write(b"hi\r")
        shown = screen.wait_for("Bye.")
        assert '**Hi.**\nikigai: → bash {"command": "true"}\nikigai: ← bash ok\n' in shown
        assert "tokens:" not in shown


def test_the_rendered_prompt_comes_before_discovery_ends(env, isolated_home, tmp_path):
    done = tmp_path / "schema-done"
    write_tool(isolated_home / "tools", "slow-tool", schema_body=f"""
        time.sleep(3)
        open({str(done)!r}, "w").close()
        print(json.dumps({{"name": "slow", "description": "d", "parameters": {{"type": "object"}}}}))
    """)
    env = {**env, "IKIGAI_SCHEMA_TIMEOUT": "20"}
    with VirtualScreen([IKIGAI, "chat", "--provider", "openai"], env=env, cwd=tmp_path) as chat:
        chat.wait_for("tokens:")
        assert not done.exists(), "the prompt waited for discovery"
        chat.write(b"/tool\r")
        assert "  slow (" in chat.wait_for("  slow (")
