"""Context that never overflows (issue 26 section 3): compaction, pruning, the window, and
a provider's "context too long" error, through ``ikigai ask`` and ``chat`` against fake
servers with a small window that refuse a longer request with the provider's real error."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.context import PRUNE_MIN_BYTES, Gauge, Window, pruned, window_of
from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.errors import ConfigError
from ikigai_core.providers import get_provider
from tests.support.tools import write_shell_tool
from tests.support.window import SUMMARY, WindowModel

KEYS = {"openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
        "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        "google": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL")}
BIG_BYTES = 3000
"""What the ``big`` tool prints each call."""


@pytest.fixture
def big_tool(isolated_home):
    """``big``: a real tool printing :data:`BIG_BYTES` bytes of output each call."""
    write_shell_tool(isolated_home / "tools", "big-tool", f"""\
        if [ "$1" = --schema ]; then
          echo '{{"name": "big", "description": "prints a lot",
                 "parameters": {{"type": "object", "properties": {{"n": {{"type": "integer"}}}}}}}}'
          exit 0
        fi
        cat >/dev/null
        printf '{{"out": "'; head -c {BIG_BYTES} /dev/zero | tr '\\0' a; printf '"}}\\n'
        """)


def settings(home, **values):
    (home / "config.json").write_text(json.dumps(values))


def serve(monkeypatch, model: WindowModel) -> None:
    key, base = KEYS[model.provider]
    monkeypatch.setenv(key, "sk-test-key")
    monkeypatch.setenv(base, model.url)


def ask(*args: str):
    return CliRunner().invoke(cli, ["ask", "--yes", "--no-stream", *args],
                              catch_exceptions=False)


def recorded(home) -> list[dict]:
    with sqlite3.connect(home / "sessions.db") as db:
        return [m for (text,) in db.execute("SELECT messages FROM turns ORDER BY seq")
                for m in json.loads(text)]


# -- What must hold: a long tool loop stays under a small window -------------------------


def test_a_60_turn_loop_with_big_outputs_stays_under_a_small_window(
        monkeypatch, isolated_home, tmp_path, big_tool):
    """60 model turns of 3 kB results (45,000 tokens in all) against a 6,000-token window:
    pruning and compaction keep every request under it, and sessions.db keeps it all."""
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, context_window=6000, prune_after=2, compact_keep=1)
    model = WindowModel("openai", 6000, [[("big", {"n": n})] for n in range(60)] + ["All done."])
    serve(monkeypatch, model)
    try:
        answered = ask("--provider", "openai", "--tools", "big", "--max-turns", "80",
                       "run big 60 times")
    finally:
        model.close()
    assert answered.exit_code == 0, answered.stderr
    assert "All done." in answered.stdout
    assert model.refused == [] and max(model.sizes) <= 6000
    assert model.played == 61 and model.summaries
    assert "compacted:" in answered.stderr and "/uncompact undoes it" in answered.stderr
    pruned_seen = [r for r in model.server.requests if b"pruned: this result of big" in r.body]
    assert pruned_seen  # old results went out as placeholders
    messages = recorded(isolated_home)
    results = [r for m in messages if m["role"] == "tool" for r in m["results"]]
    assert len(results) == 60 and all(len(r["envelope"]["result"]["out"]) == BIG_BYTES
                                      for r in results)  # the full history, unpruned
    compactions = [m for m in messages if m["role"] == "compaction"]
    assert compactions and all(c["text"] == SUMMARY and c["reason"] == "auto"
                               for c in compactions)
    shown = CliRunner().invoke(cli, ["sessions", "show", _only_session()]).stdout
    assert "messages summarised by a compaction; --full shows them]" in shown
    assert shown.count("Tool big") < 60 <= CliRunner().invoke(
        cli, ["sessions", "show", "--full", _only_session()]).stdout.count("Tool big")


# -- A provider's "context too long" ------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_context_too_long_compacts_once_and_asks_again(
        provider, monkeypatch, isolated_home, tmp_path, big_tool):
    """The window is not known to be small (the model's table says 400k): the provider's
    own 400 is what says so; one compaction, one retry, the answer."""
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, compact_keep=1)
    model = WindowModel(provider, 100_000, [[("big", {})], "Fine."])
    serve(monkeypatch, model)
    assert ask("--provider", provider, "PROMPT-ONE").exit_code == 0  # something to compact
    model.played, model.refuse_first = 0, 1
    try:
        answered = ask("--provider", provider, "--continue", "second")
    finally:
        model.close()
    assert answered.exit_code == 0, answered.stderr
    assert "Fine." in answered.stdout
    assert len(model.refused) == 1 and len(model.summaries) == 1
    assert "the provider said the context was too long" in answered.stderr
    last = model.server.requests[-1].body.decode()
    assert SUMMARY in last and "PROMPT-ONE" not in last


def test_context_too_long_again_after_compacting_is_one_line(
        monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    model = WindowModel("anthropic", 100_000, ["a", "b", "c"], refuse_first=5)
    serve(monkeypatch, model)
    try:
        answered = ask("--provider", "anthropic", "--no-tools", "hi")
    finally:
        model.close()
    assert answered.exit_code == 1
    assert answered.stderr.count("\n") == 1 and "prompt is too long" in answered.stderr
    assert "Traceback" not in answered.stderr


# -- The chat's commands ------------------------------------------------------------------


def chat(*lines: str):
    return CliRunner().invoke(cli, ["chat", "--yes", "--no-stream", "--provider", "openai"],
                              input="".join(f"{line}\n" for line in lines),
                              catch_exceptions=False)


def test_context_prints_a_breakdown_in_tokens_and_share_of_the_window(
        monkeypatch, isolated_home, tmp_path, big_tool):
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, context_window=50_000)
    model = WindowModel("openai", 50_000, [[("big", {})], "ok"])
    serve(monkeypatch, model)
    try:
        shown = chat("go", "/context")
    finally:
        model.close()
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    head = next(line for line in lines if line.startswith("Context: "))
    assert "of 50,000 tokens" in head and "the context_window setting" in head
    rows = {line.split()[0]: line for line in lines if line.startswith("  ")}
    assert set(rows) == {"system", "tools", "skills", "messages", "tool"}
    results = int(rows["tool"].split()[2].replace(",", ""))
    assert results >= BIG_BYTES // 5  # the tool's result, counted
    assert "Compacts at 80% of the window (40,000 tokens)" in shown.stdout


def test_compact_and_uncompact_in_chat_change_what_is_sent_not_what_is_kept(
        monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, compact_keep=1)
    model = WindowModel("openai", 100_000, ["one", "two", "three", "four"])
    serve(monkeypatch, model)
    try:
        shown = chat("alpha", "beta", "/compact keep the Greek letters", "gamma",
                     "/uncompact", "delta")
    finally:
        model.close()
    assert shown.exit_code == 0, shown.stderr
    assert "compacted: 2 messages summarised" in shown.stderr
    assert "uncompacted: the model is sent the whole conversation again" in shown.stdout
    (summary,) = model.summaries
    assert b"keep the Greek letters" in summary.body and b"alpha" in summary.body
    sent = [r.json["messages"] for r in model.server.requests if r not in model.summaries]
    gamma, delta = json.dumps(sent[2]), json.dumps(sent[3])
    assert SUMMARY in gamma and "alpha" not in gamma and "beta" in gamma
    assert SUMMARY not in delta and "alpha" in delta
    kinds = [m["role"] for m in recorded(isolated_home)]
    assert kinds.count("compaction") == 2 and kinds.count("user") == 4


def test_nothing_to_compact_says_so(monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    model = WindowModel("openai", 100_000, ["one"])
    serve(monkeypatch, model)
    try:
        shown = chat("/compact", "/uncompact")
    finally:
        model.close()
    assert "Nothing to compact" in shown.stdout
    assert "The conversation is not compacted." in shown.stdout
    assert model.server.requests == []


# -- Pruning, the window, the settings -------------------------------------------------


def exchange(turns: int) -> list:
    big = {"tool_success": True, "result": {"out": "a" * PRUNE_MIN_BYTES}}
    messages: list = [UserMessage("go")]
    for n in range(turns):
        call = ToolCall(f"c{n}", "bash", {"command": f"seq {n}"})
        messages += [AssistantMessage("", (call,)), ToolResultsMessage((ToolResult(call, big),))]
    return messages


def placeholders(messages) -> list[int]:
    return [n for n, m in enumerate(m for m in messages if isinstance(m, ToolResultsMessage))
            if "pruned" in m.results[0].envelope]


def test_results_are_pruned_in_steps_so_the_prefix_changes_once_a_step():
    assert placeholders(pruned(exchange(7), 4)) == []
    assert placeholders(pruned(exchange(8), 4)) == [0, 1, 2, 3]
    assert placeholders(pruned(exchange(11), 4)) == [0, 1, 2, 3]  # the same prefix
    assert placeholders(pruned(exchange(12), 4)) == list(range(8))
    (note,) = [m for m in pruned(exchange(8), 4) if isinstance(m, ToolResultsMessage)][0].results
    assert note.envelope["pruned"].startswith('pruned: this result of bash {"command": "seq 0"}')
    assert "call the tool again" in note.envelope["pruned"]


def test_the_window_comes_from_the_setting_the_listing_or_the_known_models(
        isolated_home, tmp_path):
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    openai = get_provider(app.pm, "openai", app.notices)
    assert window_of(app, openai, "gpt-5").source == "known"
    assert window_of(app, openai, "no-such-model").tokens is None
    cache = isolated_home / "cache" / "models.json"
    cache.parent.mkdir(exist_ok=True)
    cache.write_text(json.dumps({"version": 1, "providers": {"openai": {
        "base_url": openai.default_base_url, "time": 0, "models": {"mine": 32_000}}}}))
    assert window_of(app, openai, "mine") == window_of(app, openai, "mine").__class__(
        32_000, "listing")
    settings(isolated_home, context_window=9000)
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    assert (window_of(app, openai, "gpt-5").tokens, window_of(app, openai, "gpt-5").source) \
        == (9000, "setting")


@pytest.mark.parametrize(("key", "value"), [("compact_at", 1.5), ("compact_at", 0),
                                            ("context_window", "big"), ("prune_after", -1)])
def test_a_bad_context_setting_is_one_line(isolated_home, tmp_path, key, value):
    settings(isolated_home, **{key: value})
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    with pytest.raises(ConfigError, match=f"'{key}' must be"):
        app.settings.verify()


def test_sessions_show_marks_the_compacted_view_and_full_shows_everything(
        monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, compact_keep=1)
    model = WindowModel("openai", 100_000, ["one", "two", "three"])
    serve(monkeypatch, model)
    try:
        chat("alpha", "beta", "/compact", "gamma")
    finally:
        model.close()
    runner = CliRunner()
    shown = runner.invoke(cli, ["sessions", "show", _only_session()]).stdout
    full = runner.invoke(cli, ["sessions", "show", "--full", _only_session()]).stdout
    assert "[2 messages summarised by a compaction; --full shows them]" in shown
    assert "one" not in shown.split("Prompt 2")[0].split("Prompt 1")[1]
    assert "[Compacted (command): the first 2 messages summarised" in shown
    assert SUMMARY in shown and SUMMARY in full
    assert "summarised by a compaction" not in full and "\none\n" in full


def _only_session() -> str:
    listed = CliRunner().invoke(cli, ["sessions", "list", "--json"]).stdout
    (session,) = json.loads(listed)
    return session["id"]


@pytest.mark.parametrize("command", ["ask", "request"])
def test_a_compaction_covering_messages_after_it_is_damage_in_one_line(
        command, monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    model = WindowModel("openai", 100_000, ["one", "two"])
    serve(monkeypatch, model)
    try:
        assert ask("--provider", "openai", "--no-tools", "alpha").exit_code == 0
        with sqlite3.connect(isolated_home / "sessions.db") as db:
            (messages,) = db.execute("SELECT messages FROM turns").fetchone()
            damaged = [{"role": "compaction", "text": "x", "covers": 99, "reason": "auto",
                        "tokens": [1, 1], "usage": None}, *json.loads(messages)]
            db.execute("UPDATE turns SET messages = ?", (json.dumps(damaged),))
        answered = CliRunner().invoke(cli, [command, "--provider", "openai", "--continue",
                                            "again"])
    finally:
        model.close()
    assert answered.exit_code == 1
    assert "is damaged (a compaction's covers is the int 99)" in answered.stderr
    assert answered.stderr.count("\n") == 1


def greeter_skill(home: Path) -> None:
    """A user skill, ``greeter``, whose one instruction is easy to find in a request."""
    skills = home / "skills"
    skills.mkdir()
    (skills / "greeter.md").write_text(
        "---\nname: greeter\ndescription: greets people\n---\nALWAYS SAY HELLO FIRST.\n")


def test_a_skill_the_model_loaded_stays_verbatim_when_its_turn_is_summarised(
        monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    greeter_skill(isolated_home)
    settings(isolated_home, compact_keep=1, context_window=100_000)
    model = WindowModel("openai", 100_000, [[("load_skill", {"name": "greeter"})], "Loaded.",
                                            "Hi.", "Hello again."])
    serve(monkeypatch, model)
    try:
        shown = chat("load the greeter", "hi", "/compact", "/context", "again")
    finally:
        model.close()
    assert shown.exit_code == 0, shown.stderr
    last = model.server.requests[-1].json["messages"]
    assert "ALWAYS SAY HELLO FIRST." in last[0]["content"]  # in the system prompt now
    assert not any(m.get("tool_calls") for m in last)  # the load_skill call was summarised
    assert _skills_row(shown.stdout)[0] > 0


def _skills_row(stdout: str) -> list[int]:
    """The skills' tokens each ``/context`` printed."""
    return [int(line.split()[1].replace(",", "")) for line in stdout.splitlines()
            if line.startswith("  skills")]


def test_a_skill_loaded_mid_chat_stays_verbatim_through_compact_uncompact_and_clear(
        monkeypatch, isolated_home, tmp_path):
    """``/load`` once the chat has begun: the skill goes with the next prompt; summarised
    by ``/compact``, its text moves to the system prompt verbatim; ``/uncompact`` sends it
    where it was again; ``/clear`` forgets it. ``/context`` counts it as skills each time."""
    monkeypatch.chdir(tmp_path)
    greeter_skill(isolated_home)
    settings(isolated_home, compact_keep=1, context_window=100_000)
    model = WindowModel("openai", 100_000, ["one", "two", "three", "four", "five"])
    serve(monkeypatch, model)
    try:
        shown = chat("alpha", "/load greeter", "/context", "beta", "/compact", "/context",
                     "gamma", "/uncompact", "delta", "/clear", "epsilon")
    finally:
        model.close()
    assert shown.exit_code == 0, shown.stderr
    sent = [r.json["messages"] for r in model.server.requests if r not in model.summaries]
    system = [messages[0]["content"] for messages in sent]
    assert system[0] == system[1] == system[3] == system[4]
    assert "ALWAYS SAY HELLO FIRST." not in system[0]
    beta, gamma, delta, epsilon = (json.dumps(messages[1:]) for messages in sent[1:])
    assert "[The user loaded the skill greeter" in beta and "ALWAYS SAY HELLO FIRST." in beta
    assert "ALWAYS SAY HELLO FIRST." in system[2] and "ALWAYS SAY" not in gamma
    assert "ALWAYS SAY HELLO FIRST." in delta
    assert "ALWAYS SAY" not in epsilon
    assert all(tokens > 0 for tokens in _skills_row(shown.stdout))
    assert len(_skills_row(shown.stdout)) == 2
    (loaded,) = [m for m in recorded(isolated_home) if m.get("skill")]
    assert loaded["skill"] == "greeter" and "ALWAYS SAY HELLO FIRST." in loaded["text"]


def test_an_empty_summary_is_one_line_and_changes_nothing(monkeypatch, isolated_home,
                                                          tmp_path):
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, compact_keep=1)
    model = WindowModel("openai", 100_000, ["one", "two", "three"], summary="")
    serve(monkeypatch, model)
    try:
        shown = chat("alpha", "beta", "/compact", "/context", "gamma")
    finally:
        model.close()
    assert "ikigai: the model answered the compaction with no summary; the conversation " \
           "is left as it was" in shown.stderr
    assert "Compacted:" not in shown.stdout
    assert "alpha" in json.dumps(model.server.requests[-1].json)


