"""Stream framings: bytes to lines to events, as server-sent events or as NDJSON.

Server-sent events follow the WHATWG parsing rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation);
newline-delimited JSON (https://github.com/ndjson/ndjson-spec) makes each line one
event. Providers receive :class:`ServerSentEvent` objects and never see the wire.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""SSE ends lines only with CRLF, CR or LF (never U+2028 and friends, unlike str.splitlines)."""


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: its type, its data (lines joined by ``\\n``) and the last event id."""

    data: str
    event: str = "message"
    id: str | None = None


def iter_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Decode a byte stream as UTF-8 and split it into lines (without their line breaks).

    A leading byte-order mark is dropped and invalid UTF-8 is replaced, as the standard
    says. A last line without a line break is yielded too (:func:`iter_sse` then drops
    the unfinished event it belongs to).
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    at_start = True
    after_cr = False
    for chunk in chunks:
        text = decoder.decode(chunk)
        if not text:
            continue
        if at_start:
            text, at_start = text.removeprefix("\ufeff"), False
        if after_cr and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF split across two chunks
        after_cr = text.endswith("\r")
        *lines, buffer = _LINE_BREAK.split(buffer + text)
        yield from lines
    buffer += decoder.decode(b"", final=True)
    if buffer:
        yield buffer


def iter_sse(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Parse lines into events: a blank line dispatches the event gathered so far.

    Each item is one line; one trailing line break on it is ignored. Comments (``:``)
    and unknown fields are skipped, ``retry`` is ignored, an event with no ``data``
    is not dispatched, and an event still unfinished when the lines end is dropped.
    """
    data: list[str] = []
    event = ""
    last_id: str | None = None
    for raw in lines:
        line = raw.removesuffix("\n").removesuffix("\r")
        if not line:
            if data:
                yield ServerSentEvent(data="\n".join(data), event=event or "message", id=last_id)
            data, event = [], ""
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
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
