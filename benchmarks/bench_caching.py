"""Prompt caching over a 30-turn tool loop: cached share of input, tokens and cost (issue 26).

Run: ``python benchmarks/run.py caching`` (or this file). No network: the requests are the
real providers' bodies (``request_body`` then ``http_request``, so Anthropic's
``cache_control`` marks and OpenAI's ``prompt_cache_key`` are in), for a conversation
that grows as ``ikigai ask`` grows it: the system prompt and the built-in tools, a
prompt, then 30 model turns each calling ``file_read`` and getting ~2 KiB back.

A fake provider charges each request by the documented caching rules (tokens estimated
as 4 bytes each of the JSON sent, in the order the API reads the prompt):

- Anthropic (docs.claude.com, "Prompt caching"): tools, then system, then messages; a
  prefix is written at each ``cache_control`` block of at least 1024 tokens (Sonnet's
  minimum), and read from the longest earlier-written prefix found at a mark or in the
  20 blocks before it; reads cost 0.1x, 5-minute writes 1.25x the input price.
- OpenAI (platform.openai.com, "Prompt caching"): automatic for prompts of 1024 tokens
  or more; the longest prefix (in whole messages/tools here) shared with an earlier
  request of the same ``prompt_cache_key`` is read, in 128-token steps; reads at the
  model's cached-input price.

Baseline: the same loop with caching off (no marks; OpenAI: no prefix reuse). Costs are
genai-prices' (claude-sonnet-4-5, gpt-4.1). Targets: cached share >= 90 % Anthropic,
>= 80 % OpenAI.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ikigai_core.app import App  # noqa: E402
from ikigai_core.conversation import (  # noqa: E402
    AssistantMessage,
    Conversation,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.prices import cost_of  # noqa: E402
from ikigai_core.prompt import system_prompt  # noqa: E402
from ikigai_core.providers import get_provider  # noqa: E402

TURNS = 30
MIN_TOKENS = 1024
LOOKBACK = 20
TARGETS = {"anthropic": 0.90, "openai": 0.80}
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1"}
OUTPUT_TOKENS = 60
"""Output tokens each model turn is charged for."""


def tokens(part: Any) -> int:
    """The estimated tokens of one part of a request: 4 bytes of its JSON each."""
    return max(1, len(json.dumps(part, ensure_ascii=False).encode()) // 4)


def unmarked(value: Any) -> Any:
    """``value`` without ``cache_control`` (a mark is no part of the cached text)."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """An Anthropic request's blocks in cache order, each with whether it is marked."""
    found: list[Any] = [*body.get("tools", ())]
    system = body.get("system")
    found += system if isinstance(system, list) else [system] if system else []
    for message in body["messages"]:
        found += [{"role": message["role"], **block} for block in message["content"]]
    return [(unmarked(b), isinstance(b, dict) and "cache_control" in b) for b in found]


class AnthropicCache:
    """Charges requests by Anthropic's rules (see the module's docstring)."""

    def __init__(self) -> None:
        self.written: set[str] = set()

    def charge(self, body: dict[str, Any]) -> Usage:
        """The usage of one request, reads and writes counted."""
        parts = blocks(body)
        digest, total, prefixes = hashlib.sha256(), 0, []
        for part, _ in parts:
            digest.update(json.dumps(part, sort_keys=True).encode())
            total += tokens(part)
            prefixes.append((digest.hexdigest(), total))
        marks = [i for i, (_, marked) in enumerate(parts) if marked]
        read = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if prefixes[i][0] in self.written:
                    read = max(read, prefixes[i][1])
                    break
        wrote_to = read
        for mark in marks:
            key, size = prefixes[mark]
            if size >= MIN_TOKENS and key not in self.written:
                self.written.add(key)
                wrote_to = max(wrote_to, size)
        return Usage(total, OUTPUT_TOKENS, read, wrote_to - read)


class OpenAICache:
    """Charges requests by OpenAI's rules (see the module's docstring)."""

    def __init__(self) -> None:
        self.seen: dict[str, list[list[str]]] = {}

    def charge(self, body: dict[str, Any]) -> Usage:
        """The usage of one request, its cached prefix counted."""
        parts = [*body.get("tools", ()), *body.get("messages", body.get("input", ()))]
        keys = [json.dumps(part, sort_keys=True) for part in parts]
        sizes = [tokens(part) for part in parts]
        total, best = sum(sizes), 0
        for earlier in self.seen.get(body.get("prompt_cache_key", ""), []):
            same = 0
            while same < min(len(earlier), len(keys)) and earlier[same] == keys[same]:
                same += 1
            best = max(best, sum(sizes[:same]))
        self.seen.setdefault(body.get("prompt_cache_key", ""), []).append(keys)
        read = best // 128 * 128 if best >= MIN_TOKENS else 0
        return Usage(total, OUTPUT_TOKENS, read, 0)


def loop(provider_name: str, caching: bool) -> Usage:
    """The usage of a 30-turn tool loop on ``provider_name``'s wire, with or without caching."""
    home = Path(tempfile.mkdtemp())
    app = App(environ={**os.environ, "IKIGAI_HOME": str(home), "OPENAI_WIRE": "chat"},
              cwd=Path.cwd())
    provider = get_provider(app.pm, provider_name, app.notices)
    tools = list(app.registry().values())
    conversation = Conversation(system=system_prompt(app))
    conversation.add(UserMessage("Read the files under src/ one by one and summarise them."))
    fake = AnthropicCache() if provider_name == "anthropic" else OpenAICache()
    total = Usage()
    output = "".join(f"line {n}: " + "x" * 40 + "\n" for n in range(40))  # ~2 KiB
    for turn in range(TURNS):
        body = provider.request_body(conversation, tools, model=MODELS[provider_name],
                                     stream=False)
        if caching:
            body = provider.http_request(body, model=MODELS[provider_name], stream=False,
                                         api_key=None, environ=app.environ).body
        else:
            body = unmarked({k: v for k, v in body.items() if k != "prompt_cache_key"})
        usage = fake.charge(body) if caching else Usage(fake.charge(body).input_tokens,
                                                        OUTPUT_TOKENS)
        total += usage
        call = ToolCall(f"call_{turn}", "file_read", {"file_path": f"src/f{turn}.py"})
        conversation.add(AssistantMessage(f"Reading f{turn}.", (call,), usage=usage))
        conversation.add(ToolResultsMessage((ToolResult(call, {
            "tool_success": True, "result": {"content": output}}),)))
    return total


def main() -> None:
    """Print the cached share per provider and the tokens and cost with and without."""
    failed = []
    for name in ("anthropic", "openai"):
        cached, plain = loop(name, True), loop(name, False)
        share = cached.cache_read_tokens / cached.input_tokens
        with_cost = cost_of(name, MODELS[name], cached) or 0.0
        without_cost = cost_of(name, MODELS[name], plain) or 0.0
        print(f"{name:9} {MODELS[name]:17} {TURNS} turns  input {cached.input_tokens:,} tokens"
              f"  cached {share:.1%} (target >= {TARGETS[name]:.0%})  written "
              f"{cached.cache_write_tokens:,}")
        print(f"{'':9} cost with caching ${with_cost:.4f}, without ${without_cost:.4f}: "
              f"ratio {with_cost / without_cost:.2f}")
        if share < TARGETS[name]:
            failed.append(name)
    if failed:
        raise SystemExit(f"cached share under target: {', '.join(failed)}")


if __name__ == "__main__":
    main()
