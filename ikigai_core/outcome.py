"""The result of running one tool, before it is wrapped in an envelope (what it may carry
beside it, an image, is in :mod:`ikigai_core.attachments`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ikigai_core.record import Record

if TYPE_CHECKING:
    from ikigai_core.attachments import Attachment

TOOL_TIMEOUT = "TOOL_TIMEOUT"
TOOL_CRASHED = "TOOL_CRASHED"
INVALID_OUTPUT = "INVALID_OUTPUT"
INVALID_PARAMS = "INVALID_PARAMS"
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
TOOL_DENIED = "TOOL_DENIED"
BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
"""A call the model asked for after the session's budget was reached: it was not run."""
ERROR_CODES = (
    TOOL_TIMEOUT, TOOL_CRASHED, INVALID_OUTPUT, INVALID_PARAMS, TOOL_NOT_FOUND, TOOL_DENIED,
    BUDGET_EXCEEDED,
)


class ToolOutcome(Record):
    """What happened when a tool was called; the ``ikigai_wrap_result`` hook turns it into JSON.

    On success ``result`` holds the tool's JSON object. On failure ``error`` and
    ``error_code`` (one of :data:`ERROR_CODES`) say what went wrong, and where a
    process ran, ``exit_code``, ``stdout`` and ``stderr`` (bounded) say what it did.
    ``attachments`` is binary content the tool gave beside its result (see
    :class:`~ikigai_core.attachments.Attachment`; at most
    :data:`~ikigai_core.attachments.MAX_ATTACHMENT_BYTES` of it reaches the model).
    """

    tool: str
    result: Mapping[str, Any] | None = None
    error: str | None = None
    error_code: str | None = None
    exit_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None
    elapsed: float = 0.0
    attachments: tuple[Attachment, ...] = ()

    @property
    def success(self) -> bool:
        """True when the tool ran and returned one JSON object."""
        return self.error_code is None
