"""How the CLI shows what a conversation spent: tokens, the prompt cache's share, dollars."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ikigai_core.conversation import Usage


def dollars(cost: float | None) -> str:
    """``$0.0123`` (four decimals under a dollar, two above); ``$?`` for an unknown price."""
    if cost is None:
        return "$?"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


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
