"""The result of running one tool, before it is wrapped in an envelope, and what it may
carry beside it (an image) for providers that take binary content natively."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

TOOL_TIMEOUT = "TOOL_TIMEOUT"
TOOL_CRASHED = "TOOL_CRASHED"
INVALID_OUTPUT = "INVALID_OUTPUT"
INVALID_PARAMS = "INVALID_PARAMS"
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
TOOL_DENIED = "TOOL_DENIED"
ERROR_CODES = (
    TOOL_TIMEOUT, TOOL_CRASHED, INVALID_OUTPUT, INVALID_PARAMS, TOOL_NOT_FOUND, TOOL_DENIED
)


MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024 * 3 // 4
"""The most binary content one call carries to the model, decoded: 3.75 MiB, whose base64
(5 MiB) fits Anthropic's limit for one image. Attachments past it are dropped in order;
the envelope's text still says what they were."""


@dataclass(frozen=True)
class Attachment:
    """Binary content a tool returned beside its JSON result (an image), never inside it.

    A provider whose API takes it in a tool result sends it there in its own form
    (Anthropic's image blocks, Gemini's ``inlineData``); the envelope's text (which
    every provider, the session log and ``ask --json`` see) says what it was, with its
    type and size, so nothing goes to the model as base64 text.

    :param mime_type: the content's IANA media type (``image/png``).
    :param data: the content, decoded.
    """

    mime_type: str
    data: bytes

    @property
    def base64(self) -> str:
        """:attr:`data` as base64 text, as the providers' JSON carries it."""
        import base64

        return base64.b64encode(self.data).decode("ascii")


def within_limit(attachments: Iterable[Attachment],
                 limit: int = MAX_ATTACHMENT_BYTES) -> tuple[Attachment, ...]:
    """The ``attachments``, in order, as long as their sizes add up to at most ``limit``."""
    kept: list[Attachment] = []
    for attachment in attachments:
        limit -= len(attachment.data)
        if limit < 0:
            break
        kept.append(attachment)
    return tuple(kept)


@dataclass(frozen=True)
class ToolOutcome:
    """What happened when a tool was called; the ``ikigai_wrap_result`` hook turns it into JSON.

    On success ``result`` holds the tool's JSON object. On failure ``error`` and
    ``error_code`` (one of :data:`ERROR_CODES`) say what went wrong, and where a
    process ran, ``exit_code``, ``stdout`` and ``stderr`` (bounded) say what it did.
    ``attachments`` is binary content the tool gave beside its result (see
    :class:`Attachment`; at most :data:`MAX_ATTACHMENT_BYTES` of it reaches the model).
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
