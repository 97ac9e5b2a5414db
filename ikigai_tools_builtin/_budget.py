"""The output budget (decision 10): keep a tool's printed JSON under ``IKIGAI_MAX_OUTPUT_BYTES``.

A tool that reads a stream feeds it to a :class:`Capture`, which keeps at most the first and
the last ``limit`` bytes; :func:`fit` then cuts the text of a result to head + marker + tail
so that the printed JSON fits, and adds ``"truncated": {"total_bytes": N, "kept_bytes": M}``.
A big text can be carried already escaped (:class:`Escaped`): :func:`dump` copies it as is.
"""

from __future__ import annotations

import os
from bisect import bisect_right, insort

from ikigai_toolkit.jsonio import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections import deque
    from collections.abc import Callable

ENV_VAR = "IKIGAI_MAX_OUTPUT_BYTES"
CONTROL = bytes([*range(1, 9), 11, 12, *range(14, 32)])  # escaped as dump escapes them
SHORT = {b"\b": b"\\b", b"\f": b"\\f"}


class Escaped:
    """A text already in the form :func:`dump` gives it inside a JSON string: UTF-8 bytes, in
    pieces that :func:`dump` joins once.

    Big search results are built this way, a file at a time, instead of as one ``str`` that
    ``json`` then copies and escapes, and that UTF-8 encoding copies again.
    """

    __slots__ = ("parts", "size")

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.size = sum(map(len, parts))

    def text(self) -> str:
        """The text itself."""
        return loads(b'"' + b"".join(self.parts) + b'"')


def escaped(data: bytes) -> bytes:
    """UTF-8 ``data`` as :func:`dump` writes it inside a JSON string, except NUL bytes and
    newlines, left for the caller (it uses them as separators); a sequence that is not UTF-8
    becomes U+FFFD, as ``decode`` with ``"replace"`` does."""
    if not data.isascii():
        try:
            data.decode("utf-8")  # fast; encoding the decoded text again is not
        except UnicodeDecodeError:
            data = data.decode("utf-8", "replace").encode()
    data = data.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    data = data.replace(b"\t", b"\\t").replace(b"\r", b"\\r")
    if len(data.translate(None, CONTROL)) < len(data):  # rare: a search is slower than this
        import re

        data = re.sub(b"[%s]" % re.escape(CONTROL), _control, data)
    return data


def _control(found: re.Match[bytes]) -> bytes:
    """The JSON escape of a control character."""
    return SHORT.get(found[0], b"\\u%04x" % found[0][0])


def dump(obj: object) -> bytes:
    """Serialise ``obj`` as compact UTF-8 JSON; lone surrogates become U+FFFD, never a crash.

    A dict's :class:`Escaped` values are copied in as they are.
    """
    if isinstance(obj, dict) and any(isinstance(value, Escaped) for value in obj.values()):
        pieces = [b"{"]
        for key, value in obj.items():
            pieces += (b", " if len(pieces) > 1 else b"", dump(key), b": ")
            pieces += (b'"', *value.parts, b'"') if isinstance(value, Escaped) else (dump(value),)
        return b"".join((*pieces, b"}"))  # one copy of the big text
    text = dumps(obj)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def budget() -> int | None:
    """The byte budget from ``IKIGAI_MAX_OUTPUT_BYTES``, or ``None`` when unset or not positive."""
    value = os.environ.get(ENV_VAR, "").strip()
    if not value.isdigit() or int(value) <= 0:
        return None
    return int(value)


class Capture:
    """The bytes of a stream, kept within ``limit``: the first and the last ``limit`` bytes.

    With ``limit=None`` everything is kept. ``total`` counts every byte fed.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()

    def feed(self, data: bytes) -> None:
        """Add ``data`` to the stream."""
        self.total += len(data)
        if self.limit is None or len(self._head) + len(data) <= self.limit:
            self._head += data
            return
        room = self.limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data[-self.limit:]
        if len(self._tail) > 2 * self.limit:
            del self._tail[: len(self._tail) - self.limit]

    @property
    def gap(self) -> bool:
        """True when bytes between head and tail were dropped."""
        return self.total > len(self._head) + len(self._tail)

    def head(self) -> bytes:
        """The kept start of the stream (the whole stream when nothing was dropped)."""
        return bytes(self._head) if self.gap else bytes(self._head + self._tail)

    def tail(self) -> bytes:
        """The kept end of the stream, empty when nothing was dropped."""
        return bytes(self._tail[-(self.limit or 0):]) if self.gap else b""


class Text:
    """The text of a result that may already have lost its middle while it was read.

    ``head`` is the whole text unless ``tail`` is set; ``total_bytes`` is the size of the whole
    text; ``resume(kept_head)`` may add a hint to the marker (file_read: where to continue).
    """

    def __init__(
        self,
        head: str,
        tail: str = "",
        total_bytes: int | None = None,
        resume: Callable[[str], str] | None = None,
    ) -> None:
        self.head = head
        self.tail = tail
        if total_bytes is None:
            total_bytes = len(head.encode("utf-8", "replace"))
        self.total_bytes = total_bytes
        self.resume = resume

    @classmethod
    def from_capture(cls, capture: Capture) -> Text:
        """Decode a :class:`Capture` (invalid UTF-8 becomes U+FFFD)."""
        return cls(
            capture.head().decode("utf-8", "replace"),
            capture.tail().decode("utf-8", "replace"),
            capture.total,
        )

    def whole(self) -> str | None:
        """The full text when nothing was dropped while reading, else ``None``."""
        return None if self.tail else self.head


def _cost(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string."""
    return len(dump(text)) - 2


