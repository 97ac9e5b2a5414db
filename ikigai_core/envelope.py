"""Default plugin: wrap every tool outcome in the spec's envelope (spec decision 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.outcome import ToolOutcome


@hookimpl(trylast=True)
def ikigai_wrap_result(outcome: ToolOutcome) -> dict[str, Any]:
    """``{"tool_success": true, "result": ...}``, or the failure with what the process did."""
    if outcome.success:
        return {"tool_success": True, "result": outcome.result}
    envelope: dict[str, Any] = {
        "tool_success": False,
        "error": outcome.error,
        "error_code": outcome.error_code,
    }
    if outcome.exit_code is not None:
        envelope["exit_code"] = outcome.exit_code
    if outcome.stdout is not None:
        envelope["stdout"] = outcome.stdout
    if outcome.stderr is not None:
        envelope["stderr"] = outcome.stderr
    return envelope
