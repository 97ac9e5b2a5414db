"""``web.max_uses``: how many times each web tool may run in one conversation.

A conversation here is what one ``CallContext`` serves: an ``ask`` run, a ``chat`` session,
an ``mcp serve`` process (``ToolCallRequest`` does not carry the conversation itself). A
call is counted once its process ran: a call refused before it started (by the user, a
rule, its arguments) costs nothing.
"""

from __future__ import annotations

import weakref
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ikigai_core import CallContext, CallDecision, CallRecord, ToolCallRequest

NOT_RUN = ("TOOL_DENIED", "INVALID_PARAMS", "TOOL_NOT_FOUND")
"""Outcomes of calls that started no process."""

_uses: dict[int, Counter[str]] = {}
"""Uses per tool, by the ``id`` of a live ``CallContext`` (dropped when it is collected)."""


def over_budget(request: ToolCallRequest, max_uses: int) -> CallDecision | None:
    """Deny a call once its tool has run ``max_uses`` times in this conversation; the reason
    says so, and how to raise the budget."""
    used = _uses.get(id(request.context), Counter())[request.tool.name]
    if used < max_uses:
        return None
    from ikigai_core import CallDecision

    return CallDecision.deny(
        f"{request.tool.name} has spent its budget for this conversation ({used} of "
        f"web.max_uses: {max_uses} in config.json); answer with what you have, or ask the "
        "user to raise web.max_uses")


def spend(record: CallRecord) -> None:
    """Count one use of the record's tool if its process ran."""
    if record.outcome.error_code in NOT_RUN:
        return
    _counter(record.context)[record.name] += 1


def _counter(context: CallContext) -> Counter[str]:
    key = id(context)
    if key not in _uses:
        _uses[key] = Counter()
        weakref.finalize(context, _uses.pop, key, None)
    return _uses[key]
