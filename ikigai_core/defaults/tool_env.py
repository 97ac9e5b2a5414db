"""Default plugin: which environment variables reach a tool process (``tool_env``).

Modelled on Codex's ``shell_environment_policy``. Three steps, in order:

1. ``inherit``: ``all`` (default) starts from ikigai's whole environment, ``core`` from
   :data:`CORE_VARS` only, ``none`` from nothing;
2. ``exclude``: remove every variable matching one of these globs, and always every
   provider's API-key variable (the four well-known ones and each installed provider's
   ``api_key_env``), and any other variable holding the same value as one of them (an
   mcp.json ``env`` entry ``"K": "${OPENAI_API_KEY}"``, issue 21);
3. ``include``: add back every variable of ikigai's environment matching one of these
   globs, even one step 1 or 2 left out (include ``OPENAI_API_KEY`` to hand a tool the key).

Globs are case-sensitive ``fnmatch`` patterns. ``IKIGAI_MAX_OUTPUT_BYTES`` (the protocol's
budget), ``IKIGAI_SHELL`` (the bash tool's shell) and the agents API's ``IKIGAI_API`` and
``IKIGAI_API_TOKEN`` (issue 25) are always kept. A tool keeps its own
credentials unless they are excluded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ikigai_core.entrypoints import Found, remembered
from ikigai_core.errors import ConfigError, PluginError
from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.lifecycle import CallContext, ProcessSpec

KNOWN_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Provider keys removed even when no provider plugin declaring them is installed."""

CORE_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "LANG", "LANGUAGE",
             "LC_*", "TERM", "TZ", "TMPDIR", "TEMP", "TMP")
"""What ``inherit: core`` keeps: enough for a shell and a locale."""

ALWAYS_KEPT = ("IKIGAI_MAX_OUTPUT_BYTES", "IKIGAI_SHELL", "IKIGAI_API", "IKIGAI_API_TOKEN")
MIN_KEY_LENGTH = 8
"""A key variable's value shorter than this is no secret worth matching by value: ``x``
would take every variable set to ``x`` with it (the transport's redaction has the same rule)."""
_WILDCARDS = frozenset("*?[")
INHERIT = ("all", "core", "none")


@hookimpl
def ikigai_tool_process(spec: ProcessSpec, context: CallContext) -> None:
    """Replace the tool's environment with what the ``tool_env`` policy lets through."""
    spec.env = filter_env(spec.env, context.settings.tool_env,
                          provider_key_vars(context.home / "cache"), context.environ)


def filter_env(env: Mapping[str, str], policy: Mapping[str, Any], key_vars: Iterable[str],
               keys_from: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` after the three steps of ``policy`` (see the module docstring); the keys'
    values are those of ``keys_from`` (ikigai's own environment; default ``env``)."""
    inherit, exclude, include = _read(policy)
    base = {"all": ("*",), "core": CORE_VARS, "none": ()}[inherit]
    key_vars = tuple(key_vars)
    removed = (*key_vars, *exclude)
    keys = _withheld_values(env if keys_from is None else keys_from, key_vars, include)
    kept = {name: value for name, value in env.items()
            if _matches(name, base) and not _matches(name, removed) and value not in keys}
    kept.update((name, value) for name, value in env.items()
                if _matches(name, (*include, *ALWAYS_KEPT)))
    return kept


def _withheld_values(environ: Mapping[str, str], key_vars: Iterable[str],
                     include: Iterable[str]) -> frozenset[str]:
    """The values of the key variables ``include`` does not name (long enough to be keys)."""
    return frozenset(value for var in key_vars if not _matches(var, include)
                     for value in (environ.get(var, ""),) if len(value) >= MIN_KEY_LENGTH)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    """Whether ``name`` matches one of the globs. One without a wildcard is compared as it
    is, and ``*`` matches all: fnmatch would compile a regular expression for each (a key
    variable's name, the default ``inherit``) on every ``tool run``."""
    return any(name == pattern if _WILDCARDS.isdisjoint(pattern)
               else pattern == "*" or fnmatchcase(name, pattern) for pattern in patterns)


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

    Once per process; remembered in ``cache_dir`` beside the entry points and under their
    key, plus the provider plugins' source files (an editable install changes those alone),
    so a warm run imports no provider. Without ``cache_dir``, asked every time.
    """
    if cache_dir is None:
        found = _declared_key_vars(None).value
    else:
        found = remembered(cache_dir / "provider-key-vars.json",
                           lambda: _declared_key_vars(cache_dir), _names)
    return tuple(dict.fromkeys([*KNOWN_KEY_VARS, *found]))


def _names(value: Any) -> list[str]:
    """The cached list of variable names, or ``TypeError`` for anything else."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise TypeError("not a list of variable names")
    return value


def _declared_key_vars(cache_dir: Path | None) -> Found:
    """Every installed provider's ``api_key_env``, asked of a plugin manager of our own
    (blocking ignored: a blocked provider's key is still kept from tools), with the files
    that declare them. A plugin that fails is left to the invocation's own manager to report;
    while one does, the answer is not remembered (its key may be missing)."""
    from ikigai_core.notices import Notices
    from ikigai_core.plugins import get_plugin_manager
    from ikigai_core.providers import collect_providers

    notices = Notices()
    pm = get_plugin_manager(environ={}, cache_dir=cache_dir, notices=notices)
    try:
        providers = collect_providers(pm, notices)
    except PluginError:  # two providers with one name: the invocation reports it
        return Found([], keep=False)
    found = [var for provider in providers.values() for var in provider.api_key_env
             if isinstance(var, str)]
    modules = [_module_name(impl.plugin)
               for impl in pm.hook.ikigai_provider_serializers.get_hookimpls()]
    modules += [cls.__module__ for provider in providers.values()
                for cls in type(provider).__mro__]
    files = [getattr(sys.modules.get(name), "__file__", None) for name in modules]
    return Found(found, sorted({file for file in files if file}), keep=not notices)


def _module_name(plugin: Any) -> str:
    """The module a plugin is, or the one its class is defined in."""
    return plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
