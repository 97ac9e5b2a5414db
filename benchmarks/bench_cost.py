"""What a 30-turn tool loop costs, with and without prompt caching and with and without
pruning and compaction: tokens and US dollars per provider wire, in one table (issue 26).

Run: ``python benchmarks/run.py cost`` (or this file); ``IKIGAI_BENCH_TURNS`` (default 30)
sets the model turns. No network: ``ikigai ask --json`` runs a loop of that many calls of
a real shell tool printing 3 kB, against the fake server the tests use
(``tests/support/window.py``), which charges each request it receives (the compaction's
summarising ones too) by the provider's documented caching rules (tokens estimated as 4
bytes each of the JSON sent, in the order the API reads the prompt):

- Anthropic (docs.claude.com, "Prompt caching"): tools, then system, then messages; a
  prefix is written at each ``cache_control`` block of at least 1024 tokens (Sonnet's
  minimum), and read from the longest earlier-written prefix found at a mark or in the
  20 blocks before it; reads cost 0.1x, 5-minute writes 1.25x the input price.
- OpenAI (platform.openai.com, "Prompt caching"; Chat Completions and Responses):
  automatic for prompts of 1024 tokens or more; the longest prefix (in whole tools,
  instructions and messages or input items here) shared with an earlier request of the
  same ``prompt_cache_key`` is read, in 128-token steps; reads at the model's
  cached-input price.

(Gemini is left out: its implicit caching has no documented rule to charge by.)

Four runs per wire: **neither** (the baseline: no cache, the full history: ``prune_after``
past the loop, a window too big to fill); **caching** (the same, the server caching);
**pruning** (the server caching nothing; the defaults, ``prune_after`` 10 and ``compact_at``
0.8, under a window the loop outgrows, so both prune and compact); **both**. The cost is
what ikigai reports (``ask --json``, genai-prices: claude-sonnet-4-5, gpt-4.1), checked
against the fake's own count; the ratios are against **neither** in the same run.
Targets: with caching, cached share of input >= 90 % on Anthropic's wire, >= 80 % on
OpenAI's; pruning and compaction send <= 85 % of the baseline's input tokens.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from click.testing import CliRunner  # noqa: E402

from ikigai_core.cli import cli  # noqa: E402
from ikigai_core.conversation import Usage  # noqa: E402
from ikigai_core.prices import cost_of  # noqa: E402
from tests.support.window import WindowModel  # noqa: E402

TURNS = int(os.environ.get("IKIGAI_BENCH_TURNS", "30"))
WINDOW = 16_000
"""The window of the pruning rows: the loop's full history outgrows it by turn 20, and
with pruning it still fills its 80 % (2 or 3 compactions in 30 turns)."""
MIN_TOKENS = 1024
LOOKBACK = 20
OUTPUT_TOKENS = 60
"""Output tokens each answer is charged for."""
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1"}
WIRES = {"anthropic": ("anthropic", None), "openai-chat": ("openai", "chat"),
         "openai-responses": ("openai", "responses")}
"""Each wire measured: its provider, and OpenAI's ``OPENAI_WIRE``."""
KEYS = {"anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
CACHED_SHARE = {"anthropic": 0.90, "openai": 0.80}
TOKENS_TARGET = 0.85
TOOL = """\
#!/bin/sh
if [ "$1" = --schema ]; then
  echo '{"name": "big", "description": "prints 3 kB", "parameters": {"type": "object"}}'
  exit 0
fi
cat >/dev/null
printf '{"out": "'; head -c 3000 /dev/zero | tr '\\0' a; printf '"}\\n'
"""


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
        content = message["content"]
        content = content if isinstance(content, list) else [{"type": "text", "text": content}]
        found += [{"role": message["role"], **block} for block in content]
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
        parts = [*body.get("tools", ()), *([body["instructions"]] if "instructions" in body
                                           else []),
                 *body.get("messages", body.get("input", ()))]
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


@dataclass
class Meter:
    """Charges each request by ``provider``'s caching rules (or, without ``caching``, as
    a provider caching nothing would), and adds up what it charged."""

    provider: str
    caching: bool
    total: Usage = field(default_factory=Usage)
    cost: float = 0.0
    """US dollars, each request priced apart (as a provider bills: genai-prices' tiers
    depend on one request's tokens, so pricing the total would be wrong)."""
    requests: int = 0

    def __post_init__(self) -> None:
        cache = AnthropicCache() if self.provider == "anthropic" else OpenAICache()
        self._charge: Callable[[dict[str, Any]], Usage] = cache.charge

    def charge(self, body: dict[str, Any]) -> Usage:
        """The usage of one request, counted in :attr:`total`."""
        usage = self._charge(body)
        if not self.caching:
            usage = Usage(usage.input_tokens, usage.output_tokens)
        self.total += usage
        self.cost += cost_of(self.provider, MODELS[self.provider], usage) or math.nan
        self.requests += 1
        return usage


@dataclass
class Row:
    """One run: what the fake charged, in how many requests, and what ikigai reported."""

    usage: Usage
    requests: int
    compactions: int
    cost: float


def loop(wire: str, *, caching: bool, pruning: bool) -> Row:
    """A ``TURNS``-turn loop of ``ikigai ask --json`` on ``wire`` (of :data:`WIRES`)."""
    provider, openai_wire = WIRES[wire]
    home = Path(tempfile.mkdtemp(prefix="ikigai-bench-"))
    (home / "tools").mkdir()
    tool = home / "tools" / "big-tool"
    tool.write_text(textwrap.dedent(TOOL))
    tool.chmod(0o755)
    settings = {"context_window": WINDOW} if pruning else {"context_window": 10**9,
                                                          "prune_after": 10**6}
    (home / "config.json").write_text(json.dumps(settings))
    meter = Meter(provider, caching)
    model = WindowModel(provider, 10**9, [[("big", {})]] * TURNS + ["Done."],
                        charge=meter.charge, wire=openai_wire)
    key, base = KEYS[provider]
    environ = {"IKIGAI_HOME": str(home), key: "sk-bench", base: model.url,
               **({"OPENAI_WIRE": openai_wire} if openai_wire else {})}
    try:
        result = CliRunner().invoke(cli, [
            "ask", "--json", "--yes", "--no-stream", "--provider", provider, "--model",
            MODELS[provider], "--max-turns", str(TURNS + 5), "go"], env=environ)
    finally:
        model.close()
    if result.exit_code != 0:
        raise SystemExit(f"the loop failed: {result.stderr}")
    cost = json.loads(result.stdout)["cost"]
    if cost is None or not abs(cost - meter.cost) < 1e-9:
        raise SystemExit(f"ikigai reported ${cost}, the fake charged ${meter.cost}")
    return Row(meter.total, meter.requests, len(model.summaries), cost)


ROWS = {"neither": (False, False), "caching only": (True, False),
        "pruning+compaction": (False, True), "both": (True, True)}


def main() -> None:
    """Print the table; fail when a target is missed."""
    missed = []
    print(f"{TURNS}-turn tool loop, 3 kB results; pruning rows: defaults under a "
          f"{WINDOW:,}-token window")
    print(f"{'wire / model':27} {'run':19} {'input sent':>11} {'cached':>9} {'written':>8} "
          f"{'output':>7} {'cost USD':>9} {'cost x':>7} {'tokens x':>8}  requests")
    for wire, (provider, _) in WIRES.items():
        model = MODELS[provider]
        rows = {name: loop(wire, caching=c, pruning=p) for name, (c, p) in ROWS.items()}
        base = rows["neither"]
        for name, row in rows.items():
            usage = row.usage
            print(f"{wire + ' ' + model:27} {name:19} {usage.input_tokens:>11,} "
                  f"{usage.cache_read_tokens:>9,} {usage.cache_write_tokens:>8,} "
                  f"{usage.output_tokens:>7,} {row.cost:>9.4f} {row.cost / base.cost:>7.2f} "
                  f"{usage.input_tokens / base.usage.input_tokens:>8.2f}  {row.requests} "
                  f"({row.compactions} summaries)", flush=True)
        cached = rows["caching only"].usage
        share = cached.cache_read_tokens / cached.input_tokens
        pruned = rows["pruning+compaction"].usage.input_tokens / base.usage.input_tokens
        print(f"{'':27} cached share with caching {share:.1%} (target >= "
              f"{CACHED_SHARE[provider]:.0%}); pruning sends {pruned:.2f} of the tokens "
              f"(target <= {TOKENS_TARGET})")
        if share < CACHED_SHARE[provider]:
            missed.append(f"{wire} cached share")
        if pruned > TOKENS_TARGET:
            missed.append(f"{wire} pruning")
    if missed:
        raise SystemExit(f"under target: {', '.join(missed)}")


if __name__ == "__main__":
    main()
