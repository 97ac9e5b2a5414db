"""How the CLI shows what a conversation spent: tokens, the prompt cache's share, dollars."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikigai_core.conversation import Usage


def dollars(cost: float | None) -> str:
    """``$0.0123`` (four decimals under a dollar, two above, ``<$0.0001`` for less but
    not nothing); ``$?`` for an unknown price."""
    if cost is None:
        return "$?"
    if 0 < cost < 0.0001:
        return "<$0.0001"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


def tokens_words(row: Mapping[str, Any], sep: str = "  ") -> str:
    """A recorded turn's or conversation's ``row`` (its token counts and cost) as
    ``15 tokens``, then ``(cache 87%)`` once the provider reported a prompt cache (the
    share of the input read from it), then, after ``sep``, the cost when it is known."""
    given = row["input_tokens"]
    words = f"{given + row['output_tokens']} tokens"
    if (row.get("cache_read_tokens") or row.get("cache_write_tokens")) and given:
        words += f" (cache {row['cache_read_tokens'] / given:.0%})"
    cost = row.get("cost")
    return words if cost is None else f"{words}{sep}{dollars(cost)}"


def spend_words(turn: Usage, total: Usage, cost: float | None) -> list[str]:
    """The status line's words for tokens of the last prompt and of the chat, the share of
    the chat's input read from the prompt cache (once the provider reported a cache), and
    the chat's cost (when a price is known and it is more than nothing)."""
    words = [f"tokens: turn {turn.total:,} · chat {total.total:,}"]
    if (total.cache_read_tokens or total.cache_write_tokens) and total.cache_hit is not None:
        words.append(f"cache {total.cache_hit:.0%}")
    if cost:
        words.append(dollars(cost))
    return words
