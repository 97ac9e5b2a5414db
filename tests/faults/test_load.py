"""Load and soak through the executor: many sequential calls and 50 concurrent ones, every
result correct, no growth in open descriptors, threads or memory."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ikigai_core.config import Settings
from ikigai_core.plugins import get_plugin_manager
from tests.faults.support import as_tool, zombie_children
from tests.support.calls import call_tool
from tests.support.procs import open_fd_count
from tests.support.tools import write_shell_tool

SETTINGS = Settings(tool_timeout=30)


def vm(field: str) -> int:
    """A figure from /proc/self/status (kB for memory, a count for Threads)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(field)


def resources() -> dict[str, int]:
    return {"fds": open_fd_count(), "threads": threading.active_count(),
            "os_threads": vm("Threads"), "rss_kib": vm("VmRSS")}


@pytest.fixture
def echo(tmp_path):
    """The registry and plugin manager for one tool that sends its arguments back (``cat``)."""
    tool = as_tool(write_shell_tool(tmp_path, "echo-tool", "exec cat"),
                   {"type": "object", "required": ["i"], "properties": {"i": {"type": "integer"}}})
    return get_plugin_manager(load_entry_points=False), {"echo": tool}


def call(echo, i: int) -> dict:
    pm, registry = echo
    arguments = {"i": i, "text": f"call {i} " * (i % 50)}
    envelope = call_tool(pm, registry, "echo", arguments, settings=SETTINGS)
    assert envelope == {"tool_success": True, "result": arguments}
    return envelope


def soak(echo, calls: int) -> None:
    for i in range(20):  # warm up: imports, validator, envelope hook
        call(echo, i)
    before = resources()
    for i in range(calls):
        call(echo, i)
    after = resources()
    print(f"\n[figure] {calls} sequential calls: before {before}, after {after}")
    assert after["fds"] == before["fds"]
    assert after["threads"] == before["threads"] and after["os_threads"] == before["os_threads"]
    assert after["rss_kib"] - before["rss_kib"] < 8 * 1024, "memory grew by more than 8 MiB"
    assert zombie_children() == []


def test_sequential_calls_leak_nothing(echo):
    soak(echo, 300)


@pytest.mark.slow
def test_2000_sequential_calls_leak_nothing(echo):
    soak(echo, 2000)


def test_50_concurrent_calls_are_all_correct_and_leak_nothing(echo):
    call(echo, 0)
    before = resources()
    with ThreadPoolExecutor(50) as pool:
        envelopes = list(pool.map(lambda i: call(echo, i), range(50)))
    assert [e["result"]["i"] for e in envelopes] == list(range(50))
    after = resources()
    print(f"\n[figure] 50 concurrent calls: before {before}, after {after}")
    assert after["fds"] == before["fds"] and after["threads"] == before["threads"]
    assert zombie_children() == []
