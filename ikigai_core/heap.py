"""What a chat keeps for its whole life, moved out of the cyclic collector's sight.

``bin/ikigai`` freezes what the command line imported before the command runs (the start-up
ledger). A chat imports more as it settles: httpx and the provider's client, genai-prices
and its price table (44,000 objects), the front end. Every full collection then walks all
of it again: 46 ms of processor with a chat's 70,000 tracked objects, holding the
interpreter lock, and several times that in every thread's wall time while sixteen
sub-agents' tools share two cores. :func:`settle` freezes it too, only in a process whose
program froze its own start (``gc.get_freeze_count()``), so an embedding program's choice
stands.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Freeze what the process holds now, if its program froze its start-up: what is loaded
    by now lives until exit (garbage frozen with it is never freed: call once, after the
    warm-ups)."""
    if gc.get_freeze_count():
        gc.freeze()
