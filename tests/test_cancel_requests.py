"""A cancelled prompt stops its provider request at once: ``kill``, a budget's seconds,
the root's cancel and Ctrl-C in chat hang up on a model that holds its answer (before its
headers, or mid-stream), instead of waiting for it or for the read timeout. A real local
server holds each answer for 60 s and sees the connection close; no thread is left on a
socket, and the agent ends killed or over budget, never with a traceback."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ikigai_core import App, Session
from ikigai_core.orchestration import Supervisor
from pytest_ikigai.fakeserver import RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES
from tests.support.agents import AgentModel, scripted_models
from tests.support.vt import Screen as VirtualScreen

HOLD = 60.0
"""Seconds the model holds its answer: far beyond every bound asserted here."""
PROMPT = 3.0
"""Seconds a cancel may take to end the request (a loaded machine's margin; it takes ms)."""
TIMEOUT = 30
IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def held(where: str):
    """A turn whose answer the server holds: ``headers`` (nothing sent) or ``stream`` (the
    headers and a first piece of text, then silence)."""

    def turn(request: RecordedRequest) -> Reply:
        stream = request.json.get("stream") is True
        if where == "headers" or not stream:
            return replace(REPLIES["openai"].reply("late", stream=stream), wait=HOLD)
        reply = REPLIES["openai"].reply("a first piece", stream=True)
        assert reply.chunks is not None
        return replace(reply, chunks=reply.chunks[:1], stall=HOLD, drop=True)

    return turn


@pytest.fixture
def model():
    with scripted_models() as make:
        yield make


def _root(model: AgentModel, tmp_path: Path) -> Supervisor:
    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    return Supervisor(Session.open(app, "openai", log=False))


def _asked(model: AgentModel, prompt: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while prompt not in model.seen:
        assert time.monotonic() < deadline, f"{prompt!r} never reached the model"
        time.sleep(0.01)
    time.sleep(0.2)  # the request is in flight, its answer held


def _hung_up(model: AgentModel, count: int = 1) -> None:
    deadline = time.monotonic() + PROMPT
    while len(model.server.hung_up) < count:
        assert time.monotonic() < deadline, "the server never saw the connection close"
        time.sleep(0.01)


def _no_thread_on_a_socket() -> None:
    deadline = time.monotonic() + PROMPT
    while any(t.name.startswith("ikigai-agent-") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "an agent's thread is still blocked"
        time.sleep(0.01)


@pytest.mark.parametrize("where", ["headers", "stream"])
def test_kill_hangs_up_on_a_request_in_flight(model, tmp_path, where):
    from tests.support.procs import open_fd_count

    m = model({"slow": [held(where)]})
    sup = _root(m, tmp_path)
    sup.root.live.warm().join(TIMEOUT)  # the client made: what the request opens is new
    fds = open_fd_count()
    kid = sup.fork("slow")
    _asked(m, "slow")

    started = time.monotonic()
    info = sup.kill(kid)

    assert time.monotonic() - started < PROMPT
    assert info.status == "killed" and info.usage.total == 0
    [result] = sup.wait([kid], 0)
    assert (result.status, result.error) == ("killed", "killed by root")
    _hung_up(m)
    _no_thread_on_a_socket()
    deadline = time.monotonic() + PROMPT
    while open_fd_count() > fds:  # the connection is closed, not left to the collector
        assert time.monotonic() < deadline, f"{open_fd_count() - fds} fds left open"
        time.sleep(0.01)
    sup.close()


def test_a_budgets_seconds_end_a_request_in_flight(model, tmp_path):
    m = model({"slow": [held("headers")]})
    sup = _root(m, tmp_path)
    started = time.monotonic()
    [result] = sup.wait([sup.fork("slow", budget={"seconds": 1})], TIMEOUT)
    assert time.monotonic() - started < 1 + PROMPT
    assert result.status == "budget_exceeded"
    assert result.error.startswith("BUDGET_EXCEEDED: the seconds limit of 1.0 s is reached")
    _hung_up(m)
    sup.close()


def test_cancelling_the_root_hangs_up_its_own_request_and_its_childrens(model, tmp_path):
    from ikigai_core.agent import Cancelled

    m = model({"root": [held("stream")], "kid": [held("headers")]})
    sup = _root(m, tmp_path)
    errors: list[BaseException] = []

    def send() -> None:
        try:
            sup.root.live.send("root")
        except BaseException as exc:  # noqa: BLE001 (the test looks at it)
            errors.append(exc)

    thread = threading.Thread(target=send)
    thread.start()
    _asked(m, "root")
    kid = sup.fork("kid")
    _asked(m, "kid")

    started = time.monotonic()
    sup.root.live.cancel()
    thread.join(PROMPT)

    assert not thread.is_alive(), "the root's turn still waits for its model"
    assert [type(e) for e in errors] == [Cancelled]
    assert sup.wait([kid], PROMPT)[0].status == "killed"
    assert time.monotonic() - started < PROMPT
    _hung_up(m, 2)
    sup.close()


def _chat(model: AgentModel, home: Path, cwd: Path) -> VirtualScreen:
    env = {**os.environ, **model.environ, "IKIGAI_HOME": str(home), "TERM": "xterm-256color"}
    return VirtualScreen([IKIGAI, "chat", "--yes"], env=env, cwd=cwd, columns=110, lines=40)


def test_ctrl_c_in_chat_hangs_up_on_the_turns_model_and_its_childrens(model, isolated_home,
                                                                       tmp_path):
    m = model({"delegate": [[("agent_fork", {"prompt": "kid"})],
                            [("agent_wait", {"timeout": 60})], "never"],
               "kid": [held("stream")],
               "think": [held("headers")]})
    with _chat(m, isolated_home, tmp_path) as chat:
        chat.wait_for("tokens:")
        chat.write(b"delegate\r")
        chat.wait_for("agent_wait")
        _asked(m, "kid")
        chat.write(b"\x03")
        chat.wait_for("ikigai: agent agent (agent-1) killed: cancelled with its parent's turn",
                      timeout=PROMPT)
        _hung_up(m)
        chat.write(b"think\r")
        _asked(m, "think")
        chat.write(b"\x03")
        chat.wait_for(re.compile(r"^> think\n+ikigai: interrupted$", re.M).search,
                      timeout=PROMPT)
        _hung_up(m, 2)
        assert "Traceback" not in chat.text  # agent_wait, killed mid-call, hung up on the API
        chat.write(b"/agents\r")
        chat.wait_for(re.compile(r"^  agent-1  agent  killed  0 tokens$", re.M).search)
    from ikigai_core.sessions import DB_NAME
    from ikigai_core.sqlite_store import SqliteStore

    kids = [row for row in SqliteStore(isolated_home / DB_NAME).sessions() if row.parent]
    assert [kid.status for kid in kids] == ["killed"]  # recorded as the chat showed it


def test_leaving_a_chat_hangs_up_on_its_childs_request_and_records_it_interrupted(
        model, isolated_home, tmp_path):
    import subprocess

    from ikigai_core.sessions import DB_NAME
    from ikigai_core.sqlite_store import SqliteStore

    m = model({"kid": [held("headers")]})
    chat = subprocess.Popen([IKIGAI, "chat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, **m.environ, "IKIGAI_HOME": str(isolated_home)})
    assert chat.stdin is not None
    chat.stdin.write("/fork kid\n")
    chat.stdin.flush()
    _asked(m, "kid")
    started = time.monotonic()
    _, err = chat.communicate(timeout=TIMEOUT)  # stdin closed: Ctrl-D
    assert chat.returncode == 0, err
    assert time.monotonic() - started < PROMPT  # not the 10 s join, nor the 60 s answer
    _hung_up(m)
    kids = [row for row in SqliteStore(isolated_home / DB_NAME).sessions() if row.parent]
    assert [kid.status for kid in kids] == ["interrupted"]
