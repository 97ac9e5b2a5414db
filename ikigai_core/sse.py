"""Stream framings: bytes to lines to events, as server-sent events or as NDJSON.

Server-sent events follow the WHATWG parsing rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation);
newline-delimited JSON (https://github.com/ndjson/ndjson-spec) makes each line one
event. Providers receive :class:`ServerSentEvent` objects and never see the wire.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ikigai_core.record import Record

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
"""SSE ends lines only with CRLF, CR or LF (never U+2028 and friends, unlike str.splitlines);
in UTF-8 those bytes never occur inside a character, so lines are cut before decoding."""

MAX_EVENT_BYTES = 8 * 1024 * 1024
"""The longest stream line (in bytes), and the most data one event may gather (in
characters), ikigai reads: far above any model's event, far below what exhausts memory."""


class EventTooLarge(ValueError):
    """A stream line or event over :data:`MAX_EVENT_BYTES`."""

    def __init__(self) -> None:
        super().__init__(f"a stream line or event over {MAX_EVENT_BYTES // 2**20} MiB, "
                         "the most ikigai reads")


class ServerSentEvent(Record):
    """One dispatched event: its type, its data (lines joined by ``\\n``) and the last event id."""

    data: str
    event: str = "message"
    id: str | None = None


def iter_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Cut a byte stream into lines (without their line breaks) and decode each as UTF-8.

    A leading byte-order mark is dropped and invalid UTF-8 is replaced, as the standard
    says. A last line without a line break is yielded too (:func:`iter_sse` then drops
    the unfinished event it belongs to). Each chunk is searched once, so a long line
    costs time in proportion to its length; one over :data:`MAX_EVENT_BYTES` raises
    :class:`EventTooLarge` as soon as it gets there.
    """
    pending: list[bytes] = []  # the pieces of the line not yet ended
    size = 0
    after_cr = False
    first = True
    for chunk in chunks:
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split across two chunks
        if not chunk:
            continue
        after_cr = chunk.endswith(b"\r")
        *ended, rest = _LINE_BREAK.split(chunk)  # one C call a chunk, not one a line
        for line in ended:
            if pending:
                pending.append(line)
                line = b"".join(pending)
                pending = []
            if len(line) > MAX_EVENT_BYTES:
                raise EventTooLarge
            text = line.decode("utf-8", errors="replace")
            if first:
                text, first = text.removeprefix("\ufeff"), False
            yield text
        size = (size if pending else 0) + len(rest)
        if size > MAX_EVENT_BYTES:
            raise EventTooLarge
        pending.append(rest)
    last = b"".join(pending).decode("utf-8", errors="replace")
    if first:
        last = last.removeprefix("\ufeff")
    if last:
        yield last


def iter_sse(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Parse lines into events: a blank line dispatches the event gathered so far.

    Each item is one line; one trailing line break on it is ignored. Comments (``:``)
    and unknown fields are skipped, ``retry`` is ignored, an event with no ``data``
    is not dispatched, and an event still unfinished when the lines end is dropped.
    Data over :data:`MAX_EVENT_BYTES` characters raises :class:`EventTooLarge`.
    """
    data: list[str] = []
    size = 0
    event = ""
    last_id: str | None = None
    for raw in lines:
        line = raw.removesuffix("\n").removesuffix("\r")
        if not line:
            if data:
                yield ServerSentEvent(data="\n".join(data), event=event or "message", id=last_id)
            data, size, event = [], 0, ""
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            size += len(value) + 1
            if size > MAX_EVENT_BYTES:
                raise EventTooLarge
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value


def iter_ndjson(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """One event per line that is not blank (newline-delimited JSON), the line as its data."""
    for line in lines:
        if line.strip():
            yield ServerSentEvent(data=line)
