"""A plugin's answer to ``ikigai_before_tool_call``, in a module of its own: a call no
plugin judges (every ``ikigai tool run``) never imports it (the start-up ledger)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ikigai_core.record import Record


class _Replace:
    """``replace`` of :class:`CallDecision`: the class's constructor of a replacing
    decision, and on an instance the copy every record has."""

    def __get__(self, decision: CallDecision | None, kind: type[CallDecision]
                ) -> Callable[..., CallDecision]:
        if decision is None:
            return kind.replacing
        return lambda **changes: Record.replace(decision, **changes)


class CallDecision(Record):
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
    def replacing(cls, arguments: Mapping[str, Any], reason: str = "") -> CallDecision:
        """Run the call with ``arguments`` instead of the model's."""
        return cls("replace", reason, dict(arguments))

    replace = _Replace()
    """``CallDecision.replace(arguments, reason)`` on the class: :meth:`replacing` (the
    spelling plugins have used since issue 9); ``decision.replace(**changes)`` on a
    decision: a changed copy, as for every record."""
