"""A plugin's answer to ``ikigai_before_tool_call``, in a module of its own: a call no
plugin judges (every ``ikigai tool run``) never imports it (the start-up ledger)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallDecision:
    """A plugin's answer to ``ikigai_before_tool_call``. Build one with the class methods.

    :param action: ``allow``, ``deny`` or ``replace``.
    :param reason: why (shown to the model on ``deny``, and recorded).
    :param arguments: the new arguments on ``replace`` (validated again before the call).
    """

    action: str
    reason: str = ""
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def allow(cls, reason: str = "") -> CallDecision:
        """Let the call run (the same as answering ``None``, but recorded with a reason)."""
        return cls("allow", reason)

    @classmethod
    def deny(cls, reason: str) -> CallDecision:
        """Stop the call: no process starts, the model gets ``TOOL_DENIED`` and ``reason``."""
        return cls("deny", reason)

    @classmethod
    def replace(cls, arguments: Mapping[str, Any], reason: str = "") -> CallDecision:
        """Run the call with ``arguments`` instead of the model's."""
        return cls("replace", reason, dict(arguments))
