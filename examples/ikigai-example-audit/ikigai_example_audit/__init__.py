"""Example ikigai plugin: the tool-call lifecycle hooks and a command.

- ``ikigai_after_tool_call``: with ``IKIGAI_AUDIT_LOG`` set to a file, every tool call
  (the model's and ``ikigai tool run``'s, denied and failed ones included) is appended
  to it as one JSON line.
- ``ikigai_before_tool_call``: ``IKIGAI_AUDIT_DENY`` (comma-separated tool names) is a
  deny list; the model gets ``TOOL_DENIED`` and no process starts.
- ``ikigai_commands``: ``ikigai audit [-n N] [--json]`` shows the log's last calls.

Installed, it does nothing until one of the variables is set.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ikigai_core import hookimpl
from ikigai_example_audit.names import DENY_ENV, LOG_ENV

if TYPE_CHECKING:  # types only: a plugin's module should cost nothing until a hook runs
    import click

    from ikigai_core import CallDecision, CallRecord, ToolCallRequest


@hookimpl
def ikigai_before_tool_call(request: ToolCallRequest) -> CallDecision | None:
    """Deny the tools named in ``IKIGAI_AUDIT_DENY``."""
    denied = {name.strip() for name in request.context.environ.get(DENY_ENV, "").split(",")}
    if request.tool.name in denied:
        from ikigai_core import CallDecision

        return CallDecision.deny(f"tool '{request.tool.name}' is on the deny list ({DENY_ENV})")
    return None


@hookimpl
def ikigai_after_tool_call(record: CallRecord) -> None:
    """One JSON line per call in ``IKIGAI_AUDIT_LOG``, written whole with one ``write``."""
    path = record.context.environ.get(LOG_ENV)
    if not path:
        return
    import json  # lazy: an unset log costs no start-up

    outcome = record.outcome
    line = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "call_id": record.call_id,
        "tool": record.name,
        "source": record.tool.source if record.tool else None,
        "arguments": record.arguments,
        "ok": outcome.success,
        "error_code": outcome.error_code,
        "seconds": round(record.duration, 3),
        "cwd": str(record.context.cwd),
    }
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(line, default=repr) + "\n")


@hookimpl
def ikigai_commands() -> list[click.Command]:
    """``ikigai audit``; its module (and click's use) loads only when the command is needed."""
    from ikigai_example_audit.command import audit

    return [audit]
