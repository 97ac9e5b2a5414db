"""Stdlib-only pieces shared by ikigai's core, its built-in tools and tool authors; this
package imports neither pluggy nor ikigai_core.

For tool authors: ``from ikigai_toolkit import tool`` (see :mod:`ikigai_toolkit.author`).
Names load on first use, so importing the package costs a tool's start-up nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ikigai_toolkit.author import ToolError, tool

__all__ = ["ToolError", "tool"]

_LAZY = {"tool": "ikigai_toolkit.author", "ToolError": "ikigai_toolkit.author"}


def __getattr__(name: str) -> object:
    """Import a public name's module on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'ikigai_toolkit' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_LAZY[name]), name)
