"""Settings: defaults < ``$IKIGAI_HOME/config.json`` < environment variables."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ikigai_core.errors import ConfigError
from ikigai_core.record import Record, field_defaults
from ikigai_core.statefiles import parse_json, read_state
from ikigai_core.tools import EMPTY
from ikigai_toolkit.jsonio import loads


class Settings(Record):
    """Every setting, with its default. README.md documents each key.

    A value that was configured wrongly is refused only where it is read: a bad
    ``IKIGAI_MAX_TURNS`` stops ``chat``, not ``tool list``.
    """

    tool_timeout: float = 30.0
    tool_max_output: int = 64 * 1024
    schema_timeout: float = 1.0
    schema_max_bytes: int = 8 * 1024
    provider: str | None = None
    model: str | None = None
    max_turns: int = 25
    max_cost: float | None = None
    """US dollars a session may spend (``None``: no cap); see :mod:`ikigai_core.budget`."""
    reasoning: str | None = None
    """How hard the model thinks: ``low``, ``medium``, ``high`` (``None``: the model's own
    default); see :meth:`~ikigai_core.providers.Provider.with_reasoning`."""
    show_thinking: bool = True
    """Whether chat shows the model's thinking, dimmed (``ask`` only with --show-thinking)."""
    sandbox: str = "off"
    sandbox_network: bool = False
    tool_env: Mapping[str, Any] = EMPTY
    system_prompt: str | None = None
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    log: bool = True
    sessions_url: str | None = None
    """Where the session log is kept (``None``: ``sqlite:///$IKIGAI_HOME/sessions.db``)."""
    shell: str | None = None
    """The shell the bash tool runs commands in (``None``: ``/bin/sh``); see :data:`CHOICES`."""
    context_window: int | None = None
    """The model's context window in tokens (``None``: from the model table, see
    :func:`ikigai_core.context.window_of`)."""
    compact_at: float = 0.8
    """The share of the window a request may fill before the conversation is compacted."""
    compact_keep: int = 2
    """The latest prompts a compaction keeps verbatim (fewer when they fill too much)."""
    compact_instructions: str | None = None
    """What a compaction's summary should keep, added to its instructions."""
    prune_after: int = 10
    """Model turns after which a tool's result is replaced by a placeholder (in steps)."""
    web: Mapping[str, Any] = EMPTY
    """The web tools' settings (ikigai-tools-web checks the keys: docs/web.md)."""
    providers: Mapping[str, Any] = EMPTY
    """Each provider's own settings by its name (``{"openai": {"wire": "chat"}}``); a
    provider names the keys it takes (:attr:`~ikigai_core.providers.Provider.settings_env`)."""
    agents_max_running: int = 4
    """Sub-agents running at once per ikigai process; further forks queue (docs/agents.md)."""
    agents_max_depth: int = 2
    """How deep sub-agents nest: the root agent is depth 0, so 2 allows grandchildren."""
    agents_budget_tokens: int = 200_000
    """A child's token budget when its fork names none (input plus output)."""
    agents_budget_turns: int = 25
    """A child's model turns when its fork names none."""
    agents_budget_seconds: float = 600.0
    """A child's wall-clock seconds when its fork names none."""
    agents_api_sandbox: bool = True
    """Bind the agents API's socket into the sandbox, so tools under bubblewrap can fork."""
    agents_api_mcp: bool = False
    """Pass ``IKIGAI_API`` and a token to MCP servers too (only tool processes get them)."""
    problems: Mapping[str, str] = EMPTY
    """Why each wrongly configured setting was refused, by name; reading it raises that."""

    def __getattribute__(self, name: str) -> Any:
        problems = object.__getattribute__(self, "problems")
        if name in problems:
            raise ConfigError(problems[name])
        return object.__getattribute__(self, name)

    def verify(self) -> None:
        """Refuse now the first wrongly configured setting (``ask`` and ``chat`` call this
        before the model is asked: a bad tool setting must not cost a paid turn first)."""
        if self.problems:
            raise ConfigError(next(iter(self.problems.values())))


