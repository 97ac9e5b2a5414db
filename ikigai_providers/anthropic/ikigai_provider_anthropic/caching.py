"""Prompt caching on the Messages API (issue 26 §2): ``cache_control`` breakpoints.

The API caches the prefix of a request up to each block marked ``cache_control``, in the
order tools, system, messages, and allows at most four marks. Three are placed:

- the system prompt (a single text block), which caches the tools and the system; with
  no system prompt, the last tool;
- the last block of the newest user message (this request's prefix is written);
- the last block of the user message before it (the previous request's last mark, so
  its write is read however many blocks the turn between them added: the API's own
  look-back covers only about 20 blocks).

Everything before a mark is serialised the same way on every request (the provider's
blocks go back as they came), so the cached prefix is byte-stable. Sources: the API's
"Prompt caching" guide (docs.claude.com/en/docs/build-with-claude/prompt-caching):
breakpoint limit, prefix order, 20-block look-back, the 5-minute default and the
``"ttl": "1h"`` option; minimum cacheable prompt 1024 tokens (2048 for Haiku models).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_core.errors import ConfigError

TTL_ENV = "ANTHROPIC_CACHE_TTL"
"""The environment variable choosing how long the cache keeps a prefix."""
TTLS = ("5m", "1h")


def cache_ttl(environ: Mapping[str, str]) -> str:
    """The TTL ``environ`` asks for (default ``5m``); another value is a :class:`ConfigError`."""
    value = environ.get(TTL_ENV, "").strip() or "5m"
    if value not in TTLS:
        raise ConfigError(f"environment variable {TTL_ENV} must be one of {', '.join(TTLS)}, "
                          f"got {value!r}; fix or unset it")
    return value


def marked(body: Mapping[str, Any], ttl: str) -> dict[str, Any]:
    """``body`` (a Messages request) with the breakpoints, each kept ``ttl``; only what
    changes is copied (a long conversation's body is not)."""
    control = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}
    body = dict(body)
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": control}]
    elif body.get("tools"):
        body["tools"] = [*body["tools"][:-1], {**body["tools"][-1], "cache_control": control}]
    messages = body["messages"] = list(body.get("messages", ()))
    users = [i for i, m in enumerate(messages) if m["role"] == "user" and m["content"]]
    for index in users[-2:]:
        content = messages[index]["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        messages[index] = {**messages[index], "content": [
            *content[:-1], {**content[-1], "cache_control": control}]}
    return body
