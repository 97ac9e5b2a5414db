"""ikigai: give LLM agents tools that are external executables.

Everything a plugin author needs is importable from here and listed in ``__all__``
(docs/plugins.md, "Public names", says what each is for): the ``hookimpl`` marker,
the tool-source types and :class:`DirectorySource`, the skill-source types and
:class:`SkillDirectory`, the lifecycle types, the outcome, the settings, the
:class:`Provider` base class with the conversation types and the wire helpers a
provider's parser uses, and the errors. Each name is spelled three times (the
``TYPE_CHECKING`` imports, :data:`_LAZY`, ``__all__``); tests/test_public_names.py
checks them against each other.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.attachments import Attachment
    from ikigai_core.budget import Budget, BudgetExceeded
    from ikigai_core.cancel import Cancelled
    from ikigai_core.config import Settings
    from ikigai_core.conversation import (
        AssistantMessage,
        Conversation,
        TextDelta,
        ToolCall,
        ToolResult,
        ToolResultsMessage,
        Usage,
        UserMessage,
    )
    from ikigai_core.decision import CallDecision
    from ikigai_core.errors import IkigaiError, KeyRejected, ProviderError
    from ikigai_core.grants import Grants
    from ikigai_core.lifecycle import (
        CallContext,
        CallRecord,
        ProcessSpec,
        ToolCallRequest,
    )
    from ikigai_core.outcome import ToolOutcome
    from ikigai_core.provider_hook import provider_hook
    from ikigai_core.providers import Provider, ProviderRequest, ToolFit
    from ikigai_core.session import Session, SessionEvents
    from ikigai_core.skills import Skill, SkillDirectory, SkillScan, SkillSource, SkippedSkill
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.statefiles import read_cache
    from ikigai_core.tool_directory import DirectorySource
    from ikigai_core.tools import (
        SkippedTool,
        Tool,
        ToolCandidate,
        ToolRunner,
        ToolScan,
        ToolSource,
    )
    from ikigai_core.wire import (
        TurnBuilder,
        http_error_message,
        load_object,
        parse_tool_call,
        stream_error,
        stream_incomplete,
    )

_LAZY = {
    "App": "ikigai_core.app",
    "Cancelled": "ikigai_core.cancel",
    **dict.fromkeys(("Session", "SessionEvents"), "ikigai_core.session"),
    "Settings": "ikigai_core.config",
    **dict.fromkeys(("AssistantMessage", "Conversation", "TextDelta", "ToolCall", "ToolResult",
                     "ToolResultsMessage", "Usage", "UserMessage"), "ikigai_core.conversation"),
    "DirectorySource": "ikigai_core.tool_directory",
    **dict.fromkeys(("IkigaiError", "KeyRejected", "ProviderError"), "ikigai_core.errors"),
    "CallDecision": "ikigai_core.decision",
    "Grants": "ikigai_core.grants",
    **dict.fromkeys(("CallContext", "CallRecord", "ProcessSpec", "ToolCallRequest"),
                    "ikigai_core.lifecycle"),
    "Attachment": "ikigai_core.attachments",
    **dict.fromkeys(("Budget", "BudgetExceeded"), "ikigai_core.budget"),
    "ToolOutcome": "ikigai_core.outcome",
    "provider_hook": "ikigai_core.provider_hook",
    **dict.fromkeys(("Provider", "ProviderRequest", "ToolFit"), "ikigai_core.providers"),
    **dict.fromkeys(("Skill", "SkillDirectory", "SkillScan", "SkillSource", "SkippedSkill"),
                    "ikigai_core.skills"),
    "ServerSentEvent": "ikigai_core.sse",
    "read_cache": "ikigai_core.statefiles",
    **dict.fromkeys(("SkippedTool", "Tool", "ToolCandidate", "ToolRunner", "ToolScan",
                     "ToolSource"), "ikigai_core.tools"),
    **dict.fromkeys(("TurnBuilder", "http_error_message", "load_object", "parse_tool_call",
                     "stream_error", "stream_incomplete"), "ikigai_core.wire"),
}
"""Every public name but :data:`hookimpl`, with the module it lives in. A name's module
loads on first use, so a plugin that imports ``hookimpl`` (every plugin) pays for no
dataclass it does not touch, and a warm ``ikigai tool list`` imports only what it runs."""


def __getattr__(name: str) -> Any:
    """Load a name of :data:`_LAZY` from its module, once."""
    if name not in _LAZY:
        raise AttributeError(f"module 'ikigai_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "App",
    "AssistantMessage",
    "Attachment",
    "Budget",
    "BudgetExceeded",
    "CallContext",
    "CallDecision",
    "CallRecord",
    "Cancelled",
    "Conversation",
    "DirectorySource",
    "Grants",
    "IkigaiError",
    "KeyRejected",
    "ProcessSpec",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "ServerSentEvent",
    "Session",
    "SessionEvents",
    "Settings",
    "Skill",
    "SkillDirectory",
    "SkillScan",
    "SkillSource",
    "SkippedSkill",
    "SkippedTool",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallRequest",
    "ToolCandidate",
    "ToolFit",
    "ToolOutcome",
    "ToolResult",
    "ToolResultsMessage",
    "ToolRunner",
    "ToolScan",
    "ToolSource",
    "TurnBuilder",
    "Usage",
    "UserMessage",
    "__version__",
    "hookimpl",
    "http_error_message",
    "load_object",
    "parse_tool_call",
    "provider_hook",
    "read_cache",
    "stream_error",
    "stream_incomplete",
]
