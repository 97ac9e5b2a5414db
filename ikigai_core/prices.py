"""What a model turn costs in US dollars, from ``genai-prices`` (issue 26 §4).

``genai-prices`` (pydantic's maintained price table: input, output, cache reads and
cache writes per model and provider, with dated changes) is imported here only, when a
price is asked for: importing it costs 0.3-0.7 s, which no start-up path pays.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ikigai_core.conversation import Usage

_warming: list[threading.Thread] = []


def warm() -> None:
    """Start importing genai-prices in a daemon thread (once per process), so the first
    price a session asks for after its first answer does not wait for it: the import
    overlaps tool discovery and the first request. Mostly disk and pydantic set-up: 0.3 s
    on a quiet machine, 9 s measured on one loaded to 50 (``user`` 0.27 s of it)."""
    if "genai_prices" in sys.modules or _warming:
        return
    thread = threading.Thread(target=_import, name="ikigai-prices", daemon=True)
    _warming.append(thread)
    thread.start()


def warmed() -> None:
    """Wait for :func:`warm`'s import, if one was started."""
    for thread in list(_warming):
        thread.join()


def _import() -> None:
    try:
        import genai_prices  # noqa: F401
        import genai_prices.data  # noqa: F401 - the table itself, which the first price loads
    except Exception:  # noqa: BLE001 - cost_of's own import says what went wrong
        pass


def cost_of(provider: str, model: str, usage: Usage) -> float | None:
    """US dollars ``usage`` of ``model`` costs at ``provider`` (its plugin's name, which
    for the three bundled providers is genai-prices' id); ``None`` when no price is known
    for that model there."""
    from genai_prices import Usage as Counted
    from genai_prices import calc_price

    counted = Counted(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                      cache_read_tokens=usage.cache_read_tokens,
                      cache_write_tokens=usage.cache_write_tokens)
    try:
        return float(calc_price(counted, model, provider_id=provider).total_price)
    except LookupError:
        return None


SAMPLE_TOKENS = 1000
"""Tokens a per-million price is measured on: few enough to stay in a model's first price
tier (Gemini and Claude charge more past 200k tokens of prompt)."""


def per_million(provider: str, model: str) -> tuple[float, float] | None:
    """``model``'s price at ``provider`` in US dollars per million input and output tokens
    (a prompt's first tier), or ``None`` when no price is known."""
    from ikigai_core.conversation import Usage

    found = [cost_of(provider, model, usage) for usage in
             (Usage(input_tokens=SAMPLE_TOKENS), Usage(output_tokens=SAMPLE_TOKENS))]
    if found[0] is None or found[1] is None:
        return None
    scale = 1_000_000 / SAMPLE_TOKENS
    return found[0] * scale, found[1] * scale