def test_an_unknown_window_compacts_only_when_the_provider_refuses(
        monkeypatch, isolated_home, tmp_path):
    monkeypatch.chdir(tmp_path)
    settings(isolated_home, compact_keep=1)
    model = WindowModel("openai", 100_000, ["one", "two", "three"])
    serve(monkeypatch, model)
    try:
        chat_shown = CliRunner().invoke(cli, ["chat", "--no-stream", "--provider", "openai",
                                              "--model", "mystery-model"],
                                        input="alpha\nbeta\n/context\n")
        model.refuse_first = 1
        answered = ask("--provider", "openai", "--model", "mystery-model", "--continue",
                       "--no-tools", "gamma")
    finally:
        model.close()
    assert "tokens of an unknown window (set context_window" in chat_shown.stdout
    assert "     –" in chat_shown.stdout
    assert answered.exit_code == 0, answered.stderr
    assert len(model.summaries) == 1 and "three" in answered.stdout


def test_the_window_from_genai_prices_when_nothing_else_knows_it(isolated_home, tmp_path,
                                                                monkeypatch):
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    openai = get_provider(app.pm, "openai", app.notices)
    assert "gpt-3.5-turbo" not in openai.known_models
    assert window_of(app, openai, "gpt-3.5-turbo") == Window(16385, "genai-prices")
    monkeypatch.setitem(__import__("sys").modules, "genai_prices.data_snapshot", None)
    assert window_of(app, openai, "gpt-3.5-turbo") == Window(None)  # not installed


