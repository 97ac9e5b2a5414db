"""Default plugin: which environment variables reach a tool process (``tool_env``).

Modelled on Codex's ``shell_environment_policy``. Three steps, in order:

1. ``inherit``: ``all`` (default) starts from ikigai's whole environment, ``core`` from
   :data:`CORE_VARS` only, ``none`` from nothing;
2. ``exclude``: remove every variable matching one of these globs, and always every
   provider's API-key variable (the four well-known ones and each installed provider's
   ``api_key_env``);
3. ``include``: add back every variable of ikigai's environment matching one of these
   globs, even one step 1 or 2 left out (include ``OPENAI_API_KEY`` to hand a tool the key).

Globs are case-sensitive ``fnmatch`` patterns. ``IKIGAI_MAX_OUTPUT_BYTES`` (the protocol's
budget) is always kept. A tool keeps its own credentials unless they are excluded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core import hookimpl
from ikigai_core.errors import ConfigError, PluginError

if TYPE_CHECKING:
    from ikigai_core.lifecycle import CallContext, ProcessSpec

KNOWN_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Provider keys removed even when no provider plugin declaring them is installed."""

CORE_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "LANG", "LANGUAGE",
             "LC_*", "TERM", "TZ", "TMPDIR", "TEMP", "TMP")
"""What ``inherit: core`` keeps: enough for a shell and a locale."""

ALWAYS_KEPT = ("IKIGAI_MAX_OUTPUT_BYTES",)
INHERIT = ("all", "core", "none")


@hookimpl
def ikigai_tool_process(spec: ProcessSpec, context: CallContext) -> None:
    """Replace the tool's environment with what the ``tool_env`` policy lets through."""
    spec.env = filter_env(spec.env, context.settings.tool_env,
                          provider_key_vars(context.home / "cache"))


def filter_env(env: Mapping[str, str], policy: Mapping[str, Any],
               key_vars: Iterable[str]) -> dict[str, str]:
    """``env`` after the three steps of ``policy`` (see the module docstring)."""
    inherit, exclude, include = _read(policy)
    base = {"all": ("*",), "core": CORE_VARS, "none": ()}[inherit]
    removed = (*key_vars, *exclude)
    kept = {name: value for name, value in env.items()
            if _matches(name, base) and not _matches(name, removed)}
    kept.update((name, value) for name, value in env.items()
                if _matches(name, (*include, *ALWAYS_KEPT)))
    return kept


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _read(policy: Mapping[str, Any]) -> tuple[str, list[str], list[str]]:
    """``inherit``, ``exclude``, ``include`` of a ``tool_env`` object; a bad one is one error."""
    unknown = sorted(set(policy) - {"inherit", "exclude", "include"})
    if unknown:
        raise ConfigError(f"config.json: 'tool_env' has unknown key '{unknown[0]}'; "
                          "known keys: inherit, exclude, include")
    inherit = policy.get("inherit", "all")
    if inherit not in INHERIT:
        raise ConfigError(f"config.json: 'tool_env.inherit' must be one of {', '.join(INHERIT)}, "
                          f"got {inherit!r}")
    lists = []
    for key in ("exclude", "include"):
        patterns = policy.get(key, [])
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ConfigError(f"config.json: 'tool_env.{key}' must be a list of "
                              f"variable-name globs, got {patterns!r}")
        lists.append(patterns)
    return inherit, lists[0], lists[1]


@lru_cache(maxsize=1)
def provider_key_vars(cache_dir: Path | None = None) -> tuple[str, ...]:
    """The well-known key variables plus every installed provider's ``api_key_env``.

    Providers are found through a plugin manager of their own (blocking ignored: a blocked
    provider's key is still kept from tools; the entry points remembered in ``cache_dir``,
    as the invocation's manager does); one that fails is left to the invocation's own
    manager to report. Once per process: about 3 ms with a warm entry-point cache.
    """
    from ikigai_core.plugins import get_plugin_manager
    from ikigai_core.providers import collect_providers

    found = list(KNOWN_KEY_VARS)
    try:
        providers = collect_providers(get_plugin_manager(environ={}, cache_dir=cache_dir))
    except PluginError:  # two providers with one name: the invocation reports it
        providers = {}
    for provider in providers.values():
        found += [var for var in provider.api_key_env if isinstance(var, str)]
    return tuple(dict.fromkeys(found))