def _prefix(text: str, room: int) -> str:
    """The longest prefix of ``text`` whose JSON form fits in ``room`` bytes."""
    low, high = 0, min(len(text), max(room, 0))
    if _cost(text[:high]) <= room:
        return text[:high]
    while low < high:
        mid = (low + high + 1) // 2
        if _cost(text[:mid]) <= room:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def _suffix(text: str, room: int) -> str:
    """The longest suffix of ``text`` whose JSON form fits in ``room`` bytes."""
    end = text[-max(room, 0):] if room > 0 else ""  # every character costs at least a byte
    return _prefix(end[::-1], room)[::-1]


def _marker(omitted: int, hint: str, head: str, tail: str) -> str:
    """The marker line put between the kept head and tail."""
    line = f"[... truncated: {omitted} bytes omitted{hint} ...]"
    before = "" if not head or head.endswith("\n") else "\n"
    after = "" if not tail or tail.startswith("\n") else "\n"
    return before + line + after


def fit(result: dict, limit: int | None, field: str = "output") -> dict:
    """Return ``result`` as printable JSON-ready dict within ``limit`` bytes.

    ``result[field]`` may be a ``str``, a :class:`Text` or :class:`Escaped`; without a limit,
    or when everything fits, the text is returned whole.
    """
    value = result.get(field)
    if isinstance(value, Escaped):
        if limit is None or len(dump({**result, field: ""})) + value.size <= limit:
            return result
        value = value.text()
        result = {**result, field: value}
    if not isinstance(value, Text):
        if not isinstance(value, str) or limit is None:
            return result
        value = Text(value)
    whole = value.whole()
    if whole is not None:
        candidate = {**result, field: whole}
        if limit is None or (len(whole) <= limit and len(dump(candidate)) <= limit):
            return candidate
    return _truncate(result, field, value, limit or 0)


def _truncate(result: dict, field: str, value: Text, limit: int) -> dict:
    """Cut ``value`` to head + marker + tail so the printed ``result`` fits in ``limit``."""
    big = 10 * value.total_bytes + 10
    skeleton = {**result, field: "", "truncated": {"total_bytes": big, "kept_bytes": big}}
    hint = value.resume(value.head) if value.resume else ""
    reserve = len(dump(skeleton)) + _cost(_marker(big, _widen(hint, big), "x", "x"))
    room = limit - reserve
    best = None
    for _ in range(4):  # the reserve is an estimate: grow or shrink ``room`` to use the budget
        out = _cut(result, field, value, room)
        size = len(dump(out))
        if size <= limit and (best is None or _kept(out) > _kept(best)):
            best = out
        if size == limit or room <= 0:
            break
        room += limit - size
    return best or out


