"""``web.max_uses``: how many times each web tool may run in one conversation.

Counted from the conversation itself (``ToolCallRequest.conversation``), so a resumed one
(``ask --continue``, ``chat --resume``) goes on with its count and chat's ``/clear`` starts
afresh. An earlier call counts once its process ran: one refused before it started (by the
user, a rule, its arguments) costs nothing. The calls of the model's current turn, which run
at the same time, count in the order the model made them, before they run. A call from no
conversation (``ikigai tool run``, ``mcp serve``) has no budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ikigai_core import CallDecision, ToolCallRequest

NOT_RUN = ("TOOL_DENIED", "INVALID_PARAMS", "TOOL_NOT_FOUND")
"""Outcomes of calls that started no process."""


def over_budget(request: ToolCallRequest, max_uses: int) -> CallDecision | None:
    """Deny a call once its tool has run ``max_uses`` times in this conversation; the reason
    says so, and how to raise the budget."""
    if request.conversation is None:
        return None
    used = uses(request.conversation, request.tool.name, request.call_id)
    if used < max_uses:
        return None
    from ikigai_core import CallDecision

    return CallDecision.deny(
        f"{request.tool.name} has spent its budget for this conversation ({used} of "
        f"web.max_uses: {max_uses} in config.json); answer with what you have, or ask the "
        "user to raise web.max_uses")


def uses(messages: Sequence[object], name: str, call_id: str | None) -> int:
    """Calls of tool ``name`` in ``messages``: those whose process ran, and those the
    last turn made before call ``call_id``."""
    from ikigai_core import AssistantMessage, ToolResultsMessage

    ran = sum(result.call.name == name and result.envelope.get("error_code") not in NOT_RUN
              for message in messages if isinstance(message, ToolResultsMessage)
              for result in message.results)
    turn = messages[-1] if messages else None
    made = turn.tool_calls if isinstance(turn, AssistantMessage) else ()
    ids = [call.id for call in made]
    earlier = made[:ids.index(call_id)] if call_id in ids else made
    return ran + sum(call.name == name for call in earlier)
