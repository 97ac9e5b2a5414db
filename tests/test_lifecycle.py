"""The plugin API's lifecycle hooks, on real tool processes: before and after a call, the
process spawn, long-lived runners, and the isolation of a failing plugin."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from ikigai_core import CallDecision, ToolCandidate, ToolOutcome, ToolScan, hookimpl
from ikigai_core.app import App
from ikigai_core.config import Settings
from ikigai_core.notices import Notices
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.providers import Provider
from ikigai_core.tools import Tool
from tests.support.calls import executor

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}


@pytest.fixture
def pm():
    return get_plugin_manager(load_entry_points=False, environ={})


@pytest.fixture
def marked(tmp_path, make_tool):
    """A tool that leaves a marker file when it starts and echoes its arguments and one
    environment variable."""
    marker = tmp_path / "started"
    body = (f"open({str(marker)!r}, 'w').close()\n"
            "print(json.dumps({'args': json.load(sys.stdin), 'env': os.environ.get('PROBE'),"
            " 'argv0': sys.argv[0]}))")
    path = make_tool(tmp_path / "bin", "mark-tool", body=body)
    tool = Tool("mark", "marks", OBJECT, (str(path),), "user", path)
    return {"mark": tool}, marker


class Gate:
    """A before-call plugin answering with a fixed decision, remembering what it saw."""

    def __init__(self, decision):
        self.decision = decision
        self.seen = []

    @hookimpl
    def ikigai_before_tool_call(self, request):
        self.seen.append((request.tool.name, dict(request.arguments), request.context.cwd))
        return self.decision


class Recorder:
    """An after-call plugin keeping every record."""

    def __init__(self):
        self.records = []

    @hookimpl
    def ikigai_after_tool_call(self, record):
        self.records.append(record)


def test_a_denied_call_starts_no_process_and_tells_the_model_why(pm, marked):
    registry, marker = marked
    gate, recorder = Gate(CallDecision.deny("writes are off today")), Recorder()
    pm.register(gate, name="gate")
    pm.register(recorder, name="recorder")

    called = executor(pm, settings=Settings()).call(registry, "mark", {"text": "hi"})

    assert not marker.exists()
    assert called.envelope == {"tool_success": False, "error_code": "TOOL_DENIED",
                               "error": "Tool 'mark' was denied: writes are off today"}
    assert gate.seen == [("mark", {"text": "hi"}, Path.cwd())]
    [record] = recorder.records
    assert record.outcome.error_code == "TOOL_DENIED" and record.arguments == {"text": "hi"}


def test_deny_wins_over_allow_and_replace(pm, marked):
    registry, marker = marked
    pm.register(Gate(CallDecision.allow("fine")), name="a")
    pm.register(Gate(CallDecision.replace({"text": "other"})), name="b")
    pm.register(Gate(CallDecision.deny("no")), name="c")
    pm.register(Gate(None), name="d")

    called = executor(pm, settings=Settings()).call(registry, "mark", {"text": "hi"})

    assert called.outcome.error_code == "TOOL_DENIED" and not marker.exists()


def test_replaced_arguments_reach_the_tool_and_are_validated_again(pm, marked):
    registry, marker = marked
    pm.register(Gate(CallDecision.replace({"text": "safer"})), name="rewrite")
    run = executor(pm, settings=Settings())

    assert run.call(registry, "mark", {"text": "hi"}).outcome.result["args"] == {"text": "safer"}

    marker.unlink()
    pm.unregister(name="rewrite")
    pm.register(Gate(CallDecision.replace({"text": 3})), name="broken-rewrite")
    called = run.call(registry, "mark", {"text": "hi"})
    assert called.outcome.error_code == "INVALID_PARAMS" and not marker.exists()
    assert "as replaced by a plugin" in called.outcome.error


def test_a_raising_gate_denies_the_call_and_is_reported(pm, marked):
    registry, marker = marked

    class Broken:
        @hookimpl
        def ikigai_before_tool_call(self, request):
            raise KeyError("oops")

    pm.register(Broken(), name="broken-gate")
    notices = Notices()

    called = executor(pm, settings=Settings(), notices=notices).call(registry, "mark", {})

    assert called.outcome.error_code == "TOOL_DENIED" and not marker.exists()
    assert "plugin 'broken-gate' failed while checking the call" in called.outcome.error
    assert [n.plugin for n in notices] == ["broken-gate"]


def test_after_call_sees_every_call_even_those_that_never_ran(approve_all, pm, marked):
    registry, _ = marked
    recorder = Recorder()
    pm.register(recorder, name="recorder")
    run = executor(pm, settings=Settings())

    run.call(registry, "mark", {"text": "hi"}, call_id="c1")
    run.call(registry, "nope", {})
    run.call(registry, "mark", {"text": 1})
    run.call(registry, "mark", None, unparsed="not JSON")

    ok, missing, invalid, unparsed = recorder.records
    assert ok.outcome.success and ok.tool is registry["mark"] and ok.call_id == "c1"
    assert ok.duration >= ok.outcome.elapsed > 0
    assert missing.tool is None and missing.outcome.error_code == "TOOL_NOT_FOUND"
    assert invalid.outcome.error_code == "INVALID_PARAMS"
    assert unparsed.outcome.error == "Invalid arguments for tool 'mark': not JSON"


def test_a_raising_observer_is_reported_once_and_the_others_still_see_every_call(pm, marked):
    registry, _ = marked
    calls = []

    class Broken:
        @hookimpl
        def ikigai_after_tool_call(self, record):
            calls.append(record.name)
            raise RuntimeError("observer bug")

    first, last = Recorder(), Recorder()
    pm.register(first, name="first")
    pm.register(Broken(), name="broken")
    pm.register(last, name="last")  # pluggy calls it before "broken"
    notices = Notices()
    run = executor(pm, settings=Settings(), notices=notices)

    for _ in range(3):
        assert run.call(registry, "mark", {}).outcome.success

    assert calls == ["mark"]
    assert len(first.records) == len(last.records) == 3
    [notice] = notices
    assert notice.message.startswith("plugin 'broken' failed in ikigai_after_tool_call: "
                                     "RuntimeError: observer bug; skipped")


def test_the_process_hook_changes_argv_and_environment_of_calls_and_schema_questions(
    pm, marked, tmp_path, isolated_home, make_tool
):
    registry, _ = marked
    seen = []

    class Policy:
        @hookimpl
        def ikigai_tool_process(self, spec):
            seen.append((spec.tool, spec.purpose))
            spec.env["PROBE"] = "set by policy"
            spec.env.pop("SECRET_KEY", None)
            spec.argv[:0] = ["env", f"IKIGAI_WRAPPED={spec.purpose}"]

    pm.register(Policy(), name="policy")
    result = executor(pm, settings=Settings()).call(registry, "mark", {}).outcome.result
    assert result["env"] == "set by policy"

    make_tool(isolated_home / "tools", "peek-tool",
              schema_body="print(json.dumps({'name': 'x', 'description': os.environ"
                          ".get('IKIGAI_WRAPPED', 'unwrapped') + ' ' + os.environ.get("
                          "'SECRET_KEY', 'no key'), 'parameters': {'type': 'object'}}))")
    app = App(environ={"IKIGAI_HOME": str(isolated_home), "SECRET_KEY": "sk-123"}, cwd=tmp_path)
    app.pm.register(Policy(), name="policy")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SECRET_KEY", "sk-123")
        assert app.registry(refresh=True)["peek"].description == "schema no key"
    assert ("mark", "call") in seen and ("peek", "schema") in seen


class SlowRunner:
    """A long-lived 'session' answering in-process."""

    def __init__(self, delay: float = 0.0, result=None, error: Exception | None = None):
        self.delay, self.result, self.error = delay, result, error
        self.cancelled: threading.Event | None = None
        self.calls = []

    def call(self, tool, arguments, *, timeout, cancelled):
        self.calls.append(dict(arguments))
        self.cancelled = cancelled
        cancelled.wait(self.delay)
        if self.error is not None:
            raise self.error
        return ToolOutcome(tool.name, result=self.result or {"echo": dict(arguments)})


def runner_tool(runner) -> dict[str, Tool]:
    return {"live": Tool("live", "a session tool", OBJECT, ("live",), "session", None,
                         runner=runner)}


def test_a_runner_tool_is_validated_hooked_and_wrapped_like_a_process(pm):
    runner, recorder = SlowRunner(), Recorder()
    pm.register(recorder, name="recorder")
    run = executor(pm, settings=Settings())

    assert run.call(runner_tool(runner), "live", {"text": "a"}).envelope == {
        "tool_success": True, "result": {"echo": {"text": "a"}}}
    assert run.call(runner_tool(runner), "live", {"text": 2}).outcome.error_code == (
        "INVALID_PARAMS")
    assert runner.calls == [{"text": "a"}]
    assert [r.outcome.success for r in recorder.records] == [True, False]


def test_a_runner_call_gets_the_timeout_and_the_output_budget(pm):
    slow = SlowRunner(delay=30)
    run = executor(pm, settings=Settings(tool_timeout=0.3, tool_max_output=100))
    started = time.monotonic()
    timed_out = run.call(runner_tool(slow), "live", {}).outcome
    assert timed_out.error_code == "TOOL_TIMEOUT" and time.monotonic() - started < 10
    assert slow.cancelled.is_set()

    big = run.call(runner_tool(SlowRunner(result={"x": "y" * 200})), "live", {}).outcome
    assert big.error_code == "INVALID_OUTPUT" and "more than 100 bytes" in big.error

    broken = run.call(runner_tool(SlowRunner(error=ConnectionError("session gone"))), "live", {})
    assert broken.outcome.error_code == "TOOL_CRASHED"
    assert "ConnectionError: session gone" in broken.outcome.error


class SessionSource:
    """A plugin whose source keeps its tools in a runner."""

    name, precedence = "session", 15

    def __init__(self, runner):
        self.runner = runner

    @hookimpl
    def ikigai_tool_sources(self):
        return [self]

    def scan(self):
        schema = {"name": "live", "description": "in a session", "parameters": OBJECT}
        return ToolScan([ToolCandidate("live", ("session:live",), schema=schema,
                                       runner=self.runner)])


def test_a_source_gives_runner_tools_through_discovery(isolated_home, tmp_path):
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    runner = SlowRunner()
    app.pm.register(SessionSource(runner), name="sessions")
    registry = app.registry()
    assert registry["live"].source == "session"
    assert app.executor.call(registry, "live", {"text": "x"}).outcome.result == {
        "echo": {"text": "x"}}


class Wrapper:
    """A new-style wrapper on a collecting hook: it sees each plugin's answer."""

    def __init__(self):
        self.seen = 0

    @hookimpl(wrapper=True)
    def ikigai_tool_sources(self):
        answers = yield
        self.seen += 1
        return answers