def _cut(result: dict, field: str, value: Text, room: int) -> dict:
    """``result`` with head + marker + tail of ``value`` taking about ``room`` bytes of JSON."""
    head = _snap_head(_prefix(value.head, room // 2))
    tail = _snap_tail(_suffix(value.tail or value.head, room - room // 2))
    kept = len(head.encode("utf-8", "replace")) + len(tail.encode("utf-8", "replace"))
    hint = value.resume(head) if value.resume else ""
    text = head + _marker(value.total_bytes - kept, hint, head, tail) + tail
    return {
        **result,
        field: text,
        "truncated": {"total_bytes": value.total_bytes, "kept_bytes": kept},
    }


def _kept(result: dict) -> int:
    """The ``kept_bytes`` of a truncated result."""
    return result["truncated"]["kept_bytes"]


def _snap_head(head: str) -> str:
    """``head`` cut after its last newline, unless that loses more than a quarter of it."""
    end = head.rfind("\n") + 1
    return head[:end] if end >= len(head) * 3 // 4 else head


def _snap_tail(tail: str) -> str:
    """``tail`` cut after its first newline, unless that loses more than a quarter of it."""
    start = tail.find("\n") + 1
    return tail[start:] if 0 < start <= len(tail) // 4 else tail


def _widen(hint: str, big: int) -> str:
    """``hint`` with every number replaced by ``big``: an upper bound on its size."""
    import re

    return re.sub(r"\d+", str(big), hint)


class Lines:
    """Result lines kept within ``limit`` bytes: the first lines up to ``limit`` bytes, then
    only the last ones (at least ``limit`` bytes of them); ``count`` and ``total`` count all.

    ``full`` says the head is spent: a caller that can find the tail another way stops feeding.
    """

    def __init__(self, limit: int) -> None:
        from collections import deque  # here: not on every tool's start

        self.limit = limit
        self.head: list[str] = []
        self.tail: deque[str] = deque()
        self.count = self.total = self.head_bytes = self.tail_bytes = 0
        self.gap = False

    def add(self, line: str) -> None:
        """Add one line (without its newline)."""
        size = len(line.encode("utf-8", "surrogatepass")) + 1
        self.count += 1
        self.total += size
        if self.head_bytes < self.limit:
            self.head.append(line)
            self.head_bytes += size
            return
        self.tail.append(line)
        self.tail_bytes += size
        while self.tail_bytes - len(self.tail[0]) - 1 > self.limit:
            self.tail_bytes -= len(self.tail.popleft().encode("utf-8", "surrogatepass")) + 1
            self.gap = True

    @property
    def full(self) -> bool:
        """True when the head holds ``limit`` bytes."""
        return self.head_bytes >= self.limit

    def last(self) -> list[str]:
        """The kept lines at the end: everything unless lines were dropped."""
        return list(self.tail) if self.gap else self.head + list(self.tail)


def joined(front: Lines, back: list[Lines], skipped: bool) -> Text:
    """The text of ``front``'s lines then ``back``'s (earliest first); ``skipped`` says lines
    between them were never looked at, so ``total_bytes`` is then a lower bound."""
    ends = [line for part in back for line in part.last()]
    total = front.total + sum(part.total for part in back) - 1
    if not (skipped or front.gap or any(part.gap for part in back)):
        return Text("\n".join(front.head + list(front.tail) + ends), total_bytes=max(total, 0))
    if not back:
        ends = list(front.tail)
    return Text("\n".join(front.head) + "\n", "\n".join(ends), total)


class Ends:
    """The start and the end of a sorted list of lines that arrive in any order.

    Kept: the smallest lines, at least ``limit`` bytes of them, and the largest, as much: what
    :func:`fit` can show of the sorted list. ``count`` and ``total`` (bytes, a newline after
    each line) count every line added. Lines must be distinct. ``append`` adds a line, as a
    list's does: a list stands in where no limit is set.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.low: list[str] = []  # the smallest lines, sorted
        self.high: list[str] = []  # the largest lines, sorted
        self.low_bytes = self.high_bytes = self.count = self.total = 0

    def append(self, line: str) -> None:
        """Add one line."""
        size = _size(line)
        self.count += 1
        self.total += size
        low, high = self.low, self.high
        if self.low_bytes < self.limit or line < low[-1]:
            insort(low, line)
            self.low_bytes += size
            while self.low_bytes - _size(low[-1]) >= self.limit:
                self.low_bytes -= _size(low.pop())
        if self.high_bytes < self.limit or line > high[0]:
            insort(high, line)
            self.high_bytes += size
            while self.high_bytes - _size(high[0]) >= self.limit:
                self.high_bytes -= _size(high.pop(0))

    def kept(self) -> list[str]:
        """The lines kept, sorted, each once."""
        return self.low + (self.high[bisect_right(self.high, self.low[-1]):] if self.low else [])

    def absorb(self, lines: list[str], count: int, total: int) -> None:
        """Add what another :class:`Ends` kept (``lines``, none of them added here) of its
        ``count`` lines, ``total`` bytes."""
        for line in lines:
            self.append(line)
        self.count += count - len(lines)
        self.total += total - sum(map(_size, lines))

    def text(self) -> Text:
        """The sorted lines, joined: whole when every line is kept, else the two ends."""
        total = max(self.total - 1, 0)
        kept = self.kept()
        if len(kept) == self.count:
            return Text("\n".join(kept), total_bytes=total)
        return Text("\n".join(self.low) + "\n", "\n".join(self.high), total)


def _size(line: str) -> int:
    """Bytes ``line`` and its newline take in UTF-8, counted as :class:`Text` counts them."""
    return len(line) + 1 if line.isascii() else len(line.encode("utf-8", "replace")) + 1
