"""A long-lived runner's budgets (issue 22): its process starts on a budget of its own, a
timed-out call gets a moment to stop, and Ctrl-C cancels a runner call at once."""

from __future__ import annotations

import os
import signal
import threading
import time
from types import SimpleNamespace

import pytest

from ikigai_core.agent import Agent
from ikigai_core.app import App
from ikigai_core.config import Settings
from ikigai_core.conversation import ToolCall
from ikigai_core.plugins import get_plugin_manager
from tests.support.calls import executor
from tests.test_lifecycle import SlowRunner, runner_tool


@pytest.fixture
def pm():
    return get_plugin_manager(load_entry_points=False, environ={})


class StartingRunner(SlowRunner):
    """A runner whose process takes ``start`` seconds to get ready (or fails to)."""

    def __init__(self, start: float = 0.0, broken: Exception | None = None, **kwargs):
        super().__init__(**kwargs)
        self.start, self.broken = start, broken

    def ready(self, cancelled: threading.Event) -> None:
        time.sleep(self.start)
        if self.broken is not None:
            raise self.broken


class StoppingRunner(SlowRunner):
    """A runner that, told to stop, takes a moment to tell its process (an MCP cancel)."""

    stopped = False

    def call(self, tool, arguments, *, timeout, cancelled):
        cancelled.wait(30)
        time.sleep(0.3)
        self.stopped = True
        return super().call(tool, arguments, timeout=timeout, cancelled=cancelled)


def test_a_runners_start_is_not_charged_to_the_call(pm):
    run = executor(pm, settings=Settings(tool_timeout=0.5))
    runner = StartingRunner(start=1.0, delay=0.2)
    assert run.call(runner_tool(runner), "live", {"text": "a"}).envelope == {
        "tool_success": True, "result": {"echo": {"text": "a"}}}

    broken = StartingRunner(broken=ConnectionError("it did not start"))
    failed = run.call(runner_tool(broken), "live", {}).outcome
    assert failed.error_code == "TOOL_CRASHED" and "it did not start" in failed.error
    assert broken.calls == []


def test_a_timed_out_runner_stops_its_call_before_the_executor_returns(pm):
    runner = StoppingRunner()
    outcome = executor(pm, settings=Settings(tool_timeout=0.3)).call(
        runner_tool(runner), "live", {}).outcome
    assert outcome.error_code == "TOOL_TIMEOUT"
    assert runner.stopped


def test_ctrl_c_cancels_a_runner_call_at_once(approve_all, tmp_path):
    runner = SlowRunner(delay=60)
    agent = Agent(app=App(cwd=tmp_path), model="m", registry=runner_tool(runner),
                  provider=SimpleNamespace(prepare_arguments=lambda tool, arguments: arguments))

    sent: list[float] = []

    def interrupt() -> None:  # once the call is under way
        deadline = time.monotonic() + 15
        while runner.cancelled is None and time.monotonic() < deadline:
            time.sleep(0.02)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        agent.boundary.run([ToolCall("c1", "live", {})], agent.registry)
    assert time.monotonic() - sent[0] < 15  # a quiet run: well under 1 s; uncancelled: 60 s
    assert runner.cancelled is not None and runner.cancelled.is_set()
