"""The session log's rows as JSON, and read back as if a stranger had edited them.

:func:`message_json` writes one message; :func:`message_of` reads it back and
:func:`read_session` reads a whole conversation's rows, checking every value's type, so a
row damaged with ``sqlite3`` (not JSON, nested too deeply, an unknown role, text where a
number belongs) is one :class:`DamagedSession` line naming the conversation, never a
traceback nor a request built from half of it (issue 21).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import (
    AssistantMessage,
    Compaction,
    Message,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UsageKeys,
    UserMessage,
)
from ikigai_core.errors import IkigaiError
from ikigai_core.strictjson import SURROGATE, loads

if TYPE_CHECKING:
    from ikigai_core.attachments import Attachment


class DamagedSession(IkigaiError):
    """A recorded conversation whose rows cannot be read: one line naming it, what is
    wrong, and how to get rid of it."""

    def __init__(self, session_id: str, what: str) -> None:
        self.what = what
        """What is wrong, alone."""
        super().__init__(f"session {session_id} is damaged ({what}); remove it with "
                         f"`ikigai sessions rm {session_id}`")


MAX_COVERS = 2**62
"""A bound on a compaction's ``covers`` where the messages before it are not counted."""


class _Bad(ValueError):
    """One value of a row is not what was written there."""


# -- Values ---------------------------------------------------------------------


