"""Stream framing under a hostile server (issue 21 item 15): lines are assembled in
linear time, and one line or event over :data:`~ikigai_core.sse.MAX_EVENT_BYTES` is a
one-line provider error, found before the rest of it is read."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ikigai_core.sse import MAX_EVENT_BYTES, EventTooLarge, ServerSentEvent, iter_lines, iter_sse
from tests.support.fakeserver import sse_reply

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
CHUNK = 8192


def seconds_to_split(size: int) -> float:
    """The best of three times to cut one ``size``-byte line, sent in 8 KiB chunks."""
    data = b"data: " + b"x" * size + b"\n\n"
    chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        assert len(next(iter_lines(chunks))) == size + 6
        best = min(best, time.perf_counter() - started)
    return best


def test_a_long_line_in_small_chunks_takes_linear_time():
    """Four times the bytes may take four times as long, not sixteen (before: 0.4 s for
    1 MiB, 10 s for 4 MiB); the margin is wide for a loaded machine."""
    small, large = seconds_to_split(512 * 1024), seconds_to_split(2048 * 1024)
    assert large < 8 * small + 0.05, (small, large)


def test_a_line_over_the_cap_fails_before_the_rest_is_read():
    read = []

    def endless():
        while True:
            read.append(CHUNK)
            yield b"x" * CHUNK

    with pytest.raises(EventTooLarge, match="over 8 MiB"):
        list(iter_lines(endless()))
    assert sum(read) <= MAX_EVENT_BYTES + CHUNK
    with pytest.raises(EventTooLarge):
        list(iter_lines([b"x" * (MAX_EVENT_BYTES + 1) + b"\n"]))


def test_an_event_of_many_lines_over_the_cap_is_refused():
    line = "data: " + "y" * (1024 * 1024)
    events = iter_sse([line] * 8 + ["data: the ninth MiB", ""])
    with pytest.raises(EventTooLarge, match="over 8 MiB"):
        next(events)
    assert list(iter_sse([line] * 7 + [""])) == [ServerSentEvent("\n".join([line[6:]] * 7))]


def test_an_event_over_the_cap_is_one_provider_error_line(fake_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-sse-limit-0123456789")
    huge = b'data: {"choices": [{"delta": {"content": "' + b"z" * MAX_EVENT_BYTES + b'"}}]}\n\n'
    fake_server.push(sse_reply([huge]))
    ran = subprocess.run([IKIGAI, "ask", "--provider", "openai", "hi"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (1, "")
    assert ran.stderr == (
        "ikigai: Provider 'openai' sent a response ikigai cannot read (EventTooLarge: a "
        "stream line or event over 8 MiB, the most ikigai reads)\n")
