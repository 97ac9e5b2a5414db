"""A provider fits each tool object once (issue 25: 16 sub-agents' turns re-fitting the
same tools held the interpreter and stalled the parent), never serving a stale fit."""

from __future__ import annotations

import gc
import threading

from ikigai_core.providers import Provider, ToolFit
from ikigai_core.tools import Tool
from tests.support.schemas import tool


class CountingProvider(Provider):
    """Declares a tool as its name and parameters, counting the fits it makes."""

    name = "counting"

    def __init__(self) -> None:
        self.fitted: list[str] = []

    def fit_tool(self, tool: Tool) -> ToolFit:
        self.fitted.append(tool.name)
        return ToolFit(tool.name, {"name": tool.name, "parameters": dict(tool.parameters)})


OBJECT = {"type": "object", "properties": {"path": {"type": "string"}}}


def test_each_tool_is_fitted_once_however_many_requests_and_threads_send_it() -> None:
    provider = CountingProvider()
    tools = [tool("glob", OBJECT), tool("grep", OBJECT)]
    first = provider.declarations(tools)

    def turns() -> None:
        for _ in range(50):
            assert provider.declarations(tools) == first
            assert [fit.tool for fit in provider.fit_tools(tools)] == ["glob", "grep"]

    workers = [threading.Thread(target=turns) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    assert sorted(provider.fitted) == ["glob", "grep"]


def test_a_rediscovered_tool_is_sent_with_its_new_schema() -> None:
    provider = CountingProvider()
    old = tool("glob", OBJECT)
    assert provider.declarations([old])[0]["parameters"] == OBJECT
    changed = {"type": "object", "properties": {"pattern": {"type": "string"}}}
    assert provider.declarations([tool("glob", changed)])[0]["parameters"] == changed
    assert provider.declarations([old])[0]["parameters"] == OBJECT


def test_a_fit_is_forgotten_with_its_tool() -> None:
    """A long chat that rediscovers its tools keeps no fits of the tools it dropped."""
    provider = CountingProvider()
    kept = tool("kept", OBJECT)
    provider.declarations([kept, *(tool(f"t{n}", OBJECT) for n in range(100))])
    gc.collect()
    assert len(provider._fit_cache._fits) == 1
    provider.declarations([kept])
    assert provider.fitted.count("kept") == 1
