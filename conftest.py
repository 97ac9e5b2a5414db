"""Fixtures shared by every test folder (core, providers, example plugin)."""

from __future__ import annotations

import os
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
def isolated_home(ikigai_home, monkeypatch):
    """Every test gets its own ``$IKIGAI_HOME`` (pytest-ikigai's ``ikigai_home``) and no
    ikigai setting from the caller's shell."""
    for var in list(os.environ):
        if var.startswith("IKIGAI_") and var != "IKIGAI_HOME":
            monkeypatch.delenv(var)
    return ikigai_home


@pytest.fixture
def approve_all(ikigai_approve_all):
    """The user allows every tool call (pytest-ikigai's rule for ``*``), for tests about
    something else."""


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
