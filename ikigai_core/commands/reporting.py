"""What ``ask`` and ``chat`` say on stderr about a model turn and the tools it could use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core.commands.output import warn

if TYPE_CHECKING:
    from ikigai_core.conversation import AssistantMessage
    from ikigai_core.providers import Provider
    from ikigai_core.registry import Registry


def report_empty(reply: AssistantMessage) -> None:
    """On stderr: the model's last turn had neither text nor tool calls (else nothing shows)."""
    if not reply.text.strip() and not reply.tool_calls:
        why = f" (stop reason: {reply.stop_reason})" if reply.stop_reason else ""
        warn(f"the model answered with no text and no tool calls{why}")


def report_unfit(provider: Provider, registry: Registry) -> None:
    """On stderr: each tool left out of ``provider``'s requests, and why (one line each)."""
    for fit in provider.fit_tools(registry.values()):
        if fit.declaration is None:
            warn(f"tool '{fit.tool}' left out of requests to {provider.name}: {fit.reason}; "
                 f"see `ikigai tool check {fit.tool}`")