ENV_VARS = {
    "tool_timeout": "IKIGAI_TOOL_TIMEOUT",
    "tool_max_output": "IKIGAI_TOOL_MAX_OUTPUT",
    "schema_timeout": "IKIGAI_SCHEMA_TIMEOUT",
    "schema_max_bytes": "IKIGAI_SCHEMA_MAX_BYTES",
    "provider": "IKIGAI_PROVIDER",
    "model": "IKIGAI_MODEL",
    "max_turns": "IKIGAI_MAX_TURNS",
    "max_cost": "IKIGAI_MAX_COST",
    "reasoning": "IKIGAI_REASONING",
    "show_thinking": "IKIGAI_SHOW_THINKING",
    "sandbox": "IKIGAI_SANDBOX",
    "sandbox_network": "IKIGAI_SANDBOX_NETWORK",
    "log": "IKIGAI_LOG",
    "sessions_url": "IKIGAI_SESSIONS_URL",
    "shell": "IKIGAI_SHELL",
    "agents_max_running": "IKIGAI_AGENTS_MAX_RUNNING",
    "agents_max_depth": "IKIGAI_AGENTS_MAX_DEPTH",
    "agents_budget_tokens": "IKIGAI_AGENTS_BUDGET_TOKENS",
    "agents_budget_turns": "IKIGAI_AGENTS_BUDGET_TURNS",
    "agents_budget_seconds": "IKIGAI_AGENTS_BUDGET_SECONDS",
    "context_window": "IKIGAI_CONTEXT_WINDOW",
    "compact_at": "IKIGAI_COMPACT_AT",
}

AT_MOST = {"compact_at": 1.0}
"""Numeric settings with a largest value."""


LIST_KEYS = ("enabled_tools", "disabled_tools")
"""Settings holding names: a JSON list of strings, or one comma-separated string."""

NUMBERS = {"max_cost": float, "context_window": int}
"""Settings without a default that hold a number, and its type."""

CHOICES = {"sandbox": ("off", "read-only", "workspace-write"),
           "reasoning": ("low", "medium", "high"),
           "shell": ("sh", "bash", "zsh", "fish", "pwsh")}
"""Settings whose value is one of a few words."""


def _coerce(key: str, value: Any, kind: type, origin: str) -> Any:
    if kind is tuple:
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            return tuple(value)
        raise ConfigError(f"{origin}: '{key}' must be a list of tool names, got {value!r}; "
                          "fix or remove it")
    if kind is str:
        if isinstance(value, str) and value and value in CHOICES.get(key, (value,)):
            return value
    elif kind in (bool, dict):
        if isinstance(value, kind):
            return value
        if isinstance(value, str) and kind is bool and value in ("true", "false"):
            return value == "true"
    elif isinstance(value, str):
        try:
            return _coerce(key, loads(value.encode()), kind, origin)
        except ValueError:
            pass
    elif (isinstance(value, (int, float)) and not isinstance(value, bool)
          and 0 < value <= AT_MOST.get(key, value) < math.inf):
        if kind is float or float(value).is_integer():
            return kind(value)
    expected = {str: "a non-empty string", bool: "true or false",
                dict: "a JSON object"}.get(kind, f"a positive {kind.__name__}")
    if key in AT_MOST:
        expected += f" up to {AT_MOST[key]:g}"
    if key in CHOICES:
        expected = f"one of {', '.join(CHOICES[key])}"
    raise ConfigError(f"{origin}: '{key}' must be {expected}, got {value!r}; fix or remove it")


def load_settings(home: Path, environ: Mapping[str, str] = os.environ) -> Settings:
    """Read ``home/config.json`` (empty: no settings) and the environment; an unreadable
    file is one clear error, a bad value one when its setting is read."""
    path = home / "config.json"
    if not home.is_dir() and home.exists():  # read_state takes a file's child for none
        raise ConfigError(f"cannot read {path}: {home} is not a directory; set IKIGAI_HOME "
                          "to a folder, or move that file away")
    raw = read_state(path) or b""
    try:
        data = parse_json(raw) if raw.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix or delete it") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object; fix or delete it")
    kinds = {name: tuple if name in LIST_KEYS else dict if isinstance(default, Mapping)
             else type(default) if default is not None else NUMBERS.get(name, str)
             for name, default in field_defaults(Settings).items() if name != "problems"}
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    given = [(key, value, str(path)) for key, value in data.items()]
    given += [(key, environ[var], f"environment variable {var}")
              for key, var in ENV_VARS.items() if environ.get(var)]
    for key, value, origin in given:
        if key not in kinds:
            raise ConfigError(f"{path}: unknown key '{key}'; known keys: {', '.join(kinds)}")
        try:
            values[key] = _coerce(key, value, kinds[key], origin)
            problems.pop(key, None)
        except ConfigError as exc:
            problems[key] = str(exc)
    return Settings(**values, problems=problems)
