"""What an MCP ``tools/call`` result becomes for the model (docs/decisions.md, issue 11).

- success with ``structuredContent``: that object is the envelope's ``result``;
- success without it: ``{"text": ...}``, every content block joined with newlines;
- ``isError: true``: a failure envelope, ``error_code`` ``TOOL_ERROR`` (the tool ran and
  said it failed) and the joined text as ``error``, so providers flag it (Anthropic's
  ``is_error``);
- images, audio and other binary blocks never reach the model as base64 text: each becomes
  a line with its type and decoded size; an image also goes beside the envelope as an
  :class:`~ikigai_core.Attachment`, which providers that take images in tool results
  send natively (the others send the line alone).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ikigai_core import Attachment, ToolOutcome

TOOL_ERROR = "TOOL_ERROR"
"""The error code of a call the MCP tool itself reported as failed (``isError``)."""


def outcome(name: str, result: Mapping[str, Any]) -> ToolOutcome:
    """The outcome of tool ``name`` for one ``CallToolResult`` (as MCP JSON)."""
    images: list[Attachment] = []
    text = "\n".join(describe(block, images) for block in result.get("content") or ())
    if result.get("isError"):
        return ToolOutcome(name, error=f"Tool '{name}' reported an error: {text or '(no text)'}",
                           error_code=TOOL_ERROR, attachments=tuple(images))
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return ToolOutcome(name, result=structured, attachments=tuple(images))
    return ToolOutcome(name, result={"text": text}, attachments=tuple(images))


def describe(block: Mapping[str, Any], images: list[Attachment]) -> str:
    """One content block as text: text as is, an image as ``[image/png image, 1234 bytes]``
    (and added to ``images``), other binary content as such a line saying it is not
    shown to the model."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "image":
        image = _decoded(block.get("data"))
        if image is not None and isinstance(block.get("mimeType"), str):
            images.append(Attachment(block["mimeType"], image))
            return f"[{block['mimeType']} image, {len(image)} bytes]"
    if kind in ("image", "audio"):
        return _placeholder(kind, block.get("mimeType"), block.get("data"))
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return str(resource["text"])
        return _placeholder("resource", resource.get("mimeType"), resource.get("blob"),
                            resource.get("uri"))
    if kind == "resource_link":
        return f"[resource link: {block.get('uri')}]"
    return f"[{kind} content: {json.dumps(block)[:200]}]"


def _decoded(data: Any) -> bytes | None:
    try:
        return base64.b64decode(data or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return None


def _placeholder(kind: str, mime: Any, data: Any, uri: Any = None) -> str:
    decoded = _decoded(data)
    size = "unreadable data" if decoded is None else f"{len(decoded)} bytes"
    where = f" at {uri}" if uri else ""
    return f"[{mime or 'binary'} {kind}{where}, {size}; not shown to the model]"
