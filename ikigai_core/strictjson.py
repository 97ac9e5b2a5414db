"""Parse what a stranger printed: exactly one RFC 8259 JSON object in strict UTF-8."""

from __future__ import annotations

import json
from typing import Any, NoReturn


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"output contains {name}, which is not JSON")


def loads(text: str | bytes) -> Any:
    """``json.loads``, with JSON nested too deeply for Python a ``ValueError`` like any other."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def loads_object(data: bytes) -> dict[str, Any]:
    """The one JSON object in ``data``; ``ValueError`` saying what is wrong otherwise.

    Rejects empty input, invalid UTF-8, NaN/Infinity, anything but an object at the
    top level, and trailing data after the object (whitespace is allowed).
    """
    if not data.strip():
        raise ValueError("output is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"output is not valid UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise ValueError(f"output has data after the JSON value (char {exc.pos})") from None
        raise ValueError(f"output is not valid JSON: {exc.msg} (char {exc.pos})") from None
    except RecursionError:  # e.g. 8 KiB of "[": still a stranger's bad output, not our crash
        raise ValueError("output is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"output is a JSON {_json_type(value)}, not an object")
    return value


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "boolean" if isinstance(value, bool) else "number"
