"""Fixtures shared by every test folder (core, providers, example plugin)."""

from __future__ import annotations

import signal

import pytest

from tests.support.fakeserver import FakeServer
from tests.support.tools import write_shell_tool, write_tool


def pytest_configure(config):
    """Ctrl-C works in the tests and in every program they start, even when pytest was
    started with SIGINT ignored (``pytest &`` from a script): a program inherits an ignored
    signal, so ikigai would never see the Ctrl-C a test sends it."""
    for sig, handler in ((signal.SIGINT, signal.default_int_handler),
                         (signal.SIGQUIT, signal.SIG_DFL)):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, handler)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """Every test gets its own ``$IKIGAI_HOME`` and no ikigai setting from the caller's shell."""
    home = tmp_path_factory.mktemp("ikigai-home")
    for var in list(__import__("os").environ):
        if var.startswith("IKIGAI_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("IKIGAI_HOME", str(home))
    return home


@pytest.fixture
def approve_all(isolated_home):
    """The user allows every tool call (a rule for ``*``), for tests about something else."""
    (isolated_home / "permissions.json").write_text(
        '{"rules": [{"id": 1, "tool": "*", "decision": "allow"}]}')


@pytest.fixture
def make_tool():
    """``make_tool(dir, "echo-tool", schema=..., body=...)`` writes a real executable tool."""
    return write_tool


@pytest.fixture
def make_shell_tool():
    """``make_shell_tool(dir, "x-tool", script)`` writes a real ``/bin/sh`` tool."""
    return write_shell_tool


@pytest.fixture
def fake_server():
    """A real HTTP server on 127.0.0.1 replaying scripted replies (tests/support/fakeserver.py)."""
    with FakeServer() as server:
        yield server
