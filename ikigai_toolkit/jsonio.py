"""JSON in and out without ``import json`` on the way: the tools' and the core's cache files'.

Every tool call starts a tool process, and ``import json`` is a large part of a tool's start:
it imports ``re``, which imports ``enum``. The C scanner and encoder that ``json`` runs on
(CPython's ``_json``) load almost for free, so :func:`loads` and :func:`dumps` call
them directly, set up as ``json.loads`` and ``json.dumps(obj, ensure_ascii=False,
allow_nan=False, separators=(", ", ": "))`` set them up: the same values, the same text.
Whatever the fast path does not take (an error to report, another encoding, a Python without
``_json``, or one whose private signatures changed) goes to ``json`` itself. The core reads
its cache files with :func:`loads` too (figures: the start-up ledger in docs/decisions.md),
which is why this lives here: the tools cannot import the core, whose ``__init__`` imports
pluggy, and the core imports nothing private of the tools.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

SPACE = " \t\n\r"  # JSON's whitespace


class _Decoding:
    """The settings the C scanner reads, as ``json.JSONDecoder()`` has them."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


def _unencodable(obj: object) -> object:
    """``json.JSONEncoder.default``: nothing else is serialisable."""
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_scan: Callable[[str, int], tuple[Any, int]] | None
_encode: Callable[[object, int], list[str]] | None
_encode_canonical: Callable[[object, int], list[str]] | None
try:  # CPython's private codec: any failure to set it up (not CPython, a new signature)
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner

    _scan = make_scanner(_Decoding())  # type: ignore[arg-type]  # any object with its fields
    _encode = make_encoder({}, _unencodable, encode_basestring, None, ": ", ", ",
                           False, False, False)
    _encode_canonical = make_encoder({}, repr, encode_basestring_ascii, None, ": ", ", ",
                                     True, False, True)
except Exception:  # ... leaves the work to json: slower, never a crash at import
    _scan = _encode = _encode_canonical = None


def loads(data: bytes) -> Any:
    """``json.loads(data)``: the same value, or the same error."""
    if _scan is not None:
        try:
            text = data.decode()
            value, end = _scan(text, len(text) - len(text.lstrip(SPACE)))
            if not text[end:].strip(SPACE):
                return value
        except (ValueError, StopIteration, SystemError):  # json says what is wrong
            pass  # (SystemError: Python 3.11's scanner, reporting before json.decoder is loaded)
    import json

    return json.loads(data)


def dumps(obj: object) -> str:
    """``json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))``."""
    if _encode is not None:
        return "".join(_encode(obj, 0))
    import json

    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def canonical(obj: object) -> str:
    """``json.dumps(obj, sort_keys=True, default=repr)``: one text for equal values."""
    if _encode_canonical is not None:
        return "".join(_encode_canonical(obj, 0))
    import json

    return json.dumps(obj, sort_keys=True, default=repr)


def strings(value: object) -> Iterator[str]:
    """Every string in a JSON value at any depth, in order: values, not object keys."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)