def is_text(value: Any) -> bool:
    """A string that is Unicode text (no undecodable byte from a damaged row)."""
    return isinstance(value, str) and not SURROGATE.search(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_count(value: Any) -> bool:
    """A whole number from 0 (a token count, a turn's number)."""
    return _is_int(value) and value >= 0


STATUSES = ("running", "done", "interrupted", "killed", "budget_exceeded")
"""The states of a sub-agent's conversation (``None``: not a sub-agent's)."""


def is_status(value: Any) -> bool:
    """One of :data:`STATUSES`, or ``None``."""
    return value is None or value in STATUSES


def is_number(value: Any) -> bool:
    """A finite ``int`` or ``float`` (a time, a duration)."""
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _need(value: Any, check: Callable[[Any], bool], what: str) -> Any:
    if not check(value):
        raise _Bad(f"{what} is {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bytes):
        return "a blob"
    if isinstance(value, str):
        return "not text" if SURROGATE.search(value) else f"the text {value[:20]!r}"
    return "null" if value is None else f"the {type(value).__name__} {str(value)[:20]}"


def _json(text: Any, what: str) -> Any:
    """The JSON ``text`` of a column; damaged when it is not strict JSON text (no NaN, no
    number past a float, which could not be printed back)."""
    _need(text, is_text, what)
    try:
        return loads(text)
    except ValueError as exc:
        raise _Bad(f"{what} is not JSON: {str(exc).split(':')[0]}") from None


# -- Messages -------------------------------------------------------------------


def _call_json(call: ToolCall) -> dict[str, Any]:
    data: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.arguments_error is not None:
        data["arguments_error"] = call.arguments_error
    return data


def _call_of(data: Any) -> ToolCall:
    _need(data, lambda d: isinstance(d, dict), "a tool call")
    return ToolCall(_need(data.get("id"), is_text, "a call's id"),
                    _need(data.get("name"), is_text, "a call's name"),
                    _need(data.get("arguments"), _optional(lambda a: isinstance(a, dict)),
                          "a call's arguments"),
                    _need(data.get("arguments_error"), _optional(is_text),
                          "a call's arguments_error"))


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


def _is_raw(value: Any) -> bool:
    """What providers keep of a turn: an object, or a list of objects (content blocks)."""
    return (value is None or isinstance(value, dict)
            or isinstance(value, list) and all(isinstance(v, dict) for v in value))


def _list(value: Any, what: str) -> list[Any]:
    return list(_need(value, lambda v: isinstance(v, list), what))


def message_json(message: Message | Compaction) -> dict[str, Any]:
    """One message, or a compaction, as a JSON object (``role`` says which kind; where a
    compaction was made is where it stands among the messages)."""
    if isinstance(message, Compaction):
        return {"role": "compaction", "text": message.summary, "covers": message.covers,
                "reason": message.reason, "tokens": list(message.tokens),
                "usage": None if message.usage is None else usage_json(message.usage)}
    if isinstance(message, UserMessage):
        data: dict[str, Any] = {"role": "user", "text": message.text}
        if message.images:
            data["images"] = [{"mime_type": image.mime_type, "data": image.base64}
                              for image in message.images]
        if message.skill is not None:
            data["skill"] = message.skill
        return data
    if isinstance(message, AssistantMessage):
        usage = message.usage
        return {"role": "assistant", "text": message.text,
                "tool_calls": [_call_json(c) for c in message.tool_calls],
                "stop_reason": message.stop_reason, "raw": _jsonable(message.raw),
                "usage": None if usage is None else usage_json(usage)}
    return {"role": "tool", "results": [
        {"call": _call_json(r.call), "envelope": r.envelope, "duration": r.duration}
        for r in message.results]}


STORED_USAGE = UsageKeys("input_tokens", "output_tokens", cache_read="cache_read_tokens",
                         cache_write="cache_write_tokens")
"""How a recorded message's usage is written (:func:`usage_json`) and read back."""


def usage_json(usage: Usage) -> dict[str, int]:
    """``usage`` as JSON: input and output tokens, and the cache's reads and writes when
    there were any (the input count includes them)."""
    fields = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens or usage.cache_write_tokens:
        fields |= {"cache_read_tokens": usage.cache_read_tokens,
                   "cache_write_tokens": usage.cache_write_tokens}
    return fields


def message_of(data: Any, *, keep_raw: bool) -> Message:
    """The message :func:`message_json` wrote; ``raw`` only when ``keep_raw`` (the
    provider-specific form is wrong for another provider). Raises ``ValueError`` saying
    which value is wrong; a usage that is no count is ignored, as from a provider."""
    _need(data, lambda d: isinstance(d, dict), "a message")
    role = data.get("role")
    if role == "user":
        return UserMessage(_need(data.get("text"), is_text, "a message's text"),
                           tuple(map(_image_of, _list(data.get("images", []),
                                                     "a message's images"))),
                           _need(data.get("skill"), _optional(_is_skill_name),
                                 "a message's skill name"))
    if role == "assistant":
        raw = _need(data.get("raw"), _is_raw, "a message's raw form")
        return AssistantMessage(
            _need(data.get("text"), is_text, "a message's text"),
            tuple(_call_of(c) for c in _list(data.get("tool_calls"), "a message's calls")),
            raw if keep_raw else None,
            _need(data.get("stop_reason"), _optional(is_text), "a stop reason"),
            STORED_USAGE.read(data.get("usage")))
    if role == "tool":
        return ToolResultsMessage(tuple(_result_of(r) for r in _list(data.get("results"),
                                                                     "a message's results")))
    raise _Bad(f"a message's role is {_kind(role)}")


def _is_skill_name(value: Any) -> bool:
    from ikigai_core.skills import SKILL_NAME_RE

    return isinstance(value, str) and SKILL_NAME_RE.fullmatch(value) is not None


def _image_of(data: Any) -> Attachment:
    """An image :func:`message_json` recorded: a known image type whose base64 decodes to
    an image of that type, within the size a prompt may attach."""
    import base64
    import binascii

    from ikigai_core.attachments import Attachment
    from ikigai_core.inputs import IMAGE_NAMES, MAX_IMAGE_BYTES, image_type

    _need(data, lambda d: isinstance(d, dict), "an image")
    kind = _need(data.get("mime_type"), lambda k: k in IMAGE_NAMES, "an image's type")
    most = MAX_IMAGE_BYTES * 4 // 3 + 4  # its base64
    text = _need(data.get("data"), lambda d: is_text(d) and len(d) <= most, "an image's data")
    try:
        decoded = base64.b64decode(text, validate=True)
    except binascii.Error:
        decoded = b""
    _need(decoded, lambda d: image_type(d) == kind, "an image's data")
    return Attachment(kind, decoded)


COMPACTION_REASONS = ("auto", "command", "overflow", "undo")


def entry_of(data: Any, *, keep_raw: bool, at: int) -> Message | Compaction:
    """The message or compaction :func:`message_json` wrote, ``at`` messages into the
    conversation (a compaction covers no more than those); raises ``ValueError`` as
    :func:`message_of` does."""
    if not (isinstance(data, dict) and data.get("role") == "compaction"):
        return message_of(data, keep_raw=keep_raw)
    summary = _need(data.get("text"), _optional(is_text), "a compaction's text")
    covers = _need(data.get("covers"), lambda c: _is_int(c) and 0 <= c <= at,
                   "a compaction's covers")
    reason = _need(data.get("reason"), lambda r: r in COMPACTION_REASONS, "a compaction's reason")
    tokens = _need(data.get("tokens"), lambda t: isinstance(t, list) and len(t) == 2
                   and all(_is_int(n) for n in t), "a compaction's tokens")
    return Compaction(summary, covers if summary is not None else 0, at, reason,
                      (tokens[0], tokens[1]),
                      STORED_USAGE.read(data.get("usage")))


def _result_of(data: Any) -> ToolResult:
    _need(data, lambda d: isinstance(d, dict), "a tool result")
    return ToolResult(_call_of(data.get("call")),
                      _need(data.get("envelope"), lambda e: isinstance(e, dict), "an envelope"),
                      _need(data.get("duration", 0.0), is_number, "a call's duration"))


# -- Rows -----------------------------------------------------------------------

_SESSION_COLUMNS: dict[str, Callable[[Any], bool]] = {
    "id": is_text, "created": is_number, "updated": is_number, "cwd": is_text,
    "command": is_text, "system": _optional(is_text), "parent": _optional(is_text),
    "fork_turn": _optional(is_count), "agent": _optional(is_text), "status": is_status}
_TURN_COLUMNS: dict[str, Callable[[Any], bool]] = {
    "seq": _is_int, "created": is_number, "provider": is_text, "model": is_text,
    "prompt": is_text, "input_tokens": _is_int, "output_tokens": _is_int,
    "parent": _optional(_is_int), "cache_read_tokens": _is_int,
    "cache_write_tokens": _is_int, "cost": _optional(is_number)}
_CALL_COLUMNS: dict[str, Callable[[Any], bool]] = {
    "call_id": _optional(is_text), "name": is_text, "duration": is_number}


def _columns(row: Mapping[str, Any], checks: Mapping[str, Callable[[Any], bool]],
             what: str) -> dict[str, Any]:
    return {name: _need(row[name], check, f"{what}'s {name}") for name, check in checks.items()}


def read_session(session_id: str, session: Mapping[str, Any],
                 turns: Sequence[Mapping[str, Any]],
                 calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One conversation's rows as JSON-ready data, every value checked; a damaged one is
    a :class:`DamagedSession`."""
    by_turn: dict[Any, list[Mapping[str, Any]]] = {}
    for call in calls:
        by_turn.setdefault(call["turn"], []).append(call)
    try:
        data = _columns(session, _SESSION_COLUMNS, "the session")
        data["turns"] = []
        earlier: set[int] = set()
        for turn in turns:
            data["turns"].append(_turn(turn, earlier, by_turn.get(turn["seq"], [])))
            earlier.add(turn["seq"])
    except _Bad as exc:
        raise DamagedSession(session_id, str(exc)) from None
    return data


def _turn(row: Mapping[str, Any], earlier: set[int],
          calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    seq = _need(row["seq"], _is_int, "a turn's seq")  # checked first: its name shows it
    what = f"turn {seq}"
    turn = _columns(row, _TURN_COLUMNS, what)
    if turn["parent"] is not None and turn["parent"] not in earlier:
        raise _Bad(f"{what}'s parent {turn['parent']} is no earlier turn")
    turn["messages"] = _list(_json(row["messages"], f"{what}'s messages"),
                             f"{what}'s messages")
    for message in turn["messages"]:
        try:
            entry_of(message, keep_raw=True, at=MAX_COVERS)
        except _Bad as exc:
            raise _Bad(f"in {what}'s messages, {exc}") from None
    turn["tools"] = _need(_json(row["tools"], f"{what}'s tools"),
                          lambda t: isinstance(t, dict) and all(map(is_text, t.values())),
                          f"{what}'s tools")
    turn["skills"] = _need(_json(row["skills"], f"{what}'s skills"),
                           lambda s: isinstance(s, list) and all(map(is_text, s)),
                           f"{what}'s skills")
    turn["tool_calls"] = [_recorded_call(c, what) for c in calls]
    return turn


def _recorded_call(row: Mapping[str, Any], turn: str) -> dict[str, Any]:
    seq = _need(row["seq"], _is_int, f"{turn}'s call seq")  # checked first: its name shows it
    what = f"{turn}'s call {seq}"
    call = _columns(row, _CALL_COLUMNS, what)
    call["arguments"] = _json(row["arguments"], f"{what}'s arguments")
    call["envelope"] = _need(_json(row["envelope"], f"{what}'s envelope"),
                             lambda e: isinstance(e, dict), f"{what}'s envelope")
    return {name: call[name] for name in ("call_id", "name", "arguments", "envelope",
                                          "duration")}