def test_a_wrapper_plugin_on_a_collecting_hook_works(isolated_home, tmp_path, make_tool):
    make_tool(isolated_home / "tools", "ok-tool")
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    wrapper = Wrapper()
    app.pm.register(wrapper, name="wrapper")
    assert "ok" in app.registry()
    assert wrapper.seen >= 2 and not list(app.notices)


class BadSources:
    """Every wrong thing a tool-source plugin has been seen to return."""

    def __init__(self, kind):
        self.kind = kind

    @hookimpl
    def ikigai_tool_sources(self):
        if self.kind == "not a list":
            return "sources"
        if self.kind == "no precedence":
            return [type("Source", (), {"name": "half", "scan": lambda self: ToolScan()})()]
        return [self]

    name, precedence = "bad", 5

    def scan(self):
        if self.kind == "scan returns a list":
            return []
        if self.kind == "dict candidate":
            return ToolScan([{"name": "x", "command": ["x"]}])
        if self.kind == "command is a string":
            return ToolScan([ToolCandidate("x", "/bin/x-tool")])
        return ToolScan()


@pytest.mark.parametrize(("kind", "words"), [
    ("not a list", "it returned str, not a list"),
    ("no precedence", "has no precedence (an int)"),
    ("scan returns a list", "scan() returned list, not a ToolScan"),
    ("dict candidate", "it found dict"),
    ("command is a string", "give a non-empty tuple of strings, not one string"),
])
def test_a_plugin_returning_the_wrong_thing_is_one_notice_and_the_rest_works(
    isolated_home, tmp_path, make_tool, capsys, kind, words
):
    make_tool(isolated_home / "tools", "ok-tool")
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    app.pm.register(BadSources(kind), name="acme")
    registry = app.registry()
    assert "ok" in registry and "bash" in registry
    [notice] = app.notices
    assert notice.plugin == "acme" and words in notice.message and "\n" not in notice.message
    assert capsys.readouterr() == ("", "")