def test_the_gauge_follows_the_providers_count_of_the_last_request():
    gauge, conversation = Gauge(), Conversation([UserMessage("q")])
    gauge.sent(conversation, 100)
    gauge.answered(conversation)  # no answer yet: nothing learnt
    assert gauge.count(100) == 100
    gauge.sent(conversation, 100)
    conversation.add(AssistantMessage("a", usage=Usage(150, 5)))
    gauge.answered(conversation)
    assert gauge.count(100) == 150
    gauge.sent(conversation, 100)
    conversation.add(AssistantMessage("b", usage=Usage(0, 5)))  # a provider counting nothing
    gauge.answered(conversation)
    assert gauge.count(100) == 150


def test_a_long_call_is_named_cut_in_its_placeholder():
    call = ToolCall("c0", "bash", {"command": "x" * 500})
    big = {"tool_success": False, "error": "a" * PRUNE_MIN_BYTES}
    messages = [UserMessage("go")] + [AssistantMessage("", (call,)),
                                      ToolResultsMessage((ToolResult(call, big),))] * 8
    note = pruned(messages, 4)[2].results[0].envelope
    assert note["tool_success"] is False and "x" * 150 + "…" in note["pruned"]
    assert len(note["pruned"]) < 400


def test_the_rendered_chat_shows_a_compaction_dimmed_on_a_line_of_its_own(isolated_home,
                                                                           tmp_path):
    import io

    from rich.console import Console

    from ikigai_core.commands.screen import Screen
    from ikigai_core.conversation import Compaction

    out = io.StringIO()
    screen = Screen(App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path),
                    console=Console(file=out, force_terminal=True, color_system="standard",
                                    width=120))
    screen.text("Half a line")
    screen.compacted(Compaction("s", 12, 14, "auto", (9000, 1200)))
    shown = out.getvalue()
    assert "Half a line" in shown.split("compacted:")[0]  # the text is ended first
    assert "\x1b[2mcompacted: 12 messages summarised, 9,000 → 1,200 tokens (the window " \
           "was filling up); /uncompact undoes it" in shown
