"""Binary content (an image) that goes to providers natively: what a tool may carry beside
its result, and what a user attaches to a prompt (``ikigai_core.inputs``). A module of its
own: a call without attachments (every ``ikigai tool run``) never imports it (the start-up
ledger)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from ikigai_core.record import Record

MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024 * 3 // 4
"""The most binary content one call carries to the model, decoded: 3.75 MiB, whose base64
(5 MiB) fits Anthropic's limit for one image. Attachments past it are dropped in order;
the envelope's text still says what they were."""


class Attachment(Record):
    """Binary content a tool returned beside its JSON result (an image), never inside it,
    or an image a user attached to a prompt (:attr:`UserMessage.images
    <ikigai_core.conversation.UserMessage.images>`, recorded with the message).

    A provider whose API takes it in a tool result sends it there in its own form
    (Anthropic's image blocks, Gemini's ``inlineData``); the envelope's text (which
    every provider, the session log and ``ask --json`` see) says what it was, with its
    type and size, so nothing goes to the model as base64 text.

    :param mime_type: the content's IANA media type (``image/png``).
    :param data: the content, decoded.
    """

    mime_type: str
    data: bytes

    @cached_property
    def base64(self) -> str:
        """:attr:`data` as base64 text, as the providers' JSON carries it (encoded once: every
        turn sends the whole conversation again)."""
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
