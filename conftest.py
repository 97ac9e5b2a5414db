"""Fixtures shared by every test folder (core, providers, example plugin)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

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


@pytest.fixture(scope="session")
def installed_schemas(tmp_path_factory):
    """The schema cache a user has after their first run: every installed tool's (the
    built-ins, the plugins'), from one real ``ikigai tool list`` per test process."""
    home = tmp_path_factory.mktemp("warm-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    listed = subprocess.run([str(Path(sys.executable).parent / "ikigai"), "tool", "list"],
                            env={**env, "IKIGAI_HOME": str(home)}, cwd=home,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    return (home / "cache" / "schemas.json").read_bytes()


@pytest.fixture(autouse=True)
def isolated_home(ikigai_home, monkeypatch, request):
    """Every test gets its own ``$IKIGAI_HOME`` (pytest-ikigai's ``ikigai_home``) and no
    ikigai setting from the caller's shell. The home already knows the installed tools'
    schemas, as after a first run, so each test's first ``ikigai`` does not start every
    installed tool for its schema again (about half a second of processor a test);
    ``@pytest.mark.cold_home`` for a test of a first run."""
    for var in list(os.environ):
        if var.startswith("IKIGAI_") and var != "IKIGAI_HOME":
            monkeypatch.delenv(var)
    if request.node.get_closest_marker("cold_home") is None:
        cache = Path(ikigai_home) / "cache"
        cache.mkdir(mode=0o700)
        fd = os.open(cache / "schemas.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(request.getfixturevalue("installed_schemas"))
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
