"""Parse what a stranger printed: exactly one RFC 8259 JSON object in strict UTF-8."""

from __future__ import annotations

import json
import math
import re
from typing import Any, NoReturn

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate: in a Python string, a lone ``\\uD800`` escape or an undecodable byte."""


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"output contains {name}, which is not JSON")


def _not_a_number(name: str) -> NoReturn:
    raise ValueError(f"{name.lstrip('-')} is not a JSON number")


def _finite(text: str) -> float:
    """A JSON number as a float; one too large for a float (``1e999``) is refused, as it
    would become ``inf``, which strict JSON cannot print back."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is too large (beyond a 64-bit float)")
    return value


_STRICT = json.JSONDecoder(parse_constant=_not_a_number, parse_float=_finite)
"""One decoder for :func:`loads`: ``json.loads`` with hooks builds a new one every call
(a tenth of reading a streamed event)."""


def loads(text: str | bytes) -> Any:
    """``json.loads``, with JSON nested too deeply for Python a ``ValueError`` like any other,
    and ``NaN``, ``Infinity`` and numbers too large for a float refused (RFC 8259 has no
    such numbers, and whoever prints the value back could not write them)."""
    try:
        value = (_STRICT.decode(text) if isinstance(text, str)
                 else json.loads(text, parse_constant=_not_a_number, parse_float=_finite))
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    _reject_lone_surrogates(text, value, "JSON")
    return value


def loads_object(data: bytes) -> dict[str, Any]:
    """The one JSON object in ``data``; ``ValueError`` saying what is wrong otherwise.

    Rejects empty input, invalid UTF-8, NaN/Infinity and numbers that would overflow to
    infinity, anything but an object at the
    top level, and trailing data after the object (whitespace is allowed).
    """
    if not data.strip():
        raise ValueError("output is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"output is not valid UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise ValueError(f"output has data after the JSON value (char {exc.pos})") from None
        raise ValueError(f"output is not valid JSON: {exc.msg} (char {exc.pos})") from None
    except RecursionError:  # e.g. 8 KiB of "[": still a stranger's bad output, not our crash
        raise ValueError("output is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"output is a JSON {_json_type(value)}, not an object")
    _reject_lone_surrogates(text, value, "output")
    return value


def _reject_lone_surrogates(text: str | bytes, value: Any, what: str) -> None:
    """Refuse strings holding an unpaired ``\\uD800``-``\\uDFFF`` escape.

    JSON lets them through, but they are not Unicode: they could not be printed or
    re-encoded, and would crash whoever prints the value (the terminal, the provider).
    Only text that has such an escape at all is walked.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not _SURROGATE_ESCAPE.search(text):
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and SURROGATE.search(item):
            raise ValueError(f"{what} has a string with an unpaired UTF-16 surrogate "
                             "escape (\\ud800-\\udfff), which is not Unicode")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "boolean" if isinstance(value, bool) else "number"


def nonfinite_path(value: Any) -> list[str | int] | None:
    """Where ``value`` (parsed JSON) holds a NaN or an infinity, as a path of keys and
    indexes (``[]``: the value itself), or ``None`` when every number is finite.

    A Python caller can pass what a JSON parser refuses; walked without recursion, so
    any depth a parser produced is fine.
    """
    stack: list[tuple[list[str | int], Any]] = [([], value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        if isinstance(item, dict):
            stack.extend(([*path, key], child) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend(([*path, index], child) for index, child in enumerate(item))
    return None
