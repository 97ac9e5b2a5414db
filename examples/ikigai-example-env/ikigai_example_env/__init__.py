"""Example ikigai plugin: the process hook and the system-prompt hook.

With ``IKIGAI_ENV_SCRUB`` set to comma-separated name suffixes (``_API_KEY,_TOKEN``),
``ikigai_tool_process`` removes every variable whose name ends with one of them from
every tool process (calls and ``--schema`` alike), and ``ikigai_system_prompt`` tells
the model so. Installed, it does nothing until the variable is set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core import hookimpl

if TYPE_CHECKING:  # types only: a plugin's module should cost nothing until a hook runs
    from ikigai_core import ProcessSpec

SCRUB_ENV = "IKIGAI_ENV_SCRUB"


def _suffixes(environ: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(part.strip() for part in environ.get(SCRUB_ENV, "").split(",") if part.strip())


@hookimpl
def ikigai_tool_process(spec: ProcessSpec) -> None:
    """Drop the variables ending with a scrubbed suffix from the tool's environment."""
    suffixes = _suffixes(spec.env)
    for name in [name for name in spec.env if suffixes and name.endswith(suffixes)]:
        del spec.env[name]


@hookimpl
def ikigai_system_prompt(cwd: Path) -> list[str]:
    """Say where tools run and what they cannot see."""
    suffixes = _suffixes(os.environ)
    if not suffixes:
        return []
    return [f"Tools run in {cwd}. Environment variables ending with {', '.join(suffixes)} "
            "are removed from every tool's environment: do not ask tools to read credentials."]
