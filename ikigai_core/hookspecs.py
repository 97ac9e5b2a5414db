"""Every hook ikigai calls. Plugins implement them with :data:`ikigai_core.hookimpl`.

Hooks are called with keyword arguments only; an implementation may accept any
subset of them, so adding an argument later breaks no plugin.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pluggy

if TYPE_CHECKING:
    from ikigai_core.outcome import ToolOutcome
    from ikigai_core.providers import ProviderSerializer
    from ikigai_core.tools import ToolSource

hookspec = pluggy.HookspecMarker("ikigai")


# -- Tool sources -------------------------------------------------------------


@hookspec
def ikigai_tool_sources(home: Path, cwd: Path) -> Sequence[ToolSource]:
    """Return the tool sources this plugin contributes.

    Called at every discovery (start-up, ``ikigai refresh``, ``/refresh``). Every
    source's tools are merged into one registry; on a name clash the source with the
    higher ``precedence`` wins (system 0 < user 10 < project 20).

    :param home: the ikigai home directory (``$IKIGAI_HOME``, default ``~/.ikigai``).
    :param cwd: the directory ikigai runs in.
    :returns: zero or more sources, never ``None``.
    """


# -- Providers ----------------------------------------------------------------


@hookspec
def ikigai_provider_serializers() -> Sequence[ProviderSerializer]:
    """Return the LLM providers this plugin contributes.

    Called once when ikigai first needs a provider (``ikigai request``, ``ask``,
    ``chat``, ``plugins``). Each provider's ``name`` must be unique across plugins.

    :returns: zero or more objects following :class:`ikigai_core.providers.ProviderSerializer`.
    """


# -- Results ------------------------------------------------------------------


@hookspec(firstresult=True)
def ikigai_wrap_result(outcome: ToolOutcome) -> Mapping[str, Any] | None:
    """Turn the outcome of one tool call into the JSON object the model receives.

    Called after every tool call, including calls that never started a process
    (unknown tool, invalid arguments). The default implementation (``ikigai_core.envelope``)
    runs last and builds the spec's envelope. Stops at first non-None result.

    :param outcome: what happened: the tool's result, or the error and the process's output.
    :returns: a JSON-serializable object, or ``None`` to leave the decision to the next plugin.
    """
