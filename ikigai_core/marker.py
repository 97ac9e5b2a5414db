"""The ``hookimpl`` marker, in a module of its own: ikigai's own plugins import it from here,
not from the package, whose ``__init__`` names every public module (an import circle)."""

from __future__ import annotations

import pluggy

hookimpl = pluggy.HookimplMarker("ikigai")
"""Mark a function as an implementation of an ikigai hook."""
