"""Settings: defaults < ``$IKIGAI_HOME/config.json`` < environment variables."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from ikigai_core.errors import ConfigError


def ikigai_home(environ: Mapping[str, str] = os.environ) -> Path:
    """``$IKIGAI_HOME``, default ``~/.ikigai``."""
    home = environ.get("IKIGAI_HOME")
    return Path(home).expanduser() if home else Path.home() / ".ikigai"


@dataclass(frozen=True)
class Settings:
    """Every setting, with its default. README.md documents each key."""

    tool_timeout: float = 30.0
    tool_max_output: int = 64 * 1024
    schema_timeout: float = 1.0
    schema_max_bytes: int = 8 * 1024
    provider: str | None = None
    model: str | None = None
    max_turns: int = 25


ENV_VARS = {
    "tool_timeout": "IKIGAI_TOOL_TIMEOUT",
    "tool_max_output": "IKIGAI_TOOL_MAX_OUTPUT",
    "schema_timeout": "IKIGAI_SCHEMA_TIMEOUT",
    "schema_max_bytes": "IKIGAI_SCHEMA_MAX_BYTES",
    "provider": "IKIGAI_PROVIDER",
    "model": "IKIGAI_MODEL",
    "max_turns": "IKIGAI_MAX_TURNS",
}


def _coerce(key: str, value: Any, kind: type, origin: str) -> Any:
    if kind is str:
        if isinstance(value, str) and value:
            return value
    elif isinstance(value, str):
        try:
            return _coerce(key, json.loads(value), kind, origin)
        except ValueError:
            pass
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < math.inf:
        if kind is float or float(value).is_integer():
            return kind(value)
    expected = "a non-empty string" if kind is str else f"a positive {kind.__name__}"
    raise ConfigError(f"{origin}: '{key}' must be {expected}, got {value!r}; fix or remove it")


def load_settings(home: Path, environ: Mapping[str, str] = os.environ) -> Settings:
    """Read ``home/config.json`` and the environment; a bad value is one clear error."""
    path = home / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}; check IKIGAI_HOME") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix or delete it") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object; fix or delete it")
    kinds = {f.name: type(f.default) if f.default is not None else str for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in kinds:
            raise ConfigError(f"{path}: unknown key '{key}'; known keys: {', '.join(kinds)}")
        values[key] = _coerce(key, value, kinds[key], str(path))
    for key, var in ENV_VARS.items():
        if environ.get(var):
            values[key] = _coerce(key, environ[var], kinds[key], f"environment variable {var}")
    return Settings(**values)
