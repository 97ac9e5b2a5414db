"""ikigai: give LLM agents tools that are external executables.

The public API a plugin needs lives here: the ``hookimpl`` marker and the types
that hooks take and return. Everything else is reached through its module.
"""

from __future__ import annotations

import pluggy

from ikigai_core.errors import IkigaiError
from ikigai_core.lifecycle import (
    CallContext,
    CallDecision,
    CallRecord,
    ProcessSpec,
    ToolCallRequest,
    ToolRunner,
)
from ikigai_core.outcome import ToolOutcome
from ikigai_core.tools import SkippedTool, Tool, ToolCandidate, ToolScan, ToolSource

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("ikigai")
"""Mark a function as an implementation of an ikigai hook."""

__all__ = [
    "CallContext",
    "CallDecision",
    "CallRecord",
    "IkigaiError",
    "ProcessSpec",
    "ToolCallRequest",
    "ToolRunner",
    "SkippedTool",
    "Tool",
    "ToolCandidate",
    "ToolOutcome",
    "ToolScan",
    "ToolSource",
    "__version__",
    "hookimpl",
]
