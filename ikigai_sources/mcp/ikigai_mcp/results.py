"""What an MCP ``tools/call`` result becomes for the model (docs/decisions.md, issue 11).

- success with ``structuredContent``: that object is the envelope's ``result``;
- success without it: ``{"text": ...}``, every content block joined with newlines;
- ``isError: true``: a failure envelope, ``error_code`` ``TOOL_ERROR`` (the tool ran and
  said it failed) and the joined text as ``error``, so providers flag it (Anthropic's
  ``is_error``);
- images, audio and other binary blocks never reach the model as base64: each becomes a
  placeholder line with its type and decoded size.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ikigai_core import ToolOutcome

TOOL_ERROR = "TOOL_ERROR"
"""The error code of a call the MCP tool itself reported as failed (``isError``)."""


def outcome(name: str, result: Mapping[str, Any]) -> ToolOutcome:
    """The outcome of tool ``name`` for one ``CallToolResult`` (as MCP JSON)."""
    text = "\n".join(describe(block) for block in result.get("content") or ())
    if result.get("isError"):
        return ToolOutcome(name, error=f"Tool '{name}' reported an error: {text or '(no text)'}",
                           error_code=TOOL_ERROR)
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return ToolOutcome(name, result=structured)
    return ToolOutcome(name, result={"text": text})


def describe(block: Mapping[str, Any]) -> str:
    """One content block as text: text as is, binary as ``[image/png image, 1234 bytes]``."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
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


def _placeholder(kind: str, mime: Any, data: Any, uri: Any = None) -> str:
    try:
        size = f"{len(base64.b64decode(data or '', validate=True))} bytes"
    except (binascii.Error, ValueError, TypeError):
        size = "unreadable data"
    where = f" at {uri}" if uri else ""
    return f"[{mime or 'binary'} {kind}{where}, {size}; not shown to the model]"