class _Half(Provider):
    name, default_model = "acme", "acme-1"


class _Framed(_Half):
    base_url_env, default_base_url, path = "ACME_URL", "https://acme.test", "/chat"
    stream_framing = "websocket"


class _Unnamed(_Framed):
    name, stream_framing = "", "ndjson"


@pytest.mark.parametrize("provider, words", [
    (SimpleNamespace(name="acme"), "provider SimpleNamespace is not a subclass of ikigai_core.Provider"),
    (_Half(), "provider _Half does not set base_url_env, default_base_url, path (a str)"),
    (_Framed(), "provider _Framed has stream_framing 'websocket'; use one of sse, ndjson"),
    (_Unnamed(), "provider _Unnamed has an empty name"),
])
def test_a_provider_missing_part_of_the_base_is_skipped(capsys, provider, words):
    from ikigai_core.providers import collect_providers

    class Plugin:
        @hookimpl
        def ikigai_provider_serializers(self):
            return [provider]

    pm = get_plugin_manager(load_entry_points=False, environ={})
    pm.register(Plugin(), name="acme-plugin")
    notices = Notices()
    assert "acme" not in collect_providers(pm, notices)
    [notice] = notices
    assert words in notice.message
    assert notice.plugin == "acme-plugin"


def test_a_raising_provider_plugin_is_reported_and_the_others_stay(capsys):
    from ikigai_core.providers import collect_providers

    class Plugin:
        @hookimpl
        def ikigai_provider_serializers(self):
            raise ImportError("acme sdk missing")

    pm = get_plugin_manager(environ={})
    pm.register(Plugin(), name="acme-plugin")
    notices = Notices()
    assert {"openai", "anthropic", "google"} <= set(collect_providers(pm, notices))
    assert "failed in ikigai_provider_serializers: ImportError: acme sdk missing" in (
        [n.message for n in notices][0])


