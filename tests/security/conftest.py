"""Fixtures for the security suite: ikigai's own files damaged or exposed, a disk that is full."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.faults.support import ikigai
from tests.faults.test_security import llm
from tests.support import mounts
from tests.support.replies import REPLIES

REPLY = REPLIES["openai"]


@pytest.fixture
def tiny_disk(tmp_path):
    """A 256 KiB tmpfs (its root is 1777 like every tmpfs: use a folder inside it)."""
    with mounts.tiny_fs(tmp_path / "tiny", "256k") as mountpoint:
        yield mountpoint


@pytest.fixture
def tiny_home(tiny_disk, monkeypatch):
    """``$IKIGAI_HOME`` (user-only) on :func:`tiny_disk`; fill it with ``mounts.fill``."""
    home = tiny_disk / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("IKIGAI_HOME", str(home))
    return home


@pytest.fixture
def model_calls(fake_server, tmp_path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``model_calls(call, ...)``: ``ikigai ask --no-log`` (a real process, in ``cwd``)
    where the model makes the ``(id, tool, arguments)`` calls in one turn, then says done;
    the results it got are in ``fake_server.requests[1]``."""

    def ask(*calls: tuple[str, str, Any], env: Mapping[str, str] | None = None,
            args: tuple[str, ...] = (), cwd: Path = tmp_path,
            prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        fake_server.push(REPLY.reply(calls=calls), REPLY.reply("Done."))
        return ikigai("ask", "--provider", "openai", "--no-stream", "--no-log", *args, "go",
                      cwd=cwd, env={**llm(fake_server), **(env or {})}, prefix=prefix)

    return ask


def touch(marker: Path) -> tuple[str, str, dict[str, str]]:
    """The model's ``bash`` call that leaves ``marker`` when it runs."""
    return ("c1", "bash", {"command": f"touch {marker}"})
