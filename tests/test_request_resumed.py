"""``ikigai request --continue/--resume`` prints the body the next turn of a recorded
conversation sends (issue 26): proved against what the server then receives from
``ikigai ask --continue`` after a long session was compacted and its old tool output pruned.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from ikigai_core.cli import cli
from tests.support.window import SUMMARY, WindowModel
from tests.test_context import ask, big_tool, serve, settings  # noqa: F401 - a fixture

SKILL = "ALWAYS SAY HELLO FIRST."
PROMPTS = 8
"""The most prompts the session runs before the one compared."""
CALLS = 4
WINDOW = 5000
"""The fake model's window: its tokens are the body's bytes / 4."""
"""Calls of big each prompt is answered after."""


def request(*args: str):
    return CliRunner().invoke(cli, ["request", "--no-stream", *args])


def turns(home) -> int:
    with sqlite3.connect(home / "sessions.db") as db:
        return int(db.execute("SELECT count(*) FROM turns").fetchone()[0])


@pytest.mark.usefixtures("big_tool")
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_request_continue_prints_the_bytes_ask_continue_then_sends(
        provider, monkeypatch, isolated_home, tmp_path):
    """A session of prompts each answered after 4 calls of big (3 kB each) under a
    5,000-token window, a skill loaded, goes on until the next turn would send a compacted
    view with pruned results and not compact first: the body ``request --continue NEXT``
    prints is then, byte for byte as httpx encodes it, the first body ``ask --continue
    NEXT`` sends (the summary, the placeholders, the skill, the cache marks); nothing
    differs. ``request`` sends and records nothing."""
    monkeypatch.chdir(tmp_path)
    (isolated_home / "skills").mkdir()
    (isolated_home / "skills" / "greeter.md").write_text(
        f"---\nname: greeter\ndescription: greets people\n---\n{SKILL}\n")
    settings(isolated_home, context_window=WINDOW, prune_after=2, compact_keep=1)
    script = [[("big", {"n": n})] for n in range(CALLS)] + ["Done."]
    model = WindowModel(provider, WINDOW, script * PROMPTS)
    serve(monkeypatch, model)
    options = ("--provider", provider, "--tools", "big")
    try:
        for n in range(PROMPTS):
            more = ("--continue",) if n else ("--skill", "greeter")
            answered = ask(*options, *more, f"PROMPT-{n}: run big")
            assert answered.exit_code == 0, answered.stderr
            seen, recorded = len(model.server.requests), turns(isolated_home)
            printed = request(*options, "--continue", "NEXT")
            assert printed.exit_code == 0, printed.stderr
            assert len(model.server.requests) == seen and turns(isolated_home) == recorded
            if (SUMMARY in printed.stdout and "pruned: this result of big" in printed.stdout
                    and not printed.stderr):
                break
        else:
            pytest.fail(f"no compacted and pruned view after {PROMPTS} prompts")
        summaries = len(model.summaries)
        answered = ask(*options, "--continue", "NEXT")
    finally:
        model.close()
    assert answered.exit_code == 0, answered.stderr
    assert len(model.summaries) == summaries  # the next turn did not compact first
    sent = model.server.requests[seen].body
    body = json.loads(printed.stdout)
    assert json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() == sent
    assert "PROMPT-0" not in printed.stdout and SKILL in printed.stdout
    assert ("cache_control" in printed.stdout) if provider == "anthropic" else (
        body["prompt_cache_key"])


@pytest.mark.usefixtures("big_tool")
def test_request_says_when_the_next_turn_compacts_first(monkeypatch, isolated_home, tmp_path):
    """The window filling up: the body printed is the one before the summary, and a line
    on stderr says the next turn compacts first."""
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, context_window=100_000)
    model = WindowModel("openai", 100_000, [[("big", {})], [("big", {})], "Done."])
    serve(monkeypatch, model)
    try:
        assert ask("--provider", "openai", "--tools", "big", "go").exit_code == 0
    finally:
        model.close()
    settings(isolated_home, context_window=2000)
    printed = request("--provider", "openai", "--tools", "big", "--continue", "NEXT")
    assert printed.exit_code == 0, printed.stderr
    assert printed.stderr == ("ikigai: the window is filling up: the next turn compacts the "
                              "conversation first, so it sends the model's summary of the "
                              "older turns, not what is below\n")
    assert json.loads(printed.stdout)["messages"][-1]["content"] == "NEXT"


@pytest.mark.parametrize("command", ["ask", "request"])
def test_an_unknown_session_is_one_line(command, monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    result = CliRunner().invoke(cli, [command, "--provider", "openai", "--resume", "nope",
                                      "hi"])
    assert result.exit_code == 2
    assert result.stderr == ("ikigai: no session 'nope'; `ikigai sessions list` shows them\n")