def test_system_prompt_fragments_come_from_plugins_in_call_order(isolated_home, tmp_path):
    from ikigai_core.prompt import system_prompt

    class Fragments:
        def __init__(self, *texts):
            self.texts = texts

        @hookimpl
        def ikigai_system_prompt(self, cwd, home):
            return [text.format(cwd=cwd) for text in self.texts]

    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    app.pm.register(Fragments("first in {cwd}"), name="one")
    app.pm.register(Fragments("second", "third"), name="two")
    assert system_prompt(app).endswith(f"second\n\nthird\n\nfirst in {tmp_path}")


def test_core_embeds_as_a_library_and_prints_nothing(
    approve_all, isolated_home, tmp_path, make_tool, fake_server, capfd
):
    """Discovery, a tool call and an agent turn from Python, with no CLI: nothing printed."""
    from ikigai_core.agent import Agent
    from ikigai_core.conversation import Conversation
    from ikigai_core.providers import get_provider
    from tests.support.replies import OpenAIReplies

    make_tool(isolated_home / "tools", "echo-tool")
    app = App(environ={"IKIGAI_HOME": str(isolated_home), "PATH": "/usr/bin:/bin",
                       "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url},
              cwd=tmp_path)
    registry = app.registry()
    called = app.executor.call(registry, "echo", {"a": 1})
    assert called.envelope["result"]["args"] == {"a": 1}

    replies = OpenAIReplies()
    fake_server.push(replies.reply("", [("c1", "echo", {"a": 2})], stream=True),
                     replies.reply("done", stream=True))
    texts = []
    agent = Agent(app, get_provider(app.pm, "openai"), "gpt-test", registry=registry,
                  on_text=texts.append)
    answer = agent.run(Conversation(), "echo 2")
    assert answer.text == "done" and "".join(texts) == "done"
    tool_result = json.dumps(fake_server.requests[1].json)
    assert '\\"args\\": {\\"a\\": 2}' in tool_result
    assert capfd.readouterr() == ("", "")


PLUGIN_COMMANDS = """
    import click
    from ikigai_core import hookimpl

    @click.command("hello")
    @click.argument("who", default="world")
    def hello(who):
        '''Say hello to WHO.'''
        click.echo(f"hello {who}")

    @click.group("tool")
    def clash():
        '''Would hide ikigai's own tool group.'''

    @hookimpl
    def ikigai_commands():
        return [hello, clash]
"""


def test_a_plugin_adds_a_command_and_cannot_take_a_built_in_name(site, tmp_path):
    import subprocess
    import sys

    site("ikigai-hello", "hello", PLUGIN_COMMANDS)
    root = Path(sys.modules["hello_plugin"].__file__).parent if "hello_plugin" in sys.modules \
        else Path(next(p for p in sys.path if p.endswith("site")))
    env = {"PYTHONPATH": f"{root}:{Path.cwd()}", "PATH": "/usr/bin:/bin",
           "IKIGAI_HOME": str(tmp_path / "home")}

    def ikigai(*args):
        return subprocess.run([sys.executable, "-m", "ikigai_core.cli", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=60)

    hello = ikigai("hello", "there")
    assert (hello.returncode, hello.stdout) == (0, "hello there\n")
    assert "its command 'tool' is an ikigai command already" in hello.stderr
    helped = ikigai("--help")
    assert "hello" in helped.stdout and "Say hello to WHO." in helped.stdout
    assert ikigai("tool", "list").returncode == 0
